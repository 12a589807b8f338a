using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>What per-turn functions (DynamicModel, Temperature, …) see.</summary>
    public sealed class TurnContext
    {
        /// <summary>The number of the turn about to run: StepIndex + 1.</summary>
        public int NumberOfTurns { get; }
        /// <summary>The step about to run.</summary>
        public int StepIndex { get; }
        /// <summary>The conversation so far.</summary>
        public IReadOnlyList<Message> Messages { get; }
        /// <summary>The application context.</summary>
        public object Context { get; }
        internal TurnContext(Dictionary<string, object> m)
        {
            NumberOfTurns = (int)V.Long(m, "numberOfTurns"); StepIndex = (int)V.Long(m, "stepIndex");
            Messages = Message.ListFrom(V.Get(m, "messages")); Context = V.Get(m, "context");
        }
    }

    /// <summary>What the human-review hook sees after each step that did not pause.</summary>
    public sealed class HumanReviewContext
    {
        /// <summary>The run id.</summary>
        public string RunId { get; }
        /// <summary>The agent id.</summary>
        public string AgentId { get; }
        /// <summary>The step just finished.</summary>
        public int StepIndex { get; }
        /// <summary>The run's input.</summary>
        public object Input { get; }
        /// <summary>The application context.</summary>
        public object Context { get; }
        /// <summary>The conversation, with this step's assistant message.</summary>
        public IReadOnlyList<Message> Messages { get; }
        /// <summary>This step's model response (JSON data).</summary>
        public Dictionary<string, object> Response { get; }
        /// <summary>The step gave the final answer.</summary>
        public bool IsFinal { get; }
        internal HumanReviewContext(Dictionary<string, object> m)
        {
            RunId = V.Str(m, "runId"); AgentId = V.Str(m, "agentId"); StepIndex = (int)V.Long(m, "stepIndex");
            Input = V.Get(m, "input"); Context = V.Get(m, "context"); Messages = Message.ListFrom(V.Get(m, "messages"));
            Response = V.Obj(V.Get(m, "response")); IsFinal = V.Bool(m, "isFinal");
        }
    }

    /// <summary>Pauses the run for review (pause kind <c>human_review</c>).</summary>
    public sealed class HumanReviewRequest
    {
        /// <summary>Why the run pauses.</summary>
        public string Reason { get; }
        /// <summary>Application data for the reviewer.</summary>
        public object Payload { get; }
        /// <summary>A request.</summary>
        public HumanReviewRequest(string Reason, object Payload = null) { this.Reason = Reason; this.Payload = Payload; }
    }

    /// <summary>How long a worker holds a store-backed run and how often it renews the hold
    /// (docs/behaviour.md §10).</summary>
    public sealed class LeaseConfig
    {
        /// <summary>The hold.</summary>
        public TimeSpan Duration { get; }
        /// <summary>The renewal period.</summary>
        public TimeSpan RenewEvery { get; }
        /// <summary>A lease configuration.</summary>
        public LeaseConfig(TimeSpan Duration, TimeSpan RenewEvery) { this.Duration = Duration; this.RenewEvery = RenewEvery; }
    }

    /// <summary>Options of <see cref="Agent.AsTool"/>; every one is optional.</summary>
    public sealed class AsToolOptions
    {
        /// <summary>The tool id (default: the agent's id).</summary>
        public string Id { get; set; }
        /// <summary>What the model is told the tool does.</summary>
        public string Description { get; set; }
        /// <summary>The tool's JSON Schema (default: one string <c>input</c>).</summary>
        public Dictionary<string, object> Parameters { get; set; }
    }

    /// <summary>Defines an agent (docs/behaviour.md §3). Only <see cref="Id"/> is required.</summary>
    public sealed class AgentDefinition
    {
        /// <summary>The agent's id (stored in every state it produces).</summary>
        public string Id { get; set; }
        /// <summary>The model name sent in each request.</summary>
        public string Model { get; set; }
        /// <summary>Instructions sent with each request.</summary>
        public string Instructions { get; set; }
        /// <summary>The tools the model may call.</summary>
        public IReadOnlyList<Tool> Tools { get; set; } = new List<Tool>();
        /// <summary>Limits the model responses of a run (null = the documented 12; a negative
        /// limit is refused with <c>definition_invalid</c>).</summary>
        public int? MaxSteps { get; set; }
        /// <summary>May pause the run after any step that did not pause (null = go on).</summary>
        public Func<HumanReviewContext, Task<HumanReviewRequest>> HumanReview { get; set; }
        /// <summary>Retries failed model requests.</summary>
        public ModelRetryConfig ModelRetry { get; set; }
        /// <summary>Concurrency, error policy and output truncation.</summary>
        public ToolExecutionConfig ToolExecution { get; set; }
        /// <summary>Ends the run early (checked after every step that did not pause).</summary>
        public IReadOnlyList<StopCondition> StopWhen { get; set; }
        /// <summary>Decides approval for every call of every tool (overrides the tools' own
        /// settings).</summary>
        public Func<ToolCall, RuntimeContext, Task<bool>> RequireApproval { get; set; }
        /// <summary>Validates the final output (return it, or throw).</summary>
        public Func<object, object> OutputSchema { get; set; }
        /// <summary>Computes Model per turn (null = unset).</summary>
        public Func<TurnContext, string> DynamicModel { get; set; }
        /// <summary>Computes Instructions per turn.</summary>
        public Func<TurnContext, string> DynamicInstructions { get; set; }
        /// <summary>Sampling temperature per turn.</summary>
        public Func<TurnContext, double?> Temperature { get; set; }
        /// <summary>Output limit per turn.</summary>
        public Func<TurnContext, int?> MaxOutputTokens { get; set; }
        /// <summary>Nucleus sampling per turn.</summary>
        public Func<TurnContext, double?> TopP { get; set; }
        /// <summary><c>"auto"</c>, <c>"required"</c>, <c>"none"</c> or <c>{"toolId": id}</c> (docs/behaviour.md §12).</summary>
        public object ToolChoice { get; set; }
        /// <summary>Whether the model may request several calls per turn.</summary>
        public bool? ParallelToolCalls { get; set; }
        /// <summary>Restricts the tools offered (by id).</summary>
        public IReadOnlyList<string> ActiveTools { get; set; }
        /// <summary>Signs every state the agent produces (docs/behaviour.md §7).</summary>
        public string StateSecret { get; set; }
        /// <summary>Older secrets still accepted on continue.</summary>
        public IReadOnlyList<string> StateSecrets { get; set; }
        /// <summary>Makes runs durable (docs/behaviour.md §10).</summary>
        public RunStore Store { get; set; }
        /// <summary>Worker leases of store-backed runs.</summary>
        public LeaseConfig Lease { get; set; }
        /// <summary>Adds the tools of MCP servers (docs/behaviour.md §11).</summary>
        public IReadOnlyList<McpServer> McpServers { get; set; }

        internal Dictionary<string, object> ToJson(HostObject cbs)
        {
            var m = new Dictionary<string, object> { { "id", Id } };
            var tools = new List<object>();
            foreach (var t in Tools ?? new List<Tool>())
            {
                if (t == null) throw new ArgumentException("tools[" + tools.Count + "] is null");
                tools.Add(t.ToJson(cbs));
            }
            m["tools"] = tools;
            if (DynamicModel != null) { var f = DynamicModel; m["model"] = Turn(cbs, t => f(t)); }
            else if (Model != null) m["model"] = Model;
            if (DynamicInstructions != null) { var f = DynamicInstructions; m["instructions"] = Turn(cbs, t => f(t)); }
            else if (Instructions != null) m["instructions"] = Instructions;
            if (Temperature != null) { var f = Temperature; m["temperature"] = Turn(cbs, t => f(t)); }
            if (TopP != null) { var f = TopP; m["topP"] = Turn(cbs, t => f(t)); }
            if (MaxOutputTokens != null) { var f = MaxOutputTokens; m["maxOutputTokens"] = Turn(cbs, t => { var v = f(t); return v == null ? null : (object)(long)v.Value; }); }
            if (MaxSteps != null) m["maxSteps"] = RunOverrides.StepLimit(MaxSteps.Value);
            if (StopWhen != null) m["stopWhen"] = RunOverrides.StopJson(StopWhen, cbs);
            if (ModelRetry != null) m["modelRetry"] = ModelRetry.ToJson();
            if (ToolExecution != null) m["toolExecution"] = ToolExecution.ToJson();
            if (OutputSchema != null) m["outputSchema"] = AgentSdk.ValidatorCallback(cbs, OutputSchema);
            var approve = RequireApproval;
            if (approve != null)
                m["requireApproval"] = cbs.Add(c => c.WithRuntime(1, rt =>
                {
                    var call = ToolCall.From(c.Arg(0));
                    return approve(new ToolCall(call?.Id, call?.Name, rt.ToolCall?.Input), rt);
                }));
            var review = HumanReview;
            if (review != null)
                m["humanReview"] = cbs.Add(c => c.Finish(() => review(new HumanReviewContext(V.Obj(c.Arg(0)))),
                    r => r == null ? null : new Dictionary<string, object> { { "reason", r.Reason }, { "payload", r.Payload } }));
            if (ToolChoice != null) m["toolChoice"] = ToolChoice;
            if (ParallelToolCalls != null) m["parallelToolCalls"] = ParallelToolCalls.Value;
            if (ActiveTools != null) m["activeTools"] = ActiveTools;
            var secrets = new List<object>();
            if (StateSecret != null) secrets.Add(StateSecret);
            if (StateSecrets != null) foreach (var s in StateSecrets) secrets.Add(s);
            if (secrets.Count > 0) m["stateSecrets"] = secrets;
            if (Lease != null)
                m["lease"] = new Dictionary<string, object> { { "durationMs", (long)Lease.Duration.TotalMilliseconds }, { "renewEveryMs", (long)Lease.RenewEvery.TotalMilliseconds } };
            if (McpServers != null && McpServers.Count > 0)
            {
                var servers = new List<object>();
                foreach (var s in McpServers) servers.Add(s.ToJson(cbs));
                m["mcpServers"] = servers;
            }
            return m;
        }

        static Dictionary<string, object> Turn(HostObject cbs, Func<TurnContext, object> f) =>
            cbs.Add(c => c.FinishSync(() => f(new TurnContext(V.Obj(c.Arg(0))))));
    }

    /// <summary>Options a run or continue may override (docs/behaviour.md §3); null = the agent's.</summary>
    public abstract class RunOverrides
    {
        /// <summary>The model client (required).</summary>
        public IModelClient Client { get; set; }
        /// <summary>The model name.</summary>
        public string Model { get; set; }
        /// <summary>The step limit (a negative one is refused with <c>definition_invalid</c>).</summary>
        public int? MaxSteps { get; set; }
        /// <summary>Replaces the agent's stop conditions.</summary>
        public IReadOnlyList<StopCondition> StopWhen { get; set; }
        /// <summary>Model retries.</summary>
        public ModelRetryConfig ModelRetry { get; set; }
        /// <summary>Tool execution (e.g. <c>new ToolExecutionConfig(Concurrency: 4)</c>).</summary>
        public ToolExecutionConfig ToolExecution { get; set; }
        /// <summary>Sampling temperature.</summary>
        public double? Temperature { get; set; }
        /// <summary>Output limit.</summary>
        public int? MaxOutputTokens { get; set; }
        /// <summary>Nucleus sampling.</summary>
        public double? TopP { get; set; }
        /// <summary>Tool choice (docs/behaviour.md §12).</summary>
        public object ToolChoice { get; set; }
        /// <summary>Parallel tool calls.</summary>
        public bool? ParallelToolCalls { get; set; }
        /// <summary>The tools offered (by id).</summary>
        public IReadOnlyList<string> ActiveTools { get; set; }
        /// <summary>Cancels the run: it ends <c>cancelled</c> and is returned (not thrown).</summary>
        public CancellationToken CancellationToken { get; set; }
        /// <summary>Receives every event of the run, one at a time and in order, on a thread
        /// of the SDK's own (not the thread pool). The run does not wait for it, but the run's
        /// Task completes only once the handler has seen every event — except after a
        /// cancellation (the token, or <see cref="AgentStreamResult.Cancel"/>), when the end no
        /// longer waits for a handler that holds one event for more than 500 ms (the events
        /// left still reach it, in order, when it returns). A handler that blocks holds only
        /// its own run's events. What it throws is ignored.</summary>
        public Action<AgentEvent> OnEvent { get; set; }
        /// <summary>The run store for this call (overrides the agent's).</summary>
        public RunStore Store { get; set; }
        /// <summary>The application's state accessor for this call (instead of Store): the
        /// run saves its checkpoints through it, a continue by RunId loads through it. The
        /// paused state itself is the continue's state argument.</summary>
        public IStateAccessor Accessor { get; set; }
        /// <summary>The product's name of <see cref="Accessor"/> (the same setting).</summary>
        public IStateAccessor State { get => Accessor; set => Accessor = value; }

        internal void Apply(Dictionary<string, object> m, HostObject cbs)
        {
            if (Model != null) m["model"] = Model;
            if (MaxSteps != null) m["maxSteps"] = StepLimit(MaxSteps.Value);
            if (StopWhen != null) m["stopWhen"] = StopJson(StopWhen, cbs);
            if (ModelRetry != null) m["modelRetry"] = ModelRetry.ToJson();
            if (ToolExecution != null) m["toolExecution"] = ToolExecution.ToJson();
            if (Temperature != null) m["temperature"] = Temperature.Value;
            if (MaxOutputTokens != null) m["maxOutputTokens"] = (long)MaxOutputTokens.Value;
            if (TopP != null) m["topP"] = TopP.Value;
            if (ToolChoice != null) m["toolChoice"] = ToolChoice;
            if (ParallelToolCalls != null) m["parallelToolCalls"] = ParallelToolCalls.Value;
            if (ActiveTools != null) m["activeTools"] = ActiveTools;
        }

        /// <summary>A step limit as JSON; a negative one is refused here (the core reads a
        /// negative count as 0, which would fail every run with <c>max_steps</c>).</summary>
        internal static long StepLimit(int n)
        {
            if (n < 0) throw new ArgumentException("maxSteps must be a non-negative integer, got " + n);
            return n;
        }

        internal static List<object> StopJson(IReadOnlyList<StopCondition> conds, HostObject cbs)
        {
            var list = new List<object>();
            foreach (var c in conds)
            {
                if (c == null) throw new ArgumentException("stopWhen[" + list.Count + "] is null");
                list.Add(c.ToJson(cbs));
            }
            return list;
        }
    }

    /// <summary>Options of <see cref="Agent.Run"/>.</summary>
    public sealed class RunOptions : RunOverrides
    {
        /// <summary>The run's input (text or any JSON value).</summary>
        public object Input { get; set; }
        /// <summary>The application context.</summary>
        public object Context { get; set; }
        /// <summary>Prior conversation (JSON message objects).</summary>
        public IReadOnlyList<object> Messages { get; set; }
        /// <summary>The W3C traceparent of the caller's span: with tracing on, the run's
        /// spans are its children (a malformed one is ignored, as OpenTelemetry does).</summary>
        public string Traceparent { get; set; }
        /// <summary>Empty options (set Input and Client).</summary>
        public RunOptions() { }
        /// <summary>Options with an input and a client.</summary>
        public RunOptions(object input, IModelClient client) { Input = input; Client = client; }
    }

    /// <summary>Options of <see cref="Agent.ContinueRun"/>: the state (Run, or its JSON text
    /// StateJson, or a RunId of the store or State accessor) and the decisions.</summary>
    public sealed class ContinueOptions : RunOverrides
    {
        /// <summary>The paused state.</summary>
        public RunResult Run { get; set; }
        /// <summary>The paused state's JSON text (instead of Run).</summary>
        public string StateJson { get; set; }
        /// <summary>A run of the store or State accessor (instead of Run/StateJson).</summary>
        public string RunId { get; set; }
        /// <summary>Replaces the application context.</summary>
        public object Context { get; set; }
        /// <summary>Answers a human-review pause.</summary>
        public string HumanInput { get; set; }
        /// <summary>Approved calls.</summary>
        public IReadOnlyList<ToolDecision> Approvals { get; set; }
        /// <summary>Rejected calls.</summary>
        public IReadOnlyList<ToolDecision> Rejections { get; set; }
        /// <summary>Outputs of manual and hitl calls.</summary>
        public IReadOnlyList<ToolOutput> ToolOutputs { get; set; }
        /// <summary>Answers approval-gated calls in the tool's place: the tool never runs, the
        /// output (checked by OutputSchema) is the call's result, and its
        /// <c>tool.completed</c> event has <c>respondedByHuman: true</c>
        /// (docs/behaviour.md §14).</summary>
        public IReadOnlyList<ToolOutput> Responses { get; set; }
        /// <summary>The W3C traceparent of the caller's span (tracing on): the continue's
        /// spans join it instead of the trace recorded in the state.</summary>
        public string Traceparent { get; set; }
        /// <summary>Empty options.</summary>
        public ContinueOptions() { }
        /// <summary>Options continuing <paramref name="run"/>.</summary>
        public ContinueOptions(RunResult run, IModelClient client) { Run = run; Client = client; }

        internal Dictionary<string, object> ToJson()
        {
            var m = new Dictionary<string, object>();
            if (Approvals != null) m["approvals"] = Decisions(Approvals, "approvals");
            if (Rejections != null) m["rejections"] = Decisions(Rejections, "rejections");
            if (ToolOutputs != null) m["toolOutputs"] = Outputs(ToolOutputs, "toolOutputs");
            if (Responses != null) m["responses"] = Outputs(Responses, "responses");
            if (HumanInput != null) m["humanInput"] = HumanInput;
            if (Context != null) m["context"] = Agent.CallerValue("continue context", Context);
            if (Traceparent != null) m["traceparent"] = Traceparent;
            return m;
        }

        /// <summary>Tool outputs or responses as JSON; a null element is an
        /// <see cref="ArgumentException"/> naming it.</summary>
        static List<object> Outputs(IReadOnlyList<ToolOutput> list, string what)
        {
            var l = new List<object>();
            foreach (var o in list)
            {
                if (o == null) throw new ArgumentException(what + "[" + l.Count + "] is null");
                l.Add(new Dictionary<string, object> { { "toolCallId", o.ToolCallId }, { "output", Agent.CallerValue("tool output for " + o.ToolCallId, o.Output) } });
            }
            return l;
        }

        /// <summary>Approvals or rejections as JSON; a null element is an
        /// <see cref="ArgumentException"/> naming it, thrown before anything runs.</summary>
        static List<object> Decisions(IReadOnlyList<ToolDecision> list, string what)
        {
            var l = new List<object>();
            foreach (var d in list)
            {
                if (d == null) throw new ArgumentException(what + "[" + l.Count + "] is null");
                l.Add(d.ToJson());
            }
            return l;
        }
    }

    /// <summary>Runs an <see cref="AgentDefinition"/>; safe for concurrent use. Dispose it to
    /// free its native resources (stops its MCP servers once no run uses them); runs in
    /// flight finish normally.</summary>
    public sealed class Agent : IDisposable
    {
        readonly object gate = new object();
        IntPtr ptr;
        readonly RunStore store;

        /// <summary>The agent's id.</summary>
        public string Id { get; }
        readonly AgentDefinition definition;

        /// <summary>The definition the agent was created from.</summary>
        internal AgentDefinition Definition => definition;

        /// <summary>A tool that runs this agent (docs/behaviour.md §18): the call's
        /// <c>input</c> is the nested run's input and its output the tool's output. When the
        /// nested run pauses, the outer run pauses too, listing its calls as
        /// <c>&lt;outerCallId&gt;/&lt;nestedCallId&gt;</c>; decisions for those ids on the
        /// outer continue go to the nested run. Checked when the outer agent is created
        /// (nesting deeper than 8 is <c>definition_invalid</c>).</summary>
        public Tool AsTool(AsToolOptions options = null)
        {
            options = options ?? new AsToolOptions();
            return new Tool(options.Id ?? Id, Description: options.Description, Parameters: options.Parameters)
            {
                NestedAgent = definition,
            };
        }

        internal Agent(AgentDefinition def)
        {
            if (def == null) throw new ArgumentNullException(nameof(def));
            Id = def.Id;
            definition = def;
            store = def.Store;
            var cbs = new HostObject();
            string text;
            try { text = Json.Write(def.ToJson(cbs)); }
            catch (ArgumentException e) { throw new AgentException(ErrorCodes.DefinitionInvalid, "Invalid agent definition: " + e.Message); }
            var host = cbs.ToNative(false, false);
            // The core takes the host: its release frees the handle, also on failure.
            Native.Check(Native.phaseo_agent_new(Native.Utf8(text), store?.Handle ?? IntPtr.Zero, host, out var p, out var err), err);
            ptr = p;
            GC.KeepAlive(store);
        }

        /// <summary>Frees the native agent.</summary>
        public void Dispose()
        {
            lock (gate)
            {
                if (ptr != IntPtr.Zero) Native.phaseo_agent_free(ptr);
                ptr = IntPtr.Zero;
            }
            GC.SuppressFinalize(this);
        }

        /// <summary>Frees the native agent when the application did not.</summary>
        ~Agent() { if (ptr != IntPtr.Zero) Native.phaseo_agent_free(ptr); }

        /// <summary>Runs the agent until it completes, stops, pauses (status
        /// <c>waiting_for_human</c>), fails (an <see cref="AgentException"/> whose State is the
        /// failed state) or is cancelled (returned, not thrown).</summary>
        public Task<RunResult> Run(RunOptions options)
        {
            var m = RunJson(options);
            return Start(m, options, (agent, opts, client, st, host) =>
            {
                int s = Native.phaseo_agent_run_driven(agent, opts, client, st, host, out var run, out var err);
                return (s, run, err);
            });
        }

        /// <summary>Continues a paused run (docs/behaviour.md §4). A refused continue (a missing decision, an
        /// unknown call id, a run that is not waiting, a bad state) throws an
        /// <see cref="AgentException"/> with code <c>continue_invalid</c> or
        /// <c>state_invalid</c> and no State: the state given is still current.</summary>
        public Task<RunResult> ContinueRun(ContinueOptions options)
        {
            var state = StateArgs(options, out var runId);
            return Start(ContinueJson(options), options, (agent, opts, client, st, host) =>
            {
                int s = Native.phaseo_agent_continue_driven(agent, state, runId, opts, client, st, host, out var run, out var err);
                return (s, run, err);
            });
        }

        /// <summary>Continues a stored run whose worker died from its last checkpoint (docs/behaviour.md
        /// §10). Only the client, store, events and overrides of the options are used.</summary>
        public Task<RunResult> Recover(string runId, ContinueOptions options)
        {
            var id = Native.Utf8(runId);
            return Start(new Dictionary<string, object>(), options, (agent, opts, client, st, host) =>
            {
                int s = Native.phaseo_agent_recover_driven(agent, id, opts, client, st, host, out var run, out var err);
                return (s, run, err);
            });
        }

        /// <summary>Runs the agent as a stream of events (see <see cref="AgentStreamResult"/>).</summary>
        public AgentStreamResult Stream(RunOptions options)
        {
            var m = RunJson(options);
            return StartStream(m, options, (agent, opts, client, st, host) =>
            {
                int s = Native.phaseo_agent_stream(agent, opts, client, st, host, out var h, out var err);
                return (s, h, err);
            });
        }

        /// <summary>Continues a paused run as a stream. A refused continue surfaces from
        /// <see cref="AgentStreamResult.GetResult"/>.</summary>
        public AgentStreamResult ContinueStream(ContinueOptions options)
        {
            var state = StateArgs(options, out var runId);
            return StartStream(ContinueJson(options), options, (agent, opts, client, st, host) =>
            {
                int s = Native.phaseo_agent_continue_stream(agent, state, runId, opts, client, st, host, out var h, out var err);
                return (s, h, err);
            });
        }

        /// <summary>A run's options (without the overrides), its values written and checked.</summary>
        static Dictionary<string, object> RunJson(RunOptions options)
        {
            var m = new Dictionary<string, object> { { "input", CallerValue("run input", options.Input) } };
            if (options.Messages != null) m["messages"] = options.Messages;
            if (options.Context != null) m["context"] = CallerValue("run context", options.Context);
            if (options.Traceparent != null) m["traceparent"] = options.Traceparent;
            return m;
        }

        /// <summary>One of the caller's own values of a run or continue (its input, context, a
        /// supplied output) as JSON. A value JSON cannot hold (a cycle, nesting past 64
        /// levels, a getter that throws, an object of no JSON type, a <see cref="RawJson"/>
        /// whose text is not JSON) is refused as the core
        /// refuses a value past its limits: an <see cref="AgentException"/> with code
        /// <c>state_invalid</c>, "Invalid &lt;what&gt;: &lt;reason&gt;", before anything runs
        /// (a refused continue leaves its state current).</summary>
        internal static object CallerValue(string what, object value)
        {
            if (value == null) return null;
            string text;
            try { text = Json.Write(value); }
            catch (ArgumentException e) { throw new AgentException(ErrorCodes.StateInvalid, "Invalid " + what + ": " + e.Message); }
            // A RawJson inside is written verbatim: the text must still be JSON.
            try { Json.Parse(text); }
            catch (FormatException e) { throw new AgentException(ErrorCodes.StateInvalid, "Invalid " + what + ": not valid JSON: " + e.Message); }
            if (Depth(text) > MaxValueDepth)
                throw new AgentException(ErrorCodes.StateInvalid, "Invalid " + what + ": value is nested more than " + MaxValueDepth + " levels deep");
            return new RawJson(text);
        }

        /// <summary>The core's limit on a value's nesting (docs/behaviour.md §7).</summary>
        const int MaxValueDepth = 64;

        /// <summary>The deepest nesting of arrays and objects in a JSON text.</summary>
        static int Depth(string text)
        {
            int depth = 0, deepest = 0;
            bool inString = false;
            for (int i = 0; i < text.Length; i++)
            {
                char c = text[i];
                if (inString)
                {
                    if (c == '\\') i++;
                    else if (c == '"') inString = false;
                }
                else if (c == '"') inString = true;
                else if (c == '[' || c == '{') deepest = Math.Max(deepest, ++depth);
                else if (c == ']' || c == '}') depth--;
            }
            return deepest;
        }

        /// <summary>A continue's options as JSON: a null approval, rejection or output is a
        /// refused continue (<c>continue_invalid</c>) naming it.</summary>
        static Dictionary<string, object> ContinueJson(ContinueOptions options)
        {
            try { return options.ToJson(); }
            catch (ArgumentException e) { throw new AgentException(ErrorCodes.ContinueInvalid, "Invalid continue options: " + e.Message); }
        }

        static byte[] StateArgs(ContinueOptions o, out byte[] runId)
        {
            runId = null;
            if (o.Run != null) return Native.Utf8(o.Run.ToJson());
            if (o.StateJson != null) return Native.Utf8(o.StateJson);
            if (o.RunId != null) { runId = Native.Utf8(o.RunId); return null; }
            throw new AgentException(ErrorCodes.StateInvalid, "ContinueOptions needs Run (a state), StateJson (its JSON text) or RunId (with a store or State accessor)");
        }

        internal delegate (int Status, IntPtr Handle, IntPtr Error) Starter(IntPtr agent, byte[] options, IntPtr client, IntPtr store, Native.Host host);

        /// <summary>What every entry point prepares: the options JSON, the run's host, the
        /// native client; then the core is called under the agent's lock (so Dispose cannot
        /// free it meanwhile).</summary>
        IntPtr Begin(Dictionary<string, object> m, RunOverrides o, RunStore st, HostObject host, bool done, Starter start)
        {
            string text;
            try
            {
                o.Apply(m, host);
                text = Json.Write(m);
            }
            catch (ArgumentException e) { throw new AgentException(ErrorCodes.DefinitionInvalid, "Invalid run options: " + e.Message); }
            var client = ClientHandle.For(o.Client);
            try
            {
                lock (gate)
                {
                    if (ptr == IntPtr.Zero) throw new AgentException(ErrorCodes.InvalidArgument, "the agent was disposed");
                    // The core takes the run host (its release frees the handle), also on failure.
                    var r = start(ptr, Native.Utf8(text), client.Ptr, st?.Handle ?? IntPtr.Zero, host.ToNative(host.Events != null, done));
                    GC.KeepAlive(st);
                    Native.Check(r.Status, r.Error);
                    return r.Handle;
                }
            }
            finally { client.Release(); }
        }

        Task<RunResult> Start(Dictionary<string, object> m, RunOverrides o, Starter start)
        {
            if (o.Client == null) throw new AgentException(ErrorCodes.DefinitionInvalid, "RunOptions.Client is required");
            var st = RunStore.For(o.Store, o.Accessor);
            var events = o.OnEvent == null ? null : new EventDelivery(o.OnEvent);
            var host = new HostObject { Events = events };
            var run = new RunHandle(new object[] { this, o.Client, st, host }, events);
            host.OnDone = run.Ended;
            // Without a handler the driver reports the end; with one, the end is queued after
            // the run's events, so that every event is delivered before the Task completes.
            run.Set(Begin(m, o, st, host, events != null, start));
            RunDriver.Start(run, events == null);
            // The registration calls into the core on the cancelling thread: no pool thread
            // is needed for the run to learn it was cancelled.
            if (o.CancellationToken.CanBeCanceled) run.Registered(o.CancellationToken.Register(run.Cancel));
            return run.Task;
        }

        AgentStreamResult StartStream(Dictionary<string, object> m, RunOverrides o, Starter start)
        {
            if (o.Client == null) throw new AgentException(ErrorCodes.DefinitionInvalid, "RunOptions.Client is required");
            var st = RunStore.For(o.Store, o.Accessor);
            var events = o.OnEvent == null ? null : new EventDelivery(o.OnEvent);
            var host = new HostObject { Events = events };
            var handle = Begin(m, o, st, host, false, start);
            var s = new AgentStreamResult(handle, new object[] { this, o.Client, st, host }, events);
            if (o.CancellationToken.CanBeCanceled) o.CancellationToken.Register(s.Cancel);
            return s;
        }
    }

    /// <summary>A PhaseoRun handle and the run's Task: cancelled and freed under one lock, so
    /// a late cancellation never touches a freed handle. The Task completes on the thread
    /// that learns of the run's end (its driver, or the dispatch thread when the run has an
    /// event handler) once the run's events were delivered; its
    /// continuations run asynchronously, so no application code runs on that thread.</summary>
    internal sealed class RunHandle
    {
        readonly object gate = new object();
        readonly object keep;
        readonly EventDelivery events;
        readonly TaskCompletionSource<RunResult> tcs = new TaskCompletionSource<RunResult>(TaskCreationOptions.RunContinuationsAsynchronously);
        IntPtr ptr;
        bool set, ended, freed, completed;
        CancellationTokenRegistration registration;

        internal RunHandle(object keep, EventDelivery events) { this.keep = keep; this.events = events; }

        internal Task<RunResult> Task => tcs.Task;

        /// <summary>The starter returned the handle.</summary>
        internal void Set(IntPtr p)
        {
            bool complete;
            lock (gate) { ptr = p; set = true; complete = ended; }
            if (complete) Complete();
        }

        /// <summary>The run ended (reported by its driver, or by the core on the dispatch
        /// thread); once.</summary>
        internal void Ended()
        {
            bool complete;
            lock (gate)
            {
                if (ended) return;
                ended = true;
                complete = set;
            }
            if (complete) Complete();
        }

        /// <summary>Keeps the token's registration, to dispose of it when the run ends.</summary>
        internal void Registered(CancellationTokenRegistration r)
        {
            bool now;
            lock (gate) { now = completed; if (!now) registration = r; }
            if (now) r.Dispose();
        }

        /// <summary>Polls the driven run (its <see cref="RunDriver"/>, one thread at a time):
        /// false once it has ended. The poll runs no C# code (the host is a queue host), so
        /// holding the lock is short.</summary>
        internal bool Poll(IntPtr driver)
        {
            lock (gate)
            {
                if (freed || ptr == IntPtr.Zero) return false;
                int s = Native.phaseo_queue_run_poll(ptr, driver, out var err);
                if (s == Native.ERROR) throw AgentException.FromErrorJson(Native.Take(err));
                return s == Native.PENDING;
            }
        }

        /// <summary>A poll was refused (a defect of the SDK): the run is cancelled and its
        /// Task fails with the reason instead of never completing.</summary>
        internal void Failed(Exception e)
        {
            lock (gate) { if (!freed && ptr != IntPtr.Zero) Native.phaseo_run_cancel(ptr); }
            tcs.TrySetException(e);
        }

        /// <summary>Cancels the run; its end stops waiting for a handler that does not return.</summary>
        internal void Cancel()
        {
            events?.Abandon();
            lock (gate) { if (!freed && ptr != IntPtr.Zero) Native.phaseo_run_cancel(ptr); }
        }

        // Reads the ended run's outcome (ready: phaseo_run_wait returns at once) and frees
        // the handle; the Task completes once the run's events were delivered.
        void Complete()
        {
            RunResult result = null;
            Exception error = null;
            lock (gate)
            {
                try
                {
                    int s = Native.phaseo_run_take_state(ptr, out var state, out var head, out var err);
                    if (s == Native.OK) result = RunResult.FromCore(new StateHandle(state), Native.Take(head));
                    else error = AgentException.FromErrorJson(Native.Take(err));
                }
                catch (Exception e) { error = e; }
                Native.phaseo_run_free(ptr);
                freed = true;
            }
            GC.KeepAlive(keep);
            Action finish = () =>
            {
                CancellationTokenRegistration r;
                lock (gate) { completed = true; r = registration; registration = default(CancellationTokenRegistration); }
                // Waits only while this run's own Cancel is running on another thread (short).
                r.Dispose();
                if (error != null) tcs.TrySetException(error);
                else tcs.TrySetResult(result);
            };
            if (events == null) finish();
            else events.WhenDelivered(finish);
        }
    }
}
