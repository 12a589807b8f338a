using System;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>A model client that can stream: a streamed run (<see cref="Agent.Stream"/>)
    /// calls <see cref="Stream"/> and hears its deltas, tool input and items live (as
    /// <c>response.output_text.delta</c>, <c>response.reasoning.delta</c>,
    /// <c>tool.input_started</c>, <c>tool.input_delta</c> and <c>response.item</c> events); a run that is not streamed calls
    /// <see cref="IModelClient.Generate"/>. (The product's C# SDK returns an
    /// <c>IAsyncEnumerable</c>, which needs C# 8; here the client passes each event to
    /// <c>emit</c>.)</summary>
    public interface IStreamingModelClient : IModelClient
    {
        /// <summary>Streams the answer to <paramref name="request"/>: pass each event to
        /// <paramref name="emit"/> as it comes, the last a <see cref="ModelStreamEvent.Completed"/>
        /// carrying the response, then complete the task (a faulted task fails the request with
        /// its message). <c>emit</c> throws when the core refuses the event (naming what is
        /// wrong) or the request is over (<c>request.CancellationToken</c> is then cancelled):
        /// stop streaming then.</summary>
        Task Stream(ModelRequest request, Action<ModelStreamEvent> emit);
    }

    /// <summary>One event of a model stream: a text or reasoning <see cref="Delta"/>, the
    /// start of a call's input (<see cref="ToolCallId"/>, <see cref="ToolName"/>) or a fragment
    /// of it (<see cref="ToolCallId"/>, <see cref="Delta"/>; docs/behaviour.md §16), an
    /// output <see cref="Item"/> (a JSON value such as <c>{"type": "message", …}</c>) or the
    /// final <see cref="Response"/>.</summary>
    public sealed class ModelStreamEvent
    {
        /// <summary>A text delta's type.</summary>
        public const string TextDeltaType = "response.output_text.delta";
        /// <summary>A reasoning delta's type.</summary>
        public const string ReasoningDeltaType = "response.reasoning.delta";
        /// <summary>The type of the start of a call's input.</summary>
        public const string ToolInputStartType = "tool.input_started";
        /// <summary>The type of a fragment of a call's input.</summary>
        public const string ToolInputDeltaType = "tool.input_delta";
        /// <summary>An output item's type.</summary>
        public const string ItemType = "response.item";
        /// <summary>The final response's type.</summary>
        public const string CompletedType = "response.completed";

        /// <summary>The event type (one of the *Type constants; <c>text-delta</c>,
        /// <c>reasoning-delta</c>, <c>tool-input-start</c>, <c>tool-input-delta</c>,
        /// <c>item</c> and <c>response</c> are accepted too).</summary>
        public string Type { get; }
        /// <summary>The text of a delta.</summary>
        public string Delta { get; }
        /// <summary>The call of a tool input event.</summary>
        public string ToolCallId { get; }
        /// <summary>The tool of a tool input start.</summary>
        public string ToolName { get; }
        /// <summary>The item of an item event.</summary>
        public object Item { get; }
        /// <summary>The response of a completed event.</summary>
        public ModelResponse Response { get; }

        /// <summary>An event of any type (the core checks it).</summary>
        public ModelStreamEvent(string Type, string Delta = null, object Item = null, ModelResponse Response = null,
            string ToolCallId = null, string ToolName = null)
        {
            this.Type = Type; this.Delta = Delta; this.Item = Item; this.Response = Response;
            this.ToolCallId = ToolCallId; this.ToolName = ToolName;
        }

        /// <summary>A text delta.</summary>
        public static ModelStreamEvent TextDelta(string delta) => new ModelStreamEvent(TextDeltaType, Delta: delta);
        /// <summary>A reasoning delta.</summary>
        public static ModelStreamEvent ReasoningDelta(string delta) => new ModelStreamEvent(ReasoningDeltaType, Delta: delta);
        /// <summary>The model began writing call <paramref name="toolCallId"/>'s arguments to
        /// tool <paramref name="toolName"/>.</summary>
        public static ModelStreamEvent ToolInputStart(string toolCallId, string toolName) =>
            new ModelStreamEvent(ToolInputStartType, ToolCallId: toolCallId, ToolName: toolName);
        /// <summary>The next fragment of call <paramref name="toolCallId"/>'s arguments text.</summary>
        public static ModelStreamEvent ToolInputDelta(string toolCallId, string delta) =>
            new ModelStreamEvent(ToolInputDeltaType, Delta: delta, ToolCallId: toolCallId);
        /// <summary>An output item.</summary>
        public static ModelStreamEvent ItemEvent(object item) => new ModelStreamEvent(ItemType, Item: item);
        /// <summary>The final response.</summary>
        public static ModelStreamEvent Completed(ModelResponse response) => new ModelStreamEvent(CompletedType, Response: response);

        internal Dictionary<string, object> ToJson()
        {
            var m = new Dictionary<string, object> { { "type", Type } };
            if (Delta != null) m["delta"] = Delta;
            if (ToolCallId != null) m["toolCallId"] = ToolCallId;
            if (ToolName != null) m["toolName"] = ToolName;
            if (Item != null) m["item"] = Item;
            if (Response != null) m["response"] = Response.ToJson();
            return m;
        }
    }
}
