using System;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    public sealed partial class Tool
    {
        /// <summary>
        /// A tool whose arguments are a .NET type instead of a hand-written JSON Schema
        /// (docs/behaviour.md §20): <see cref="Parameters"/> is <see cref="ToolSchema.For{T}"/>
        /// of <typeparamref name="TInput"/> (with <paramref name="strict"/>, its strict form,
        /// made by the core), checked by the core on every call; the arguments are then decoded
        /// into <typeparamref name="TInput"/> before <paramref name="execute"/> runs. A value that
        /// cannot be decoded is a tool input error (<c>Invalid tool input: &lt;pointer&gt;:
        /// &lt;reason&gt;</c>), which <c>OnError = "return-to-model"</c> sends back to the model.
        /// The result type <typeparamref name="TOutput"/> gives the output schema; results are
        /// written with the same JSON names. <paramref name="execute"/> null makes a manual
        /// tool. Set the other members (RequireApproval, OnError, Timeout, ...) with an object
        /// initializer.
        /// </summary>
        public static Tool FromType<TInput, TOutput>(string id, Func<TInput, RuntimeContext, Task<TOutput>> execute,
            string description = null, bool strict = false)
        {
            var tool = Typed<TInput>(id, description, strict);
            tool.OutputSchema = ValidatedOutput(AgentSdk.JsonSchema(ToolSchema.For<TOutput>()));
            if (execute != null)
                tool.Execute = async (input, runtime) =>
                    ToolSchema.Encode(await execute(ToolSchema.Decode<TInput>(input), runtime).ConfigureAwait(false));
            return tool;
        }

        /// <summary>As <see cref="FromType{TInput, TOutput}"/> without a declared result type:
        /// the result is any value with a JSON form (no output schema).</summary>
        public static Tool FromType<TInput>(string id, Func<TInput, RuntimeContext, Task<object>> execute,
            string description = null, bool strict = false)
        {
            var tool = Typed<TInput>(id, description, strict);
            if (execute != null)
                tool.Execute = async (input, runtime) =>
                    ToolSchema.Encode(await execute(ToolSchema.Decode<TInput>(input), runtime).ConfigureAwait(false));
            return tool;
        }

        static Tool Typed<TInput>(string id, string description, bool strict)
        {
            var schema = ToolSchema.For<TInput>();
            if (strict) schema = ToolSchema.Strict(schema);
            return new Tool(id, Description: description, Parameters: schema)
            {
                Strict = strict,
                // Runs after the core checked `Parameters`: what the schema cannot say (an
                // integer's range, a constructor) is refused here, before approval or execute.
                InputSchema = value => { ToolSchema.Decode<TInput>(value); return value; },
            };
        }

        /// <summary>An output validator that checks the plain JSON form of a typed result.</summary>
        static Func<object, object> ValidatedOutput(Func<object, object> check) =>
            AgentSdk.Describe(value => check(ToolSchema.Encode(value)), AgentSdk.SchemaOf(check));
    }
}
