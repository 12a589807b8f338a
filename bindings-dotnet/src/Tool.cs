using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>What an executor (and every tool-side hook) sees of its call.</summary>
    public sealed class RuntimeContext
    {
        // A runtime the SDK made reads its call's runtime and registers its token when first
        // asked (most tools never look); one made with the public constructor holds its values.
        readonly HostCall call;
        readonly string runId, agentId, idempotencyKey;
        readonly int stepIndex, attempt;
        readonly object context;
        readonly CancellationToken token;
        ToolCall toolCall;
        Func<object, Task> emitProgress;
        Action<object> setContext;

        /// <summary>The run's id.</summary>
        public string RunId => call != null ? call.Runtime.RunId : runId;
        /// <summary>The agent's id.</summary>
        public string AgentId => call != null ? call.Runtime.AgentId : agentId;
        /// <summary>The step that requested the call (0-based).</summary>
        public int StepIndex => call != null ? (int)V.Long(call.Runtime.StepIndex) : stepIndex;
        /// <summary>The application context as it was when the tool phase began.</summary>
        public object Context => call != null ? call.Runtime.Context : context;
        /// <summary>Cancelled when the SDK stops waiting for the call: its timeout elapsed, the
        /// run was cancelled, or a sibling call failed the run. A tool that ignores it keeps
        /// running, but its late result is discarded and the run does not wait for it.</summary>
        public CancellationToken CancellationToken => call != null ? call.Token() : token;
        /// <summary>The call (its id is unique in the run).</summary>
        public ToolCall ToolCall
        {
            get
            {
                if (call == null) return toolCall;
                var c = Volatile.Read(ref toolCall);
                return c ?? Interlocked.CompareExchange(ref toolCall, c = call.Runtime.ToolCall, null) ?? c;
            }
        }
        /// <summary>The number of this attempt at the call, from 1 (above 1 only for a tool
        /// with <see cref="Tool.Retry"/>; docs/behaviour.md §15).</summary>
        public int Attempt => call == null ? attempt : call.Runtime.Attempt == null ? 1 : (int)V.Long(call.Runtime.Attempt);
        /// <summary><c>"&lt;runId&gt;:&lt;toolCallId&gt;"</c>: the same for every attempt, for a
        /// call approved on continue in another process or language, and for a call run again
        /// by recovery. Hand it to a side-effecting service so the effect happens at most
        /// once.</summary>
        public string IdempotencyKey => call != null ? call.Runtime.IdempotencyKey : idempotencyKey;
        /// <summary>Publishes a preliminary result (checked by EventSchema, emitted as a
        /// <c>tool.preliminary_result</c> event). Only an executor has progress. A value
        /// without JSON form (see <see cref="Json.Write"/>) throws an
        /// <see cref="ArgumentException"/> naming the problem.</summary>
        public Func<object, Task> EmitProgress => call == null ? emitProgress : emitProgress ?? (emitProgress = call.EmitProgress);
        /// <summary>Replaces the application context for later turns (applied after the tool
        /// phase, in call order). Only an executor can set it. A value without JSON form (see
        /// <see cref="Json.Write"/>) throws an <see cref="ArgumentException"/>.</summary>
        public Action<object> SetContext => call == null ? setContext : setContext ?? (setContext = call.SetContext);

        /// <summary>A runtime (the SDK makes these; public for tests of tools).</summary>
        public RuntimeContext(string RunId, string AgentId, int StepIndex, object Context = null,
            CancellationToken CancellationToken = default(CancellationToken), ToolCall ToolCall = null,
            Func<object, Task> EmitProgress = null, Action<object> SetContext = null, int Attempt = 1,
            string IdempotencyKey = null)
        {
            runId = RunId; agentId = AgentId; stepIndex = StepIndex; context = Context;
            token = CancellationToken; toolCall = ToolCall;
            emitProgress = EmitProgress; setContext = SetContext;
            attempt = Attempt; idempotencyKey = IdempotencyKey;
        }

        /// <summary>The runtime of one of the SDK's calls.</summary>
        internal RuntimeContext(HostCall call) { this.call = call; }
    }

    /// <summary>Overrides of the next model request only (docs/behaviour.md §2.6), after a call of the
    /// tool that produced a result.</summary>
    public sealed class NextTurnParams
    {
        /// <summary>The model.</summary>
        public string Model { get; set; }
        /// <summary>The instructions.</summary>
        public string Instructions { get; set; }
        /// <summary>Sampling temperature.</summary>
        public double? Temperature { get; set; }
        /// <summary>Output limit.</summary>
        public int? MaxOutputTokens { get; set; }
        /// <summary>Nucleus sampling.</summary>
        public double? TopP { get; set; }
        /// <summary>Restricts the tools offered (only their ids are used).</summary>
        public IReadOnlyList<Tool> Tools { get; set; }
        /// <summary><c>"auto"</c>, <c>"required"</c>, <c>"none"</c> or <c>{"toolId": id}</c>.</summary>
        public object ToolChoice { get; set; }

        /// <summary>Overrides.</summary>
        public NextTurnParams(string Model = null, string Instructions = null, double? Temperature = null,
            int? MaxOutputTokens = null, double? TopP = null, IReadOnlyList<Tool> Tools = null)
        {
            this.Model = Model; this.Instructions = Instructions; this.Temperature = Temperature;
            this.MaxOutputTokens = MaxOutputTokens; this.TopP = TopP; this.Tools = Tools;
        }

        internal Dictionary<string, object> ToJson()
        {
            var m = new Dictionary<string, object>();
            if (Model != null) m["model"] = Model;
            if (Instructions != null) m["instructions"] = Instructions;
            if (Temperature != null) m["temperature"] = Temperature.Value;
            if (TopP != null) m["topP"] = TopP.Value;
            if (MaxOutputTokens != null) m["maxOutputTokens"] = (long)MaxOutputTokens.Value;
            if (Tools != null)
            {
                var ids = new List<object>();
                foreach (var t in Tools) ids.Add(t.Id);
                m["tools"] = ids;
            }
            if (ToolChoice != null) m["toolChoice"] = ToolChoice;
            return m;
        }
    }

    /// <summary>A tool the model can call (docs/behaviour.md §2). Only <see cref="Id"/> is required; a tool
    /// without <see cref="Execute"/> is a manual tool (the run pauses until the application
    /// supplies its output).</summary>
    public sealed partial class Tool
    {
        /// <summary>The name the model calls the tool by.</summary>
        public string Id { get; set; }
        /// <summary>Runs a call. Started on the thread pool (in call order), as many at once
        /// as the concurrency allows; an exception of any type is the call's error, handled
        /// by <see cref="OnError"/>. Long synchronous work belongs in <c>Task.Run</c> (or
        /// <c>await</c>), so the pool keeps threads for the other calls.</summary>
        public Func<object, RuntimeContext, Task<object>> Execute { get; set; }
        /// <summary>Sent to the model.</summary>
        public string Description { get; set; }
        /// <summary>JSON Schema of the arguments, sent to the model and checked by the core on
        /// every call (default: any object).</summary>
        public Dictionary<string, object> Parameters { get; set; }
        /// <summary>Limits each call, each attempt of a retried one: it fails with
        /// <c>tool_timeout</c> and the runtime's CancellationToken is cancelled.</summary>
        public TimeSpan? Timeout { get; set; }
        /// <summary>Validates (and may transform) the arguments after Parameters: return the
        /// value, or throw to refuse it. <see cref="AgentSdk.JsonSchema"/> builds one.</summary>
        public Func<object, object> InputSchema { get; set; }
        /// <summary>Validates results (and outputs supplied on continue).</summary>
        public Func<object, object> OutputSchema { get; set; }
        /// <summary>Validates progress values.</summary>
        public Func<object, object> EventSchema { get; set; }
        /// <summary>Every call waits for approval.</summary>
        public bool RequireApproval { get; set; }
        /// <summary>Decides approval per call (wins over RequireApproval).</summary>
        public Func<object, RuntimeContext, Task<bool>> Approval { get; set; }
        /// <summary>Makes the tool interactive: runs first; <c>(false, _)</c> pauses the call for
        /// a person (pending kind <c>hitl</c>), <c>(true, output)</c> is its result (null included).</summary>
        public Func<object, RuntimeContext, Task<ValueTuple<bool, object>>> OnToolCalled { get; set; }
        /// <summary>Validates or transforms an output supplied on continue.</summary>
        public Func<object, RuntimeContext, Task<object>> OnResponseReceived { get; set; }
        /// <summary>Overrides the next model request after a call that produced a result.</summary>
        public NextTurnParams NextTurnParams { get; set; }
        /// <summary>Computes those overrides per call (wins over NextTurnParams).</summary>
        public Func<object, RuntimeContext, Task<NextTurnParams>> DynamicNextTurnParams { get; set; }
        /// <summary><c>"fail-run"</c> or <c>"return-to-model"</c>; null = the agent's
        /// ToolExecution.OnError (fail-run unless set).</summary>
        public string OnError { get; set; }
        /// <summary>Asks the model for schema-exact arguments (docs/behaviour.md §12).</summary>
        public bool Strict { get; set; }
        /// <summary>Example argument objects sent with the tool.</summary>
        public IReadOnlyList<object> InputExamples { get; set; }
        /// <summary>How many calls of this tool a run admits (null = no limit; below 1 is
        /// refused with <c>definition_invalid</c>). A call beyond it is not run: its tool
        /// message is an error and the model goes on without it (docs/behaviour.md §15).</summary>
        public int? MaxCalls { get; set; }
        /// <summary>Runs a call again when an attempt throws or times out (null = one
        /// attempt).</summary>
        public ToolRetry Retry { get; set; }
        /// <summary>Keeps the tool out of the offer until the built-in <c>tool_search</c>
        /// finds it; from the next model request on it is offered to the end of the run, and
        /// the state keeps it loaded across a pause (docs/behaviour.md §17). A large tool set
        /// stays out of the prompt until the model asks for it.</summary>
        public bool DeferLoading { get; set; }
        /// <summary>The definition an agent tool runs (<see cref="Agent.AsTool"/>).</summary>
        internal AgentDefinition NestedAgent { get; set; }
        /// <summary>The MCP hints of a tool served with <see cref="McpServer.Serve"/>:
        /// <c>readOnlyHint</c>, <c>destructiveHint</c>, <c>idempotentHint</c>,
        /// <c>openWorldHint</c>, <c>title</c> (docs/behaviour.md §19).</summary>
        public Dictionary<string, object> Annotations { get; set; }

        /// <summary>A tool; the rest by object initializer.</summary>
        public Tool(string Id, Func<object, RuntimeContext, Task<object>> Execute = null, string Description = null,
            Dictionary<string, object> Parameters = null, TimeSpan? Timeout = null)
        {
            this.Id = Id; this.Execute = Execute; this.Description = Description; this.Parameters = Parameters; this.Timeout = Timeout;
        }

        /// <summary>
        /// A tool's input (or a supplied output) as the product hands it to the tool's
        /// delegates: on .NET 5+ a <c>System.Text.Json.JsonElement</c> (the package's net8.0
        /// build); on netstandard2.0 and Mono, which have no System.Text.Json, plain data —
        /// <c>Dictionary&lt;string, object&gt;</c>, <c>List&lt;object&gt;</c>, strings,
        /// numbers, booleans, <c>null</c>. Either is accepted back as a result.
        /// </summary>
        internal static object HostInput(object value)
        {
#if NET5_0_OR_GREATER
            var options = new System.Text.Json.JsonDocumentOptions { MaxDepth = 128 };
            using (var document = System.Text.Json.JsonDocument.Parse(Json.Write(value), options))
                return document.RootElement.Clone();
#else
            return value;
#endif
        }

        internal Dictionary<string, object> ToJson(HostObject cbs)
        {
            var m = new Dictionary<string, object> { { "id", Id } };
            if (Description != null) m["description"] = Description;
            if (Parameters != null) m["parameters"] = Parameters;
            if (NestedAgent != null) m["agent"] = NestedAgent.ToJson(cbs);
            if (Annotations != null) m["annotations"] = Annotations;
            var exec = Execute;
            if (exec != null) m["execute"] = cbs.Add(c => c.WithRuntime(1, rt => exec(HostInput(c.Arg(0)), rt)));
            if (Timeout != null) m["timeoutMs"] = Timeout.Value.TotalMilliseconds;
            var approval = Approval;
            if (approval != null) m["requireApproval"] = cbs.Add(c => c.WithRuntime(1, rt => approval(HostInput(c.Arg(0)), rt)));
            else if (RequireApproval) m["requireApproval"] = true;
            if (OnError != null) m["onError"] = OnError;
            if (InputSchema != null) m["inputSchema"] = AgentSdk.ValidatorCallback(cbs, InputSchema);
            if (OutputSchema != null)
            {
                var output = AgentSdk.ValidatorCallback(cbs, OutputSchema);
                // A served tool lists the schema as its outputSchema (docs/behaviour.md §19).
                var described = AgentSdk.SchemaOf(OutputSchema);
                if (described != null) output["schema"] = described;
                m["outputSchema"] = output;
            }
            if (EventSchema != null) m["eventSchema"] = AgentSdk.ValidatorCallback(cbs, EventSchema);
            var called = OnToolCalled;
            if (called != null)
                m["onToolCalled"] = cbs.Add(c => c.WithRuntime(1, rt => called(HostInput(c.Arg(0)), rt), r => r.Item1 ? r.Item2 : HostCall.PauseCall));
            var received = OnResponseReceived;
            if (received != null) m["onResponseReceived"] = cbs.Add(c => c.WithRuntime(1, rt => received(HostInput(c.Arg(0)), rt)));
            var next = DynamicNextTurnParams;
            if (next != null)
                m["nextTurnParams"] = cbs.Add(c => c.WithRuntime(1, rt => next(c.Arg(0), rt),
                    p => p == null ? new Dictionary<string, object>() : p.ToJson()));
            else if (NextTurnParams != null) m["nextTurnParams"] = NextTurnParams.ToJson();
            if (Strict) m["strict"] = true;
            if (InputExamples != null) m["inputExamples"] = InputExamples;
            if (MaxCalls != null) m["maxCalls"] = (long)MaxCalls.Value;
            if (Retry != null) m["retry"] = Retry.ToJson();
            if (DeferLoading) m["deferLoading"] = true;
            return m;
        }
    }

    /// <summary>How tool calls run (docs/behaviour.md §2.7–2.9).</summary>
    public sealed class ToolExecutionConfig
    {
        /// <summary>How many calls of one model turn run at once (default 1).</summary>
        public int Concurrency { get; set; }
        /// <summary>The default error policy: <c>"fail-run"</c> or <c>"return-to-model"</c>.</summary>
        public string OnError { get; set; }
        /// <summary>Truncates longer tool messages (0 = no limit; a negative number is
        /// refused with <c>definition_invalid</c>).</summary>
        public int MaxOutputChars { get; set; }
        /// <summary>How many tool calls a run admits in all (null = no limit; below 1 is
        /// refused). Calls beyond it are not run (docs/behaviour.md §15).</summary>
        public int? MaxToolCalls { get; set; }

        /// <summary>A configuration.</summary>
        public ToolExecutionConfig(int Concurrency = 1, string OnError = null, int MaxOutputChars = 0, int? MaxToolCalls = null)
        {
            this.Concurrency = Concurrency; this.OnError = OnError; this.MaxOutputChars = MaxOutputChars;
            this.MaxToolCalls = MaxToolCalls;
        }

        internal Dictionary<string, object> ToJson()
        {
            var m = new Dictionary<string, object>();
            if (Concurrency > 0) m["toolConcurrency"] = (long)Concurrency;
            if (OnError != null) m["onError"] = OnError;
            if (MaxOutputChars != 0) m["maxOutputChars"] = (long)MaxOutputChars;
            if (MaxToolCalls != null) m["maxToolCalls"] = (long)MaxToolCalls.Value;
            return m;
        }
    }

    /// <summary>Retries a tool's failed attempts (docs/behaviour.md §15): MaxAttempts counts
    /// every attempt (at least 1, checked by the core); the wait before the n-th retry is
    /// Backoff × n. Input validation, approval and an output that fails OutputSchema are
    /// never retried; Timeout applies to each attempt; the last error follows OnError.</summary>
    public sealed class ToolRetry
    {
        /// <summary>Attempts in all, the first included.</summary>
        public int MaxAttempts { get; set; }
        /// <summary>The wait unit between attempts (null = none).</summary>
        public TimeSpan? Backoff { get; set; }

        /// <summary>A retry policy.</summary>
        public ToolRetry(int MaxAttempts, TimeSpan? Backoff = null) { this.MaxAttempts = MaxAttempts; this.Backoff = Backoff; }

        internal Dictionary<string, object> ToJson()
        {
            var m = new Dictionary<string, object> { { "maxAttempts", (long)MaxAttempts } };
            if (Backoff != null) m["backoffMs"] = Backoff.Value.TotalMilliseconds;
            return m;
        }
    }

    /// <summary>Retries failed model requests: MaxRetries extra attempts, sleeping Backoff ×
    /// attempt between them (default 250 ms).</summary>
    public sealed class ModelRetryConfig
    {
        /// <summary>Extra attempts.</summary>
        public int MaxRetries { get; set; }
        /// <summary>The sleep unit between attempts.</summary>
        public TimeSpan? Backoff { get; set; }

        /// <summary>A configuration.</summary>
        public ModelRetryConfig(int MaxRetries = 0, TimeSpan? Backoff = null) { this.MaxRetries = MaxRetries; this.Backoff = Backoff; }

        internal Dictionary<string, object> ToJson()
        {
            var m = new Dictionary<string, object> { { "maxRetries", (long)MaxRetries } };
            if (Backoff != null) m["backoffMs"] = Backoff.Value.TotalMilliseconds;
            return m;
        }
    }

    /// <summary>What a stop condition sees after each step that did not pause.</summary>
    public sealed class StopState
    {
        /// <summary>Model responses so far.</summary>
        public int StepCount { get; }
        /// <summary>Usage so far.</summary>
        public UsageSummary Usage { get; }
        /// <summary>The calls of the last response.</summary>
        public IReadOnlyList<ToolCall> ToolCalls { get; }
        /// <summary>The last finish reason.</summary>
        public string FinishReason { get; }
        /// <summary>Time since the run started.</summary>
        public TimeSpan Elapsed { get; }

        /// <summary>A stop state.</summary>
        public StopState(int StepCount, UsageSummary Usage, IReadOnlyList<ToolCall> ToolCalls, string FinishReason, TimeSpan Elapsed)
        {
            this.StepCount = StepCount; this.Usage = Usage; this.ToolCalls = ToolCalls; this.FinishReason = FinishReason; this.Elapsed = Elapsed;
        }
    }

    /// <summary>Ends a run with status <c>stopped</c> (docs/behaviour.md §3.2). The built-ins
    /// (<see cref="AgentSdk.StepCountIs"/>, …) are checked by the core; a C# function
    /// converts implicitly.</summary>
    public sealed class StopCondition
    {
        internal readonly Dictionary<string, object> Builtin;
        internal readonly Func<StopState, ValueTuple<bool, string>> Fn;

        internal StopCondition(Dictionary<string, object> builtin) { Builtin = builtin; }

        /// <summary>A condition computed in C#: <c>(true, reason)</c> stops the run.</summary>
        public StopCondition(Func<StopState, ValueTuple<bool, string>> fn) { Fn = fn ?? throw new ArgumentNullException(nameof(fn)); }

        /// <summary>Wraps a C# function.</summary>
        public static implicit operator StopCondition(Func<StopState, ValueTuple<bool, string>> fn) => new StopCondition(fn);

        internal object ToJson(HostObject cbs)
        {
            if (Builtin != null) return Builtin;
            var fn = Fn;
            return cbs.Add(c => c.FinishSync(() =>
            {
                var m = V.Obj(c.Arg(0));
                var calls = new List<ToolCall>();
                foreach (var x in V.List(V.Get(m, "toolCalls"))) calls.Add(ToolCall.From(x));
                var r = fn(new StopState((int)V.Long(m, "stepCount"), UsageSummary.From(V.Get(m, "usage")), calls,
                    V.Str(m, "finishReason"), TimeSpan.FromMilliseconds(V.Double(m, "elapsedMs"))));
                if (!r.Item1) return false;
                return string.IsNullOrEmpty(r.Item2) ? (object)true : r.Item2;
            }));
        }
    }

    /// <summary>A decision on a pending call (approval or rejection, with an optional
    /// reason; an approval may carry an edited input).</summary>
    public sealed class ToolDecision
    {
        /// <summary>The call id.</summary>
        public string ToolCallId { get; }
        /// <summary>Why (may be null).</summary>
        public string Reason { get; }
        /// <summary>On an approval, the person's corrected arguments (null = the model's run).
        /// They are checked as the model's would be before anything runs (an invalid one
        /// refuses the continue with <c>continue_invalid</c> and the state stays usable); the
        /// tool runs with them and the conversation shows them (docs/behaviour.md §14).</summary>
        public object EditedInput { get; }
        /// <summary>A decision.</summary>
        public ToolDecision(string ToolCallId, string Reason = null, object EditedInput = null)
        {
            this.ToolCallId = ToolCallId; this.Reason = Reason; this.EditedInput = EditedInput;
        }
        /// <summary>A decision without reason.</summary>
        public static implicit operator ToolDecision(string toolCallId) => new ToolDecision(toolCallId);
        internal object ToJson()
        {
            if (Reason == null && EditedInput == null) return ToolCallId;
            var m = new Dictionary<string, object> { { "toolCallId", ToolCallId } };
            if (Reason != null) m["reason"] = Reason;
            if (EditedInput != null) m["editedInput"] = Agent.CallerValue("edited input for " + ToolCallId, EditedInput);
            return m;
        }
    }

    /// <summary>The output of a manual or hitl call, or a response in an approval-gated
    /// call's place, supplied on continue.</summary>
    public sealed class ToolOutput
    {
        /// <summary>The call id.</summary>
        public string ToolCallId { get; }
        /// <summary>The output value.</summary>
        public object Output { get; }
        /// <summary>An output.</summary>
        public ToolOutput(string ToolCallId, object Output) { this.ToolCallId = ToolCallId; this.Output = Output; }
    }
}
