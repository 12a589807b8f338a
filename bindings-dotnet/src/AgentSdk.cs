using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace PhaseoAgentSdk
{
    /// <summary>The entry points, as the product's C# SDK names them.</summary>
    public static partial class AgentSdk
    {
        /// <summary>Returns the tool (definitions are checked when the agent is created).</summary>
        public static Tool DefineTool(Tool tool) => tool;

        /// <summary>Checks the definition and builds the agent; an invalid one (a bad schema,
        /// a duplicate tool id, a negative timeout…) throws an <see cref="AgentException"/>
        /// with code <c>definition_invalid</c>.</summary>
        public static Agent CreateAgent(AgentDefinition definition) => new Agent(definition);

        /// <summary>Stops after n model responses.</summary>
        public static StopCondition StepCountIs(int n) => Builtin("stepCountIs", (long)n);
        /// <summary>Stops once the run used this many tokens.</summary>
        public static StopCondition MaxTokensUsed(int n) => Builtin("maxTokensUsed", (long)n);
        /// <summary>Stops once the run cost this much.</summary>
        public static StopCondition MaxCost(double limit) => Builtin("maxCost", limit);
        /// <summary>Stops once the run took this long.</summary>
        public static StopCondition MaxDuration(TimeSpan d) => Builtin("maxDuration", (long)d.TotalMilliseconds);
        /// <summary>Stops after a response calling this tool.</summary>
        public static StopCondition HasToolCall(string name) => Builtin("hasToolCall", name);
        /// <summary>Stops after a response with this finish reason.</summary>
        public static StopCondition FinishReasonIs(string reason) => Builtin("finishReasonIs", reason);

        static StopCondition Builtin(string key, object value) => new StopCondition(new Dictionary<string, object> { { key, value } });

        /// <summary>The Phaseo gateway client (Responses API; <c>PHASEO_API_KEY</c>,
        /// <c>PHASEO_BASE_URL</c>).</summary>
        public static HttpModelClient CreateGatewayAgentClient(HttpClientOptions options = null) => new HttpModelClient("gateway", options);

        /// <summary>An OpenAI-compatible client (Chat Completions; <c>OPENAI_BASE_URL</c>,
        /// <c>OPENAI_API_KEY</c>: OpenAI, vLLM, Ollama, llama.cpp, LM Studio).</summary>
        public static HttpModelClient CreateOpenAICompatibleClient(HttpClientOptions options = null) => new HttpModelClient("openai-compatible", options);

        /// <summary>A validator backed by a JSON Schema (draft 2020-12) compiled in the core:
        /// returns the value, or throws an <see cref="AgentException"/> whose message is the
        /// core's (<c>&lt;instance path&gt;: &lt;reason&gt;</c>), the same in every language. An
        /// invalid schema is <c>definition_invalid</c>.</summary>
        public static Func<object, object> JsonSchema(object schema)
        {
            string text;
            try { text = Json.Write(schema); }
            catch (ArgumentException e) { throw new AgentException(ErrorCodes.DefinitionInvalid, "Invalid JSON Schema: " + e.Message); }
            Native.Check(Native.phaseo_schema_new(Native.Utf8(text), out var p, out var err), err);
            var holder = new SchemaHandle(p);
            Func<object, object> validate = value =>
            {
                string v;
                try { v = Json.Write(value); }
                catch (ArgumentException e) { throw new AgentException(ErrorCodes.ToolInputInvalid, e.Message); }
                int s = Native.phaseo_schema_validate(holder.Ptr, Native.Utf8(v), IntPtr.Zero, out var e2);
                GC.KeepAlive(holder);
                Native.Check(s, e2);
                return value;
            };
            return Describe(validate, Json.Parse(text));
        }

        // The JSON Schemas the validators made by JsonSchema check, by validator: a served
        // tool lists its output validator's as its outputSchema (docs/behaviour.md §19).
        static readonly ConditionalWeakTable<Func<object, object>, object> Described = new ConditionalWeakTable<Func<object, object>, object>();

        /// <summary>Records that <paramref name="validator"/> checks <paramref name="schema"/>
        /// (a JSON value); returns the validator.</summary>
        internal static Func<object, object> Describe(Func<object, object> validator, object schema)
        {
            if (schema != null) Described.Add(validator, schema);
            return validator;
        }

        /// <summary>The JSON Schema <paramref name="validator"/> checks, when known.</summary>
        internal static object SchemaOf(Func<object, object> validator) =>
            validator != null && Described.TryGetValue(validator, out var schema) ? schema : null;

        sealed class SchemaHandle
        {
            internal readonly IntPtr Ptr;
            internal SchemaHandle(IntPtr p) { Ptr = p; }
            ~SchemaHandle() { Native.phaseo_schema_free(Ptr); }
        }

        internal static Dictionary<string, object> ValidatorCallback(HostObject cbs, Func<object, object> v) =>
            cbs.Add(c => c.FinishSync(() => v(c.Arg(0))));
    }
}
