using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;

namespace PhaseoAgentSdk
{
    /// <summary>A tool call requested by the model: its id is unique in the run (an
    /// idempotency key).</summary>
    public sealed class ToolCall
    {
        /// <summary>The call id.</summary>
        public string Id { get; }
        /// <summary>The tool id.</summary>
        public string Name { get; }
        /// <summary>The validated input (null where not known yet).</summary>
        public object Input
        {
            get
            {
                var text = inputText;
                if (text == null) return input;
                // Parsed once: a value published by another thread first wins.
                var parsed = Json.Parse(text);
                Interlocked.CompareExchange(ref input, parsed, null);
                inputText = null;
                return input;
            }
        }
        object input;
        volatile string inputText;

        /// <summary>A call.</summary>
        public ToolCall(string Id, string Name, object Input = null) { this.Id = Id; this.Name = Name; input = Input; }

        /// <summary>A call whose input is parsed from <paramref name="inputText"/> when first
        /// read (a tool's runtime: most tools never read it).</summary>
        internal static ToolCall Lazy(string id, string name, string inputText) =>
            new ToolCall(id, name) { inputText = inputText };
        internal static ToolCall From(object v)
        {
            var m = V.Obj(v);
            return m == null ? null : new ToolCall(V.Str(m, "id"), V.Str(m, "name"), V.Get(m, "input"));
        }
    }

    /// <summary>Token and cost totals of a run.</summary>
    public sealed class UsageSummary
    {
        /// <summary>Input tokens.</summary>
        public long InputTokens { get; }
        /// <summary>Output tokens.</summary>
        public long OutputTokens { get; }
        /// <summary>Cached input tokens.</summary>
        public long CachedTokens { get; }
        /// <summary>Input + output tokens.</summary>
        public long TotalTokens { get; }
        /// <summary>Cost as reported by the model client.</summary>
        public double Cost { get; }
        /// <summary>Totals.</summary>
        public UsageSummary(long InputTokens = 0, long OutputTokens = 0, long CachedTokens = 0, long TotalTokens = 0, double Cost = 0)
        {
            this.InputTokens = InputTokens; this.OutputTokens = OutputTokens; this.CachedTokens = CachedTokens;
            this.TotalTokens = TotalTokens; this.Cost = Cost;
        }
        internal static UsageSummary From(object v)
        {
            var m = V.Obj(v);
            return new UsageSummary(V.Long(m, "inputTokens"), V.Long(m, "outputTokens"), V.Long(m, "cachedTokens"),
                V.Long(m, "totalTokens"), V.Double(m, "cost"));
        }
    }

    /// <summary>A call the paused run waits for: <see cref="Kind"/> is <c>approval</c>,
    /// <c>manual</c> (no executor: supply its output) or <c>hitl</c> (onToolCalled paused).</summary>
    public sealed class PendingToolCall
    {
        /// <summary>The call.</summary>
        public ToolCall Call { get; }
        /// <summary>approval, manual or hitl.</summary>
        public string Kind { get; }
        /// <summary>Why it waits (may be null).</summary>
        public string Reason { get; }
        /// <summary>A pending call.</summary>
        public PendingToolCall(ToolCall Call, string Kind, string Reason = null) { this.Call = Call; this.Kind = Kind; this.Reason = Reason; }
    }

    /// <summary>Why a run waits for a person: <see cref="Kind"/> is <c>tool_approval</c>
    /// (pending tool calls) or <c>human_review</c>.</summary>
    public sealed class HumanPause
    {
        /// <summary>The reason.</summary>
        public string Reason { get; }
        /// <summary>Application data for the reviewer.</summary>
        public object Payload { get; }
        /// <summary>When the pause began (ISO 8601).</summary>
        public string RequestedAt { get; }
        /// <summary>tool_approval or human_review.</summary>
        public string Kind { get; }
        /// <summary>The calls waiting, in call order.</summary>
        public IReadOnlyList<PendingToolCall> PendingToolCalls { get; }
        /// <summary>A pause.</summary>
        public HumanPause(string Reason, object Payload, string RequestedAt, string Kind = "human_review", IReadOnlyList<PendingToolCall> PendingToolCalls = null)
        {
            this.Reason = Reason; this.Payload = Payload; this.RequestedAt = RequestedAt; this.Kind = Kind;
            this.PendingToolCalls = PendingToolCalls ?? new List<PendingToolCall>();
        }
    }

    /// <summary>A conversation message (<c>system</c>, <c>user</c>, <c>assistant</c>,
    /// <c>tool</c>); <see cref="Value"/> is the whole JSON object.</summary>
    public sealed class Message
    {
        /// <summary>The role.</summary>
        public string Role { get; }
        /// <summary>The text content.</summary>
        public string Content { get; }
        /// <summary>For tool messages: the call answered.</summary>
        public string ToolCallId { get; }
        /// <summary>For tool messages: whether the content is an error.</summary>
        public bool IsError { get; }
        /// <summary>For assistant messages: the calls requested.</summary>
        public IReadOnlyList<ToolCall> ToolCalls { get; }
        /// <summary>The message as JSON data.</summary>
        public Dictionary<string, object> Value { get; }
        /// <summary>A message of a role with text.</summary>
        public Message(string Role, string Content)
        {
            this.Role = Role; this.Content = Content; ToolCalls = new List<ToolCall>();
            Value = new Dictionary<string, object> { { "role", Role }, { "content", Content } };
        }
        Message(Dictionary<string, object> m)
        {
            Value = m ?? new Dictionary<string, object>();
            Role = V.Str(m, "role"); Content = V.Str(m, "content"); ToolCallId = V.Str(m, "toolCallId"); IsError = V.Bool(m, "isError");
            var calls = new List<ToolCall>();
            foreach (var c in V.List(V.Get(m, "toolCalls"))) calls.Add(ToolCall.From(c));
            ToolCalls = calls;
        }
        internal static List<Message> ListFrom(object v)
        {
            var list = new List<Message>();
            foreach (var m in V.List(v)) list.Add(new Message(V.Obj(m)));
            return list;
        }
    }

    /// <summary>The run record of a state (<c>state.run</c>).</summary>
    public sealed class RunRecord
    {
        readonly Dictionary<string, object> m;
        internal RunRecord(Dictionary<string, object> m)
        {
            this.m = m ?? new Dictionary<string, object>();
            var p = V.Obj(V.Get(this.m, "pause"));
            if (p != null)
            {
                var pending = new List<PendingToolCall>();
                foreach (var x in V.List(V.Get(p, "pendingToolCalls")))
                {
                    var pm = V.Obj(x);
                    pending.Add(new PendingToolCall(ToolCall.From(V.Get(pm, "call")), V.Str(pm, "kind"), V.Str(pm, "reason")));
                }
                Pause = new HumanPause(V.Str(p, "reason"), V.Get(p, "payload"), V.Str(p, "requestedAt"), V.Str(p, "kind"), pending);
            }
            var e = V.Obj(V.Get(this.m, "error"));
            if (e != null) Error = new AgentException(V.Str(e, "code"), V.Str(e, "message"));
        }
        /// <summary>The run id.</summary>
        public string Id => V.Str(m, "id");
        /// <summary>The agent id.</summary>
        public string AgentId => V.Str(m, "agentId");
        /// <summary>The W3C traceparent of the run span that wrote the state (tracing on;
        /// null otherwise): a continue in any process joins that trace.</summary>
        public string Traceparent => V.Str(m, "traceparent");
        /// <summary>running, waiting_for_human, completed, stopped, failed or cancelled.</summary>
        public string Status => V.Str(m, "status");
        /// <summary>The run's input.</summary>
        public object Input => V.Get(m, "input");
        /// <summary>The application context.</summary>
        public object Context => V.Get(m, "context");
        /// <summary>The conversation.</summary>
        public IReadOnlyList<Message> Messages => Message.ListFrom(V.Get(m, "messages"));
        /// <summary>Model responses so far.</summary>
        public long StepCount => V.Long(m, "stepCount");
        /// <summary>The deferred tools <c>tool_search</c> has loaded, in load order (empty
        /// until one is loaded): a continue keeps offering them (docs/behaviour.md §17).</summary>
        public IReadOnlyList<string> LoadedTools
        {
            get
            {
                var ids = new List<string>();
                foreach (var id in V.List(V.Get(m, "loadedTools"))) ids.Add((string)id);
                return ids;
            }
        }
        /// <summary>The error of a failed run (code and message), else null.</summary>
        public AgentException Error { get; }
        /// <summary>The pause of a waiting run, else null.</summary>
        public HumanPause Pause { get; }
        /// <summary>Creation time (ISO 8601).</summary>
        public string CreatedAt => V.Str(m, "createdAt");
        /// <summary>Last update (ISO 8601).</summary>
        public string UpdatedAt => V.Str(m, "updatedAt");
        /// <summary>Why a stopped run stopped.</summary>
        public string StopReason => V.Str(m, "stopReason");
        /// <summary>The usage totals.</summary>
        public UsageSummary Usage => UsageSummary.From(V.Get(m, "usage"));
        /// <summary>The record as JSON data.</summary>
        public Dictionary<string, object> Value => m;
    }

    /// <summary>A run's whole resumable state (docs/behaviour.md §7): store <see cref="ToJson"/> anywhere
    /// and continue it later, in any process or language.</summary>
    public sealed class RunResult
    {
        // The canonical text; for a state the core has just ended, written (from `native`)
        // the first time it is asked for.
        string json;
        // A state the core ended: held natively until its text is needed, with its head
        // (the text without the history), where the status and output are found.
        readonly StateHandle native;
        readonly string head;
        Dictionary<string, object> value;
        RunRecord run;
        string status;
        // One object, assigned once: a reader on another thread sees the output whole or not at all.
        Tuple<object> output;

        RunResult(string json, Dictionary<string, object> value)
        {
            this.json = json;
            this.value = value;
        }

        RunResult(StateHandle native, string head)
        {
            this.native = native;
            this.head = head;
        }

        /// <summary>Reads a state's JSON text (as written by <see cref="ToJson"/> in any
        /// language). Text that is not a JSON object is a <c>state_invalid</c> error; the
        /// rest is checked by the core when the state is continued.</summary>
        public static RunResult FromJson(string json)
        {
            object v;
            try { v = Json.Parse(json ?? ""); }
            catch (FormatException e) { throw new AgentException(ErrorCodes.StateInvalid, "Invalid run state: " + e.Message); }
            var m = v as Dictionary<string, object>;
            if (m == null) throw new AgentException(ErrorCodes.StateInvalid, "Invalid run state: not a JSON object");
            return new RunResult(json, m);
        }

        /// <summary>A state the core has just written: read when first asked for (a run's
        /// caller often reads only its status and output, which are found in the text
        /// without building the rest).</summary>
        internal static RunResult FromCore(string json) => new RunResult(json, null);

        /// <summary>A state the core has just ended, taken natively (<c>phaseo_run_take_state</c>):
        /// its text is written only if something asks for more than its head holds.</summary>
        internal static RunResult FromCore(StateHandle native, string head) => new RunResult(native, head);

        internal static RunResult FromValue(object v) => new RunResult(Json.Write(v), V.Obj(v));

        /// <summary>The canonical text, written from the native state the first time it is
        /// asked for (once, whichever thread asks first); the native state is freed then.</summary>
        string Text
        {
            get
            {
                var text = Volatile.Read(ref json);
                if (text != null) return text;
                lock (native)
                {
                    if (json == null)
                    {
                        Volatile.Write(ref json, Native.Take(Native.phaseo_state_json(native)));
                        native.Dispose();
                    }
                    return json;
                }
            }
        }

        /// <summary>Where the status and output are read: the head of a native state, else the text.</summary>
        string Summary => head ?? Text;

        /// <summary>The whole state, read from its text the first time it is needed (one
        /// instance for every reader, whichever thread reads first).</summary>
        Dictionary<string, object> State
        {
            get
            {
                if (value == null)
                    Interlocked.CompareExchange(ref value, V.Obj(Json.Parse(Text)) ?? new Dictionary<string, object>(), null);
                return value;
            }
        }

        /// <summary>The canonical state JSON text (exactly as the core wrote it).</summary>
        public string ToJson() => Text;
        /// <inheritdoc/>
        public override string ToString() => Text;
        /// <summary>The run record.</summary>
        public RunRecord Run
        {
            get
            {
                if (run == null) Interlocked.CompareExchange(ref run, new RunRecord(V.Obj(V.Get(State, "run"))), null);
                return run;
            }
        }
        /// <summary>Shortcut for <c>Run.Status</c>.</summary>
        public string Status
        {
            get
            {
                if (run != null || value != null) return Run.Status;
                return status ?? (status = Json.Find(Summary, out _, "run", "status") as string);
            }
        }
        /// <summary>The final output (text, or the parsed value of an output schema).</summary>
        public object Output
        {
            get
            {
                if (value != null) return V.Get(value, "output");
                return (output ?? (output = Tuple.Create(Json.Find(Summary, out _, "output")))).Item1;
            }
        }
        /// <summary>The steps (JSON data).</summary>
        public IReadOnlyList<object> Steps => V.List(V.Get(State, "steps"));
        /// <summary>The conversation.</summary>
        public IReadOnlyList<Message> Messages => Run.Messages;
        /// <summary>The usage totals.</summary>
        public UsageSummary Usage => UsageSummary.From(V.Get(State, "usage"));
        /// <summary>The whole state as JSON data.</summary>
        public Dictionary<string, object> Value => State;
    }

    /// <summary>A run's state held by the native library (<c>phaseo_run_take_state</c>); the
    /// garbage collector is told its size, so that dropped results are collected in time.</summary>
    sealed class StateHandle : SafeHandle
    {
        readonly long size;

        internal StateHandle(IntPtr state) : base(IntPtr.Zero, true)
        {
            SetHandle(state);
            size = (long)Math.Min((ulong)Native.phaseo_state_size(state), long.MaxValue / 2);
            if (size > 0) GC.AddMemoryPressure(size);
        }

        public override bool IsInvalid => handle == IntPtr.Zero;

        protected override bool ReleaseHandle()
        {
            Native.phaseo_state_free(handle);
            if (size > 0) GC.RemoveMemoryPressure(size);
            return true;
        }
    }

    /// <summary>An event of a run (docs/behaviour.md §6): <see cref="Details"/> holds the type's other
    /// fields (camelCase, as in every language's JSON). A retried call's
    /// <c>tool.retrying</c> has <c>toolCallId</c>, <c>toolName</c>, <c>attempt</c> (the attempt
    /// about to start) and <c>error</c>; <c>tool.started</c> has <c>inputEdited: true</c> for an
    /// approval's edited input and <c>tool.completed</c> has <c>respondedByHuman: true</c> for a
    /// response (docs/behaviour.md §14, §15). In a streamed run, <c>tool.input_started</c> has
    /// <c>toolCallId</c> and <c>toolName</c>, and <c>tool.input_delta</c> has <c>toolCallId</c>
    /// and <c>delta</c>, the next fragment of the call's arguments text (docs/behaviour.md §16).</summary>
    public sealed class AgentEvent
    {
        /// <summary>The event type, e.g. <c>tool.completed</c>.</summary>
        public string Type { get; }
        /// <summary>The run id.</summary>
        public string RunId { get; }
        /// <summary>The agent id.</summary>
        public string AgentId { get; }
        /// <summary>When (ISO 8601).</summary>
        public string Timestamp { get; }
        /// <summary>The run's status at the event.</summary>
        public string Status { get; }
        /// <summary>The step, where the event has one.</summary>
        public int? StepIndex { get; }
        /// <summary>On the events of a nested agent's run (docs/behaviour.md §18): the outer
        /// call that runs it (<c>&lt;outerCallId&gt;/&lt;nestedCallId&gt;</c> deeper down).</summary>
        public string ParentToolCallId { get; }
        /// <summary>The other fields.</summary>
        public Dictionary<string, object> Details { get; }
        /// <summary>The event's JSON text.</summary>
        public string Json { get; }

        internal AgentEvent(string json)
        {
            Json = json;
            var m = V.Obj(PhaseoAgentSdk.Json.Parse(json)) ?? new Dictionary<string, object>();
            Type = V.Str(m, "type"); RunId = V.Str(m, "runId"); AgentId = V.Str(m, "agentId");
            Timestamp = V.Str(m, "timestamp"); Status = V.Str(m, "status");
            if (V.Get(m, "stepIndex") != null) StepIndex = (int)V.Long(m, "stepIndex");
            ParentToolCallId = V.Str(m, "parentToolCallId");
            var details = new Dictionary<string, object>();
            foreach (var kv in m)
                if (kv.Key != "type" && kv.Key != "runId" && kv.Key != "agentId" && kv.Key != "timestamp" && kv.Key != "status" && kv.Key != "stepIndex" && kv.Key != "parentToolCallId")
                    details[kv.Key] = kv.Value;
            Details = details;
        }
    }
}
