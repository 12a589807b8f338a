// C# conformance runner: runs the cross-language JSON cases through the PUBLIC C# API of
// the C# binding (bindings-dotnet, assembly Phaseo.AgentSdk), with real C# delegates as
// executors, validators, predicates, hooks and a C# model client (tests/conformance/README.md).
//
//   tests/conformance/csharp_runner.sh [--stop-after N --save-state DIR |
//       --resume-state DIR --from-step N] PATH...
//
// Executor forms: absent flags and "asGenerator" give an async lambda (progress through
// runtime.EmitProgress; C# has no async generators before C# 8); "async": false gives a
// synchronous body returning a completed Task. Entry points: a case whose file name sorts
// at an odd index among the *.json files of its folder runs through agent.Stream /
// agent.ContinueStream (awaiting GetResult, events still through OnEvent); every other
// case through agent.Run / agent.ContinueRun.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using PhaseoAgentSdk;

namespace PhaseoConformance
{
    using Obj = Dictionary<string, object>;

    sealed class CaseError : Exception
    {
        public CaseError(string msg) : base(msg) { }
    }

    static class U
    {
        public static CaseError Fail(string msg) => new CaseError(msg);

        public static HashSet<string> Set(params string[] keys) => new HashSet<string>(keys);

        public static Obj O(object v) => v as Obj;
        public static List<object> L(object v) => v as List<object>;
        public static List<object> AsList(object v) => v as List<object> ?? new List<object>();
        public static object Get(Obj m, string k) => m != null && m.TryGetValue(k, out var v) ? v : null;
        public static bool Has(Obj m, string k) => m != null && m.ContainsKey(k);

        public static object Clone(object v) => v == null ? null : Json.Parse(Json.Write(v));

        static bool IsNum(object v) => v is long || v is double || v is ulong || v is int;
        static double D(object v) => Convert.ToDouble(v, CultureInfo.InvariantCulture);

        public static bool JsonEq(object a, object b)
        {
            if (a is List<object> x)
            {
                var y = b as List<object>;
                if (y == null || x.Count != y.Count) return false;
                for (int i = 0; i < x.Count; i++) if (!JsonEq(x[i], y[i])) return false;
                return true;
            }
            if (a is Obj xo)
            {
                var yo = b as Obj;
                if (yo == null) return false;
                foreach (var kv in xo) if (!JsonEq(kv.Value, Get(yo, kv.Key))) return false;
                foreach (var kv in yo) if (!xo.ContainsKey(kv.Key) && !JsonEq(null, kv.Value)) return false;
                return true;
            }
            if (a == null) return b == null;
            if (IsNum(a) && IsNum(b)) return D(a) == D(b);
            if (b is List<object> || b is Obj) return false;
            return a.Equals(b);
        }

        public static string Show(object v)
        {
            string s;
            try { s = Json.Write(v); } catch (Exception) { s = "" + v; }
            return s.Length > 300 ? s.Substring(0, 300) + "…" : s;
        }

        public static string Text(object v) => v as string ?? Show(v);

        public static void Diff(string key, object want, object got)
        {
            want = Clone(want); got = Clone(got);
            if (!JsonEq(want, got)) throw Fail(key + ": expected " + Show(want) + ", got " + Show(got));
        }

        public static void CheckKeys(object v, HashSet<string> allowed, string what)
        {
            var m = O(v);
            if (m == null) return;
            foreach (var k in m.Keys.OrderBy(k => k, StringComparer.Ordinal))
                if (!allowed.Contains(k)) throw Fail(what + ": unsupported key \"" + k + "\"");
        }

        public static KeyValuePair<string, object> Single(object v, string what)
        {
            var m = O(v);
            if (m == null || m.Count != 1) throw Fail(what + " must be an object with one key: " + Show(v));
            return m.First();
        }

        public static double Num(object v, string what)
        {
            if (!IsNum(v)) throw Fail(what + ": expected a number, got " + Show(v));
            return D(v);
        }

        public static IEnumerable<string> SortedKeys(Obj m) => (m ?? new Obj()).Keys.OrderBy(k => k, StringComparer.Ordinal);
    }

    /// <summary>What the executors of one step did.</summary>
    sealed class Observations
    {
        readonly object gate = new object();
        List<string> executed = new List<string>(); // every start: a retried call once per attempt
        HashSet<string> cancelled = new HashSet<string>();
        int active, maxConcurrent;

        public void Reset() { lock (gate) { executed = new List<string>(); cancelled = new HashSet<string>(); active = 0; maxConcurrent = 0; } }
        public void Start(string id) { lock (gate) { executed.Add(id); active++; if (active > maxConcurrent) maxConcurrent = active; } }
        public void End() { lock (gate) active--; }
        public void Cancel(string id) { lock (gate) cancelled.Add(id); }
        public int Active { get { lock (gate) return active; } }
        public List<object> Executed { get { lock (gate) return executed.OrderBy(x => x, StringComparer.Ordinal).Cast<object>().ToList(); } }
        public List<object> Cancelled { get { lock (gate) return cancelled.OrderBy(x => x, StringComparer.Ordinal).Cast<object>().ToList(); } }
        public int MaxConcurrent { get { lock (gate) return maxConcurrent; } }
    }

    /// <summary>A C# model client replaying the case's script and recording each request.</summary>
    sealed class ScriptedModel : IModelClient
    {
        readonly object gate = new object();
        readonly List<object> entries;
        public int Cursor;
        public List<Obj> Requests = new List<Obj>();
        public string RanOut;

        public ScriptedModel(List<object> entries, int cursor) { this.entries = entries; Cursor = cursor; }

        static Obj Summary(ModelRequest r)
        {
            var msgs = r.Messages;
            int start = msgs.Count;
            while (start > 0 && msgs[start - 1].Role == "tool") start--;
            var toolMessages = new List<object>();
            for (int i = start; i < msgs.Count; i++)
                toolMessages.Add(new Obj { { "toolCallId", msgs[i].ToolCallId }, { "content", msgs[i].Content }, { "isError", msgs[i].IsError } });
            object lastUser = null;
            var toolCalls = new List<object>(); // of the last assistant message with tool calls
            foreach (var m in msgs)
            {
                if (m.Role == "user") lastUser = m.Content;
                if (m.ToolCalls != null && m.ToolCalls.Count > 0)
                    toolCalls = m.ToolCalls.Select(c => (object)new Obj { { "id", c.Id }, { "name", c.Name }, { "arguments", U.Clone(c.Input) } }).ToList();
            }
            var tools = new List<object>();
            var specs = new List<object>();
            foreach (var t in r.Tools)
            {
                tools.Add(t.Id);
                specs.Add(new Obj { { "id", t.Id }, { "strict", t.Strict }, { "inputExamples", U.Clone(t.InputExamples) } });
            }
            return new Obj
            {
                { "toolMessages", toolMessages }, { "tools", tools }, { "context", U.Clone(r.Context) },
                { "temperature", r.Temperature }, { "model", r.Model }, { "instructions", r.Instructions },
                { "lastUserMessage", lastUser }, { "maxOutputTokens", r.MaxOutputTokens == null ? null : (object)(long)r.MaxOutputTokens.Value },
                { "topP", r.TopP }, { "toolChoice", U.Clone(r.ToolChoice) }, { "parallelToolCalls", r.ParallelToolCalls }, { "toolSpecs", specs },
                { "toolCalls", toolCalls },
            };
        }

        public Task<ModelResponse> Generate(ModelRequest request)
        {
            var summary = Summary(request);
            lock (gate)
            {
                Requests.Add(summary);
                int index = Cursor++;
                if (index >= entries.Count)
                {
                    RanOut = "case error: the scripted model ran out of responses (" + entries.Count + " scripted)";
                    throw new InvalidOperationException(RanOut);
                }
                var entry = U.O(entries[index]);
                if (U.Has(entry, "fail"))
                {
                    var f = U.Get(entry, "fail");
                    throw new Exception(f is Obj fm ? U.Text(U.Get(fm, "message")) : U.Text(f));
                }
                return Task.FromResult(ModelResponse.FromValue(U.Clone(entry)));
            }
        }
    }

    sealed class Outcome
    {
        public Obj State;
        public AgentException Error;
        public List<AgentEvent> Events;
        public List<Obj> Requests;
        public List<object> Executed, Cancelled;
        public int MaxConcurrent;
        public double WallMs;
    }

    static class Program
    {
        static readonly string[] OverrideKeys = { "model", "maxSteps", "stopWhen", "modelRetry", "toolExecution", "temperature",
            "maxOutputTokens", "topP", "toolChoice", "parallelToolCalls", "activeTools" };
        static readonly HashSet<string> CaseKeys = U.Set("name", "description", "agent", "tools", "model", "steps", "expectDefinitionError");
        static readonly HashSet<string> AgentKeys = U.Set("id", "model", "instructions", "maxSteps", "stopWhen", "modelRetry", "toolExecution",
            "temperature", "maxOutputTokens", "topP", "outputSchema", "requireApproval", "humanReview", "stateSecret", "toolChoice",
            "parallelToolCalls", "activeTools");
        static readonly HashSet<string> ToolKeys = U.Set("id", "description", "asAgent", "parameters", "inputSchema", "outputSchema", "eventSchema",
            "timeoutMs", "onError", "requireApproval", "nextTurnParams", "manual", "onToolCalled", "onResponseReceived", "behavior",
            "asGenerator", "async", "strict", "inputExamples", "maxCalls", "retry", "deferLoading");
        static readonly HashSet<string> ModelEntryKeys = U.Set("text", "toolCalls", "usage", "cost", "finishReason", "fail");
        static readonly HashSet<string> RunKeys = new HashSet<string>(new[] { "input", "context", "messages", "cancelAfterMs" }.Concat(OverrideKeys));
        static readonly HashSet<string> ContinueKeys = new HashSet<string>(new[] { "approvals", "rejections", "toolOutputs", "responses", "humanInput", "context", "cancelAfterMs" }.Concat(OverrideKeys));
        static readonly HashSet<string> StepKeys = U.Set("run", "continue", "expect");
        static readonly HashSet<string> ExpectKeys = U.Set("status", "output", "stopReason", "pauseKind", "context", "error", "pending", "executed",
            "cancelled", "maxConcurrent", "modelRequests", "events", "toolEvents", "preliminaryResults", "usage", "minWallMs", "maxWallMs");
        static readonly HashSet<string> ErrorKeys = U.Set("code", "messageContains");
        static readonly HashSet<string> RequestKeys = U.Set("toolMessages", "tools", "context", "temperature", "model", "instructions",
            "lastUserMessage", "maxOutputTokens", "topP", "toolChoice", "parallelToolCalls", "toolSpecs", "toolCalls");
        static readonly HashSet<string> ToolSpecKeys = U.Set("id", "strict", "inputExamples");
        static readonly HashSet<string> ToolMessageKeys = U.Set("toolCallId", "content", "contentContains", "isError");
        static readonly HashSet<string> UsageKeys = U.Set("inputTokens", "outputTokens", "cachedTokens", "totalTokens", "cost");
        static readonly HashSet<string> ToolExecKeys = U.Set("toolConcurrency", "onError", "maxOutputChars", "maxToolCalls");
        static readonly HashSet<string> ModelRetryKeys = U.Set("maxRetries", "backoffMs");
        static readonly HashSet<string> DecisionKeys = U.Set("toolCallId", "reason");
        static readonly HashSet<string> ApprovalKeys = U.Set("toolCallId", "reason", "editedInput");
        static readonly HashSet<string> ToolRetryKeys = U.Set("maxAttempts", "backoffMs");
        static readonly HashSet<string> RequestCallKeys = U.Set("id", "name", "arguments");
        static readonly HashSet<string> ToolOutputKeys = U.Set("toolCallId", "output");
        static readonly HashSet<string> NextTurnKeys = U.Set("model", "instructions", "temperature", "maxOutputTokens", "topP", "tools", "toolChoice");
        static readonly HashSet<string> Actions = U.Set("return", "returnInput", "throw", "returnContext", "returnRuntime", "progress",
            "setContext", "sleepMs", "blockingSleepMs", "throwUntilAttempt", "returnAttempt", "returnIdempotencyKey");
        static readonly HashSet<string> ToolEventTypes = U.Set("tool.started", "tool.preliminary_result", "tool.completed", "tool.failed",
            "tool.retrying");

        // ---------------------------------------------------------------------------------
        // The executor: a real C# delegate performing the case's actions

        static Func<object, RuntimeContext, Task<object>> Executor(Obj spec, Observations o)
        {
            var acts = new List<KeyValuePair<string, object>>();
            foreach (var a in U.AsList(U.Get(spec, "behavior")))
            {
                var kv = BehaviorAction(a);
                if (!Actions.Contains(kv.Key)) throw U.Fail("tool \"" + U.Get(spec, "id") + "\": unsupported behavior action \"" + kv.Key + "\"");
                acts.Add(kv);
            }
            if (U.Get(spec, "async") is bool b && !b)
                return (input, rt) => Task.FromResult(RunSync(acts, input, rt, o));
            return (input, rt) => RunAsync(acts, input, rt, o);
        }

        /// <summary>One action: a single key, or throwUntilAttempt with its message (its value
        /// is then the whole action).</summary>
        static KeyValuePair<string, object> BehaviorAction(object a)
        {
            var m = U.O(a);
            if (m != null && m.Count == 2 && U.Has(m, "throwUntilAttempt"))
            {
                if (!(U.Get(m, "message") is string)) throw U.Fail("throwUntilAttempt needs a message: " + U.Show(a));
                return new KeyValuePair<string, object>("throwUntilAttempt", m);
            }
            var kv = U.Single(a, "behavior action");
            if (kv.Key == "throwUntilAttempt") throw U.Fail("throwUntilAttempt needs a message: " + U.Show(a));
            return kv;
        }

        /// <summary>Throws the action's message while the attempt is below its number.</summary>
        static void ThrowUntilAttempt(object action, RuntimeContext rt)
        {
            var m = U.O(action);
            if (rt.Attempt < U.Num(m["throwUntilAttempt"], "throwUntilAttempt")) throw new InvalidOperationException((string)m["message"]);
        }

        /// <summary>The runtime's idempotency key with its run id (checked) written as <c>&lt;run&gt;</c>.</summary>
        static object IdempotencyKey(RuntimeContext rt)
        {
            var key = rt.IdempotencyKey ?? "";
            if (string.IsNullOrEmpty(rt.RunId) || !key.StartsWith(rt.RunId + ":", StringComparison.Ordinal))
                throw new InvalidOperationException("idempotency key \"" + key + "\" does not start with the run id \"" + rt.RunId + "\"");
            return "<run>:" + key.Substring(rt.RunId.Length + 1);
        }

        static object Runtime(RuntimeContext rt, string id)
        {
            if (string.IsNullOrEmpty(rt.RunId)) throw new InvalidOperationException("runtime.RunId is empty");
            return new Obj { { "runId", "<run>" }, { "agentId", rt.AgentId }, { "stepIndex", (long)rt.StepIndex }, { "toolCallId", id } };
        }

        static async Task<object> RunAsync(List<KeyValuePair<string, object>> acts, object input, RuntimeContext rt, Observations o)
        {
            var id = rt.ToolCall.Id;
            o.Start(id);
            try
            {
                foreach (var a in acts)
                {
                    switch (a.Key)
                    {
                        case "return": return U.Clone(a.Value);
                        case "returnInput": return input;
                        case "throw": throw new InvalidOperationException(U.Text(a.Value));
                        case "returnContext": return rt.Context;
                        case "returnRuntime": return Runtime(rt, id);
                        case "progress": await rt.EmitProgress(U.Clone(a.Value)); break;
                        case "setContext": rt.SetContext(U.Clone(a.Value)); break;
                        case "sleepMs":
                            try { await Task.Delay(TimeSpan.FromMilliseconds(U.Num(a.Value, "sleepMs")), rt.CancellationToken); }
                            catch (OperationCanceledException) { o.Cancel(id); throw; }
                            break;
                        case "blockingSleepMs": Thread.Sleep(TimeSpan.FromMilliseconds(U.Num(a.Value, "blockingSleepMs"))); break;
                        case "throwUntilAttempt": ThrowUntilAttempt(a.Value, rt); break;
                        case "returnAttempt": return (long)rt.Attempt;
                        case "returnIdempotencyKey": return IdempotencyKey(rt);
                    }
                }
                return null;
            }
            finally { o.End(); }
        }

        static object RunSync(List<KeyValuePair<string, object>> acts, object input, RuntimeContext rt, Observations o)
        {
            var id = rt.ToolCall.Id;
            o.Start(id);
            try
            {
                foreach (var a in acts)
                {
                    switch (a.Key)
                    {
                        case "return": return U.Clone(a.Value);
                        case "returnInput": return input;
                        case "throw": throw new InvalidOperationException(U.Text(a.Value));
                        case "returnContext": return rt.Context;
                        case "returnRuntime": return Runtime(rt, id);
                        case "progress": rt.EmitProgress(U.Clone(a.Value)).Wait(); break;
                        case "setContext": rt.SetContext(U.Clone(a.Value)); break;
                        case "sleepMs":
                            if (rt.CancellationToken.WaitHandle.WaitOne(TimeSpan.FromMilliseconds(U.Num(a.Value, "sleepMs"))))
                            {
                                o.Cancel(id);
                                throw new OperationCanceledException(rt.CancellationToken);
                            }
                            break;
                        case "blockingSleepMs": Thread.Sleep(TimeSpan.FromMilliseconds(U.Num(a.Value, "blockingSleepMs"))); break;
                        case "throwUntilAttempt": ThrowUntilAttempt(a.Value, rt); break;
                        case "returnAttempt": return (long)rt.Attempt;
                        case "returnIdempotencyKey": return IdempotencyKey(rt);
                    }
                }
                return null;
            }
            finally { o.End(); }
        }

        // ---------------------------------------------------------------------------------
        // Validators, predicates and hooks as C# delegates

        static Func<object, object> SchemaValidator(object schema)
        {
            var check = AgentSdk.JsonSchema(schema);
            return v => check(v);
        }

        static bool InputEquals(Obj want, object input)
        {
            var m = U.O(U.Clone(input));
            if (m == null) return false;
            foreach (var kv in want)
                if (!m.TryGetValue(kv.Key, out var got) || !U.JsonEq(kv.Value, got)) return false;
            return true;
        }

        static void ToolApproval(object rule, Tool t)
        {
            if (rule == null) return;
            if (rule is bool b) { t.RequireApproval = b; return; }
            var r = U.O(rule);
            var want = U.O(U.Get(r, "inputEquals"));
            if (r == null || r.Count != 1 || want == null) throw U.Fail("tool requireApproval: unsupported rule " + U.Show(rule));
            t.Approval = (input, _) => Task.FromResult(InputEquals(want, input));
        }

        static Func<ToolCall, RuntimeContext, Task<bool>> AgentApproval(object rule)
        {
            var kv = U.Single(rule, "agent requireApproval");
            if (kv.Key == "toolIds" && kv.Value is List<object> ids)
                return (call, _) => Task.FromResult(ids.Any(id => (id as string) == call.Name));
            if (kv.Key == "inputEquals" && kv.Value is Obj want)
                return (call, _) => Task.FromResult(InputEquals(want, call.Input));
            throw U.Fail("agent requireApproval: unsupported rule " + U.Show(rule));
        }

        static void OnToolCalled(object form, Tool t)
        {
            if (form == null) return;
            if (form is string s)
            {
                if (s != "pause") throw U.Fail("onToolCalled: unsupported form " + U.Show(form));
                t.OnToolCalled = (input, rt) => Task.FromResult(ValueTuple.Create(false, (object)null));
                return;
            }
            var f = U.O(form);
            if (f == null || f.Count != 1 || !f.ContainsKey("return")) throw U.Fail("onToolCalled: unsupported form " + U.Show(form));
            var v = f["return"];
            t.OnToolCalled = (input, rt) => Task.FromResult(ValueTuple.Create(true, U.Clone(v)));
        }

        static void OnResponseReceived(object form, Tool t)
        {
            if (form == null) return;
            var f = U.O(form);
            var key = U.Get(f, "wrap") as string;
            if (f == null || f.Count != 1 || key == null) throw U.Fail("onResponseReceived: unsupported form " + U.Show(form));
            t.OnResponseReceived = (output, rt) => Task.FromResult<object>(new Obj { { key, output } });
        }

        static Func<HumanReviewContext, Task<HumanReviewRequest>> HumanReview(object form)
        {
            var f = U.O(form);
            if (f == null || f.Count != 1 || !f.ContainsKey("pauseOnFinal")) throw U.Fail("humanReview: unsupported form " + U.Show(form));
            var spec = f["pauseOnFinal"];
            U.CheckKeys(spec, U.Set("reason", "payload"), "humanReview.pauseOnFinal");
            var s = U.O(spec);
            return ctx =>
            {
                int users = ctx.Messages.Count(m => m.Role == "user");
                if (ctx.IsFinal && users == 1)
                    return Task.FromResult(new HumanReviewRequest(U.Get(s, "reason") as string, U.Clone(U.Get(s, "payload"))));
                return Task.FromResult<HumanReviewRequest>(null);
            };
        }

        static List<StopCondition> StopConditions(object v)
        {
            if (v == null) return null;
            var items = U.L(v) ?? new List<object> { v };
            var list = new List<StopCondition>();
            foreach (var item in items)
            {
                var kv = U.Single(item, "stopWhen condition");
                switch (kv.Key)
                {
                    case "stepCountIs": list.Add(AgentSdk.StepCountIs((int)U.Num(kv.Value, kv.Key))); break;
                    case "maxTokensUsed": list.Add(AgentSdk.MaxTokensUsed((int)U.Num(kv.Value, kv.Key))); break;
                    case "maxCost": list.Add(AgentSdk.MaxCost(U.Num(kv.Value, kv.Key))); break;
                    case "maxDuration": list.Add(AgentSdk.MaxDuration(TimeSpan.FromMilliseconds(U.Num(kv.Value, kv.Key)))); break;
                    case "hasToolCall": list.Add(AgentSdk.HasToolCall(U.Text(kv.Value))); break;
                    case "finishReasonIs": list.Add(AgentSdk.FinishReasonIs(U.Text(kv.Value))); break;
                    default: throw U.Fail("stopWhen: unsupported condition \"" + kv.Key + "\"");
                }
            }
            return list;
        }

        static ToolExecutionConfig ToolExecution(object v)
        {
            if (v == null) return null;
            U.CheckKeys(v, ToolExecKeys, "toolExecution");
            var m = U.O(v);
            var c = new ToolExecutionConfig(0);
            if (U.Has(m, "toolConcurrency")) c.Concurrency = (int)U.Num(m["toolConcurrency"], "toolConcurrency");
            if (U.Has(m, "onError")) c.OnError = U.Text(m["onError"]);
            if (U.Has(m, "maxOutputChars")) c.MaxOutputChars = (int)U.Num(m["maxOutputChars"], "maxOutputChars");
            if (U.Has(m, "maxToolCalls")) c.MaxToolCalls = (int)U.Num(m["maxToolCalls"], "maxToolCalls");
            return c;
        }

        static ModelRetryConfig ModelRetry(object v)
        {
            if (v == null) return null;
            U.CheckKeys(v, ModelRetryKeys, "modelRetry");
            var m = U.O(v);
            var c = new ModelRetryConfig(0, TimeSpan.FromMilliseconds(250));
            if (U.Has(m, "maxRetries")) c.MaxRetries = (int)U.Num(m["maxRetries"], "maxRetries");
            if (U.Has(m, "backoffMs")) c.Backoff = TimeSpan.FromMilliseconds(U.Num(m["backoffMs"], "backoffMs"));
            return c;
        }

        static NextTurnParams NextTurn(object v)
        {
            if (v == null) return null;
            U.CheckKeys(v, NextTurnKeys, "nextTurnParams");
            var m = U.O(v) ?? throw U.Fail("nextTurnParams: expected an object, got " + U.Show(v));
            var p = new NextTurnParams(U.Get(m, "model") as string, U.Get(m, "instructions") as string);
            if (U.Get(m, "temperature") != null) p.Temperature = U.Num(m["temperature"], "temperature");
            if (U.Get(m, "topP") != null) p.TopP = U.Num(m["topP"], "topP");
            if (U.Get(m, "maxOutputTokens") != null) p.MaxOutputTokens = (int)U.Num(m["maxOutputTokens"], "maxOutputTokens");
            if (U.Get(m, "tools") is List<object> ids) p.Tools = ids.Select(id => new Tool(U.Text(id))).ToList();
            if (U.Has(m, "toolChoice")) p.ToolChoice = U.Clone(m["toolChoice"]);
            return p;
        }

        // ---------------------------------------------------------------------------------
        // The agent

        static Tool BuildTool(Obj spec, Observations o)
        {
            U.CheckKeys(spec, ToolKeys, "tool");
            var id = U.Get(spec, "id") as string ?? throw U.Fail("tool without id");
            var t = new Tool(id) { Description = U.Get(spec, "description") as string, Parameters = U.Get(spec, "parameters") as Obj };
            if (!(U.Get(spec, "manual") is bool manual && manual)) t.Execute = Executor(spec, o);
            if (U.Get(spec, "timeoutMs") != null) t.Timeout = TimeSpan.FromMilliseconds(U.Num(spec["timeoutMs"], "timeoutMs"));
            ToolApproval(U.Get(spec, "requireApproval"), t);
            t.OnError = U.Get(spec, "onError") as string;
            if (U.Get(spec, "inputSchema") != null) t.InputSchema = SchemaValidator(spec["inputSchema"]);
            if (U.Get(spec, "outputSchema") != null) t.OutputSchema = SchemaValidator(spec["outputSchema"]);
            if (U.Get(spec, "eventSchema") != null) t.EventSchema = SchemaValidator(spec["eventSchema"]);
            OnToolCalled(U.Get(spec, "onToolCalled"), t);
            OnResponseReceived(U.Get(spec, "onResponseReceived"), t);
            t.NextTurnParams = NextTurn(U.Get(spec, "nextTurnParams"));
            if (U.Get(spec, "strict") is bool strict) t.Strict = strict;
            if (U.Get(spec, "inputExamples") is List<object> ex) t.InputExamples = ex;
            if (U.Get(spec, "deferLoading") is bool deferred) t.DeferLoading = deferred;
            if (U.Get(spec, "maxCalls") != null) t.MaxCalls = (int)U.Num(spec["maxCalls"], "maxCalls");
            if (U.Get(spec, "retry") != null)
            {
                U.CheckKeys(spec["retry"], ToolRetryKeys, "retry");
                var r = U.O(spec["retry"]);
                t.Retry = new ToolRetry(U.Has(r, "maxAttempts") ? (int)U.Num(r["maxAttempts"], "retry.maxAttempts") : 1);
                if (U.Has(r, "backoffMs")) t.Retry.Backoff = TimeSpan.FromMilliseconds(U.Num(r["backoffMs"], "retry.backoffMs"));
            }
            return AgentSdk.DefineTool(t);
        }

        /// <summary>The agent, or null and the error the binding refused the definition with.</summary>
        // {id, description?, asAgent: {agent, tools}}: the nested agent built like the case's
        // own and registered with AsTool (docs/behaviour.md §18).
        static Tool AgentTool(Obj spec, Observations o)
        {
            U.CheckKeys(spec, U.Set("id", "description", "asAgent"), "tool");
            var nested = U.O(spec["asAgent"]) ?? throw U.Fail("asAgent must be an object");
            U.CheckKeys(nested, U.Set("agent", "tools"), "asAgent");
            var agent = BuildAgent(nested, o, out var refused);
            if (refused != null) throw refused;
            return agent.AsTool(new AsToolOptions { Id = U.Get(spec, "id") as string, Description = U.Get(spec, "description") as string });
        }

        static Agent BuildAgent(Obj c, Observations o, out AgentException refused)
        {
            refused = null;
            var a = U.O(U.Get(c, "agent")) ?? throw U.Fail("case without agent");
            U.CheckKeys(a, AgentKeys, "agent");
            try
            {
                var def = new AgentDefinition { Id = U.Get(a, "id") as string };
                var tools = new List<Tool>();
                foreach (var t in U.AsList(U.Get(c, "tools")))
                {
                    var spec = U.O(t) ?? throw U.Fail("tool must be an object");
                    tools.Add(spec.ContainsKey("asAgent") ? AgentTool(spec, o) : BuildTool(spec, o));
                }
                def.Tools = tools;
                def.ToolChoice = U.Clone(U.Get(a, "toolChoice"));
                if (U.Get(a, "parallelToolCalls") is bool p) def.ParallelToolCalls = p;
                if (U.Get(a, "activeTools") is List<object> ids) def.ActiveTools = ids.Select(U.Text).ToList();
                def.Model = U.Get(a, "model") as string;
                def.Instructions = U.Get(a, "instructions") as string;
                if (U.Get(a, "maxSteps") != null) def.MaxSteps = (int)U.Num(a["maxSteps"], "maxSteps");
                if (U.Get(a, "temperature") != null) { var f = U.Num(a["temperature"], "temperature"); def.Temperature = _ => f; }
                if (U.Get(a, "topP") != null) { var f = U.Num(a["topP"], "topP"); def.TopP = _ => f; }
                if (U.Get(a, "maxOutputTokens") != null) { var f = (int)U.Num(a["maxOutputTokens"], "maxOutputTokens"); def.MaxOutputTokens = _ => f; }
                def.StopWhen = StopConditions(U.Get(a, "stopWhen"));
                def.ModelRetry = ModelRetry(U.Get(a, "modelRetry"));
                def.ToolExecution = ToolExecution(U.Get(a, "toolExecution"));
                if (U.Get(a, "outputSchema") != null) def.OutputSchema = SchemaValidator(a["outputSchema"]);
                if (U.Get(a, "requireApproval") != null) def.RequireApproval = AgentApproval(a["requireApproval"]);
                if (U.Get(a, "humanReview") != null) def.HumanReview = HumanReview(a["humanReview"]);
                def.StateSecret = U.Get(a, "stateSecret") as string;
                return AgentSdk.CreateAgent(def);
            }
            catch (AgentException e)
            {
                refused = e;
                return null;
            }
        }

        // ---------------------------------------------------------------------------------
        // Steps

        static void Overrides(Obj spec, RunOverrides o)
        {
            o.Model = U.Get(spec, "model") as string;
            if (U.Get(spec, "maxSteps") != null) o.MaxSteps = (int)U.Num(spec["maxSteps"], "maxSteps");
            o.StopWhen = StopConditions(U.Get(spec, "stopWhen"));
            o.ModelRetry = ModelRetry(U.Get(spec, "modelRetry"));
            o.ToolExecution = ToolExecution(U.Get(spec, "toolExecution"));
            if (U.Get(spec, "temperature") != null) o.Temperature = U.Num(spec["temperature"], "temperature");
            if (U.Get(spec, "maxOutputTokens") != null) o.MaxOutputTokens = (int)U.Num(spec["maxOutputTokens"], "maxOutputTokens");
            if (U.Get(spec, "topP") != null) o.TopP = U.Num(spec["topP"], "topP");
            o.ToolChoice = U.Clone(U.Get(spec, "toolChoice"));
            if (U.Get(spec, "parallelToolCalls") is bool p) o.ParallelToolCalls = p;
            if (U.Get(spec, "activeTools") is List<object> ids) o.ActiveTools = ids.Select(U.Text).ToList();
        }

        static List<ToolDecision> Decisions(object v, string what, HashSet<string> allowed)
        {
            if (v == null) return null;
            var items = U.L(v) ?? throw U.Fail(what + ": expected a list, got " + U.Show(v));
            var list = new List<ToolDecision>();
            foreach (var d in items)
            {
                if (d is string s) { list.Add(new ToolDecision(s)); continue; }
                var m = U.O(d);
                U.CheckKeys(m, allowed, what);
                var id = U.Get(m, "toolCallId") as string;
                if (m == null || id == null) throw U.Fail(what + ": unsupported decision " + U.Show(d));
                list.Add(new ToolDecision(id, U.Get(m, "reason") as string, U.Clone(U.Get(m, "editedInput"))));
            }
            return list;
        }

        static List<ToolOutput> ToolOutputs(object v, string what)
        {
            if (v == null) return null;
            var items = U.L(v) ?? throw U.Fail(what + ": expected a list, got " + U.Show(v));
            var list = new List<ToolOutput>();
            foreach (var item in items)
            {
                U.CheckKeys(item, ToolOutputKeys, "toolOutput");
                var m = U.O(item);
                var id = U.Get(m, "toolCallId") as string ?? throw U.Fail("toolOutput without toolCallId: " + U.Show(item));
                list.Add(new ToolOutput(id, U.Clone(U.Get(m, "output"))));
            }
            return list;
        }

        static bool UsesStream(string file)
        {
            var abs = Path.GetFullPath(file);
            var names = Directory.GetFiles(Path.GetDirectoryName(abs), "*.json").Select(Path.GetFileName)
                .OrderBy(n => n, StringComparer.Ordinal).ToList();
            return names.IndexOf(Path.GetFileName(abs)) % 2 == 1;
        }

        sealed class CaseRun
        {
            public Agent Agent;
            public ScriptedModel Model;
            public Observations Obs;
            public string State;
            public bool Streaming;

            public Outcome Step(Obj step)
            {
                Obs.Reset();
                lock (Model) Model.Requests = new List<Obj>();
                var events = new List<AgentEvent>();
                Action<AgentEvent> onEvent = e => { lock (events) events.Add(e); };
                var cts = new CancellationTokenSource();
                var sw = Stopwatch.StartNew();
                RunResult result = null;
                AgentException error = null;
                try
                {
                    if (U.Get(step, "run") != null)
                    {
                        var spec = U.O(step["run"]) ?? throw U.Fail("run: expected an object");
                        var opts = new RunOptions { Input = U.Clone(U.Get(spec, "input")), Client = Model, OnEvent = onEvent, CancellationToken = cts.Token };
                        Overrides(spec, opts);
                        if (U.Has(spec, "context")) opts.Context = U.Clone(spec["context"]);
                        if (U.Get(spec, "messages") is List<object> msgs) opts.Messages = (List<object>)U.Clone(msgs);
                        Arm(U.Get(spec, "cancelAfterMs"), cts);
                        result = Streaming ? Agent.Stream(opts).GetResult().GetAwaiter().GetResult() : Agent.Run(opts).GetAwaiter().GetResult();
                    }
                    else if (U.Get(step, "continue") != null)
                    {
                        var spec = U.O(step["continue"]) ?? throw U.Fail("continue: expected an object");
                        if (State == null) throw U.Fail("continue without a state");
                        var opts = new ContinueOptions { StateJson = State, Client = Model, OnEvent = onEvent, CancellationToken = cts.Token };
                        Overrides(spec, opts);
                        opts.Approvals = Decisions(U.Get(spec, "approvals"), "approvals", ApprovalKeys);
                        opts.Rejections = Decisions(U.Get(spec, "rejections"), "rejections", DecisionKeys);
                        opts.ToolOutputs = ToolOutputs(U.Get(spec, "toolOutputs"), "toolOutputs");
                        opts.Responses = ToolOutputs(U.Get(spec, "responses"), "responses");
                        opts.HumanInput = U.Get(spec, "humanInput") as string;
                        if (U.Has(spec, "context")) opts.Context = U.Clone(spec["context"]);
                        Arm(U.Get(spec, "cancelAfterMs"), cts);
                        result = Streaming ? Agent.ContinueStream(opts).GetResult().GetAwaiter().GetResult() : Agent.ContinueRun(opts).GetAwaiter().GetResult();
                    }
                    else throw U.Fail("a step is neither run nor continue");
                }
                catch (AgentException e)
                {
                    error = e;
                    result = e.State;
                }
                var wall = sw.Elapsed.TotalMilliseconds;
                // Let executors the run stopped waiting for observe their cancellation.
                var deadline = DateTime.UtcNow.AddSeconds(1);
                while (Obs.Active > 0 && DateTime.UtcNow < deadline) Thread.Sleep(5);
                string ranOut;
                List<Obj> requests;
                lock (Model) { ranOut = Model.RanOut; requests = new List<Obj>(Model.Requests); }
                if (ranOut != null) throw U.Fail(ranOut);
                Obj state = null;
                if (result != null)
                {
                    // Between steps the state always round-trips through its canonical JSON text.
                    State = result.ToJson();
                    var reparsed = RunResult.FromJson(State);
                    state = U.O(Json.Parse(reparsed.ToJson()));
                }
                List<AgentEvent> evs;
                lock (events) evs = new List<AgentEvent>(events);
                return new Outcome
                {
                    State = state, Error = error, Events = evs, Requests = requests, Executed = Obs.Executed,
                    Cancelled = Obs.Cancelled, MaxConcurrent = Obs.MaxConcurrent, WallMs = wall,
                };
            }

            static void Arm(object after, CancellationTokenSource cts)
            {
                if (after == null) return;
                cts.CancelAfter(TimeSpan.FromMilliseconds(U.Num(after, "cancelAfterMs")));
            }
        }

        // ---------------------------------------------------------------------------------
        // Expectations

        static bool ToolMessageMatches(Obj want, Obj got)
        {
            if (!U.JsonEq(U.Get(want, "toolCallId"), U.Get(got, "toolCallId"))) return false;
            if ((U.Get(want, "isError") is bool we && we) != (U.Get(got, "isError") is bool ge && ge)) return false;
            var content = U.Get(got, "content") as string ?? "";
            if (U.Has(want, "content"))
            {
                object parsed;
                try { parsed = Json.Parse(content); } catch (FormatException) { parsed = content; }
                if (!U.JsonEq(want["content"], parsed)) return false;
            }
            if (U.Get(want, "contentContains") is string s && !content.Contains(s)) return false;
            return true;
        }

        static void CheckRequest(int i, Obj want, Obj got)
        {
            foreach (var key in U.SortedKeys(want))
            {
                var w = want[key];
                var g = U.Get(got, key);
                if (key == "toolMessages" || key == "toolSpecs")
                {
                    var wl = U.AsList(w);
                    var gl = U.AsList(g);
                    bool same = wl.Count == gl.Count;
                    for (int j = 0; same && j < wl.Count; j++)
                    {
                        var wm = U.O(wl[j]);
                        var gm = U.O(gl[j]);
                        if (key == "toolMessages") same = ToolMessageMatches(wm, gm);
                        else foreach (var kv in wm ?? new Obj()) if (!ToolSpecKeys.Contains(kv.Key) || !U.JsonEq(kv.Value, U.Get(gm, kv.Key))) same = false;
                    }
                    if (!same) throw U.Fail("modelRequests[" + i + "]." + key + ": expected " + U.Show(wl) + ", got " + U.Show(gl));
                }
                else if (key == "toolCalls")
                {
                    var wl = U.AsList(w);
                    var gl = U.AsList(g);
                    bool same = wl.Count == gl.Count;
                    for (int j = 0; same && j < wl.Count; j++)
                    {
                        var wm = U.O(wl[j]);
                        var gm = U.O(gl[j]);
                        same = U.JsonEq(U.Get(wm, "id"), U.Get(gm, "id")) && U.JsonEq(U.Get(wm, "name"), U.Get(gm, "name"))
                            && U.JsonEq(AsJson(U.Get(wm, "arguments")), AsJson(U.Get(gm, "arguments")));
                    }
                    if (!same) throw U.Fail("modelRequests[" + i + "].toolCalls: expected " + U.Show(wl) + ", got " + U.Show(gl));
                }
                else U.Diff("modelRequests[" + i + "]." + key, w, g);
            }
        }

        /// <summary>A text holding JSON read as that JSON (tool call arguments compare as JSON).</summary>
        static object AsJson(object v)
        {
            if (!(v is string s)) return v;
            try { return Json.Parse(s); } catch (FormatException) { return v; }
        }

        static void CheckError(Obj want, Outcome o)
        {
            string code, message;
            var runErr = U.O(U.Get(U.O(U.Get(o.State, "run")), "error"));
            if (o.Error != null) { code = o.Error.Code; message = o.Error.Message; }
            else if (runErr != null) { code = U.Get(runErr, "code") as string; message = U.Get(runErr, "message") as string ?? ""; }
            else throw U.Fail("error: expected " + U.Show(want) + ", got no error");
            if (U.Has(want, "code") && !U.JsonEq(want["code"], code))
                throw U.Fail("error.code: expected " + U.Show(want["code"]) + ", got " + U.Show(code) + " (message: " + message + ")");
            if (U.Get(want, "messageContains") is string s && !message.Contains(s))
                throw U.Fail("error.message: expected to contain \"" + s + "\", got \"" + message + "\"");
        }

        static Obj StateFields(Obj state)
        {
            if (state == null) return new Obj();
            var run = U.O(U.Get(state, "run"));
            var pause = U.O(U.Get(run, "pause"));
            var pending = new List<object>();
            object pauseKind = null;
            if (pause != null)
            {
                pauseKind = U.Get(pause, "kind");
                foreach (var p in U.AsList(U.Get(pause, "pendingToolCalls")))
                {
                    var pm = U.O(p);
                    var call = U.O(U.Get(pm, "call"));
                    pending.Add(new Obj { { "toolCallId", U.Get(call, "id") }, { "toolName", U.Get(call, "name") }, { "kind", U.Get(pm, "kind") } });
                }
            }
            return new Obj { { "status", U.Get(run, "status") }, { "output", U.Get(state, "output") }, { "stopReason", U.Get(run, "stopReason") },
                { "pauseKind", pauseKind }, { "context", U.Get(run, "context") }, { "pending", pending } };
        }

        static Dictionary<string, List<object>> EventsByCall(List<AgentEvent> events, HashSet<string> types, Func<AgentEvent, object> pick)
        {
            var out_ = new Dictionary<string, List<object>>();
            foreach (var e in events)
            {
                if (!types.Contains(e.Type)) continue;
                var id = U.Text(U.Get(e.Details, "toolCallId"));
                if (!out_.ContainsKey(id)) out_[id] = new List<object>();
                out_[id].Add(pick(e));
            }
            return out_;
        }

        static void CheckExpect(Obj expect, Outcome o)
        {
            var fields = StateFields(o.State);
            foreach (var key in U.SortedKeys(expect))
            {
                var want = expect[key];
                switch (key)
                {
                    case "status": case "output": case "stopReason": case "pauseKind": case "context": case "pending":
                        U.Diff(key, want, fields[key]); break;
                    case "error": CheckError(U.O(want), o); break;
                    case "executed": U.Diff(key, want, o.Executed); break;
                    case "cancelled": U.Diff(key, want, o.Cancelled); break;
                    case "maxConcurrent": U.Diff(key, want, (long)o.MaxConcurrent); break;
                    case "modelRequests":
                        {
                            var wl = U.AsList(want);
                            if (wl.Count != o.Requests.Count) throw U.Fail("modelRequests: expected " + wl.Count + " requests, got " + o.Requests.Count);
                            for (int i = 0; i < wl.Count; i++) CheckRequest(i, U.O(wl[i]), o.Requests[i]);
                            break;
                        }
                    case "events":
                        U.Diff(key, want, o.Events.Where(e => !e.Type.StartsWith("response.", StringComparison.Ordinal)).Select(e => (object)e.Type).ToList());
                        break;
                    case "toolEvents":
                    case "preliminaryResults":
                        {
                            var got = key == "toolEvents"
                                ? EventsByCall(o.Events, ToolEventTypes, e => e.Type)
                                : EventsByCall(o.Events, U.Set("tool.preliminary_result"), e => U.Get(e.Details, "result"));
                            var w = U.O(want);
                            foreach (var id in U.SortedKeys(w))
                                U.Diff(key + "." + id, w[id], got.ContainsKey(id) ? got[id] : new List<object>());
                            break;
                        }
                    case "usage":
                        {
                            var usage = U.O(U.Get(o.State, "usage"));
                            var w = U.O(want);
                            foreach (var k in U.SortedKeys(w)) U.Diff("usage." + k, w[k], U.Get(usage, k));
                            break;
                        }
                    case "minWallMs":
                        if (o.WallMs < U.Num(want, key)) throw U.Fail("minWallMs: took " + Math.Round(o.WallMs) + " ms, at least " + U.Show(want) + " ms expected");
                        break;
                    case "maxWallMs":
                        if (o.WallMs > U.Num(want, key)) throw U.Fail("maxWallMs: took " + Math.Round(o.WallMs) + " ms, limit " + U.Show(want) + " ms");
                        break;
                    default: throw U.Fail("expect: unsupported key \"" + key + "\"");
                }
            }
            if (o.Error != null && !expect.ContainsKey("error")) throw U.Fail("unexpected error " + o.Error.Code + ": " + o.Error.Message);
        }

        // ---------------------------------------------------------------------------------
        // Cases

        static void CheckCase(Obj c)
        {
            U.CheckKeys(c, CaseKeys, "case");
            U.CheckKeys(U.Get(c, "agent"), AgentKeys, "agent");
            foreach (var t in U.AsList(U.Get(c, "tools"))) U.CheckKeys(t, ToolKeys, "tool");
            foreach (var e in U.AsList(U.Get(c, "model")))
            {
                U.CheckKeys(e, ModelEntryKeys, "model entry");
                foreach (var call in U.AsList(U.Get(U.O(e), "toolCalls"))) U.CheckKeys(call, U.Set("id", "name", "arguments"), "model entry toolCalls");
            }
            int i = 0;
            foreach (var s in U.AsList(U.Get(c, "steps")))
            {
                var step = U.O(s);
                var at = "step " + i++;
                if (U.Has(step, "editState")) { U.CheckKeys(step, U.Set("editState"), at); continue; }
                U.CheckKeys(step, StepKeys, at);
                U.CheckKeys(U.Get(step, "run"), RunKeys, at + ": run");
                U.CheckKeys(U.Get(step, "continue"), ContinueKeys, at + ": continue");
                var expect = U.O(U.Get(step, "expect"));
                U.CheckKeys(expect, ExpectKeys, at + ": expect");
                U.CheckKeys(U.Get(expect, "error"), ErrorKeys, at + ": expect.error");
                U.CheckKeys(U.Get(expect, "usage"), UsageKeys, at + ": expect.usage");
                foreach (var r in U.AsList(U.Get(expect, "modelRequests")))
                {
                    U.CheckKeys(r, RequestKeys, at + ": expect.modelRequests");
                    foreach (var m in U.AsList(U.Get(U.O(r), "toolMessages"))) U.CheckKeys(m, ToolMessageKeys, at + ": expect.modelRequests.toolMessages");
                    foreach (var tc in U.AsList(U.Get(U.O(r), "toolCalls"))) U.CheckKeys(tc, RequestCallKeys, at + ": expect.modelRequests.toolCalls");
                }
            }
        }

        /// <summary>RFC 6902 add/remove/replace on the state's JSON text, as an attacker
        /// editing a stored state would.</summary>
        static string JsonPatch(string textIn, object ops)
        {
            object doc;
            try { doc = Json.Parse(textIn); } catch (FormatException e) { throw U.Fail("editState: the state is not JSON: " + e.Message); }
            var list = U.L(ops) ?? throw U.Fail("editState must be a list of operations");
            foreach (var raw in list)
            {
                U.CheckKeys(raw, U.Set("op", "path", "value"), "editState");
                var op = U.O(raw);
                var kind = U.Get(op, "op") as string;
                var at = U.Get(op, "path") as string ?? "";
                if (at == "" && (kind == "add" || kind == "replace")) { doc = U.Get(op, "value"); continue; }
                if (!at.StartsWith("/", StringComparison.Ordinal)) throw U.Fail("editState: bad path \"" + at + "\"");
                var parts = at.Substring(1).Split('/').Select(p => p.Replace("~1", "/").Replace("~0", "~")).ToArray();
                object parent = doc;
                foreach (var p in parts.Take(parts.Length - 1))
                {
                    if (parent is Obj po) parent = U.Get(po, p);
                    else if (parent is List<object> pl && int.TryParse(p, out var idx) && idx >= 0 && idx < pl.Count) parent = pl[idx];
                    else throw U.Fail("editState: no such path \"" + at + "\"");
                }
                var last = parts[parts.Length - 1];
                if (parent is Obj x)
                {
                    bool present = x.ContainsKey(last);
                    if (kind == "add") x[last] = U.Get(op, "value");
                    else if (kind == "replace" || kind == "remove")
                    {
                        if (!present) throw U.Fail("editState: no such path \"" + at + "\"");
                        if (kind == "replace") x[last] = U.Get(op, "value"); else x.Remove(last);
                    }
                    else throw U.Fail("editState: unsupported op \"" + kind + "\"");
                }
                else if (parent is List<object> xl)
                {
                    int idx = xl.Count;
                    if (last != "-" && !int.TryParse(last, out idx)) throw U.Fail("editState: bad index \"" + last + "\"");
                    if (kind == "add")
                    {
                        if (idx > xl.Count) throw U.Fail("editState: no such path \"" + at + "\"");
                        xl.Insert(idx, U.Get(op, "value"));
                    }
                    else if (kind == "replace" || kind == "remove")
                    {
                        if (idx >= xl.Count) throw U.Fail("editState: no such path \"" + at + "\"");
                        if (kind == "replace") xl[idx] = U.Get(op, "value"); else xl.RemoveAt(idx);
                    }
                    else throw U.Fail("editState: unsupported op \"" + kind + "\"");
                }
                else throw U.Fail("editState: no such path \"" + at + "\"");
            }
            return Json.Write(doc);
        }

        sealed class Mode
        {
            public int StopAfter = -1, FromStep = -1;
            public string SaveDir, ResumeDir;
        }

        /// <summary>Runs the case (or its handoff half); false when this mode does not run it.</summary>
        static bool RunCase(string file, Obj c, Mode m)
        {
            var steps = U.L(U.Get(c, "steps")) ?? throw U.Fail("case without steps");
            var fileName = Path.GetFileName(file);
            string state = null;
            int cursor = 0, from = 0, to = steps.Count;
            if (m.StopAfter >= 0)
            {
                if (steps.Count <= m.StopAfter) return false;
                to = m.StopAfter;
            }
            else if (m.ResumeDir != null)
            {
                var saved = Path.Combine(m.ResumeDir, fileName);
                if (!File.Exists(saved)) return false;
                Obj doc;
                try { doc = U.O(Json.Parse(File.ReadAllText(saved))); }
                catch (FormatException e) { throw U.Fail("saved state unreadable: " + e.Message); }
                state = Json.Write(U.Get(doc, "state"));
                try { RunResult.FromJson(state); } catch (AgentException e) { throw U.Fail("saved state refused: " + e.Message); }
                cursor = (int)U.Num(U.Get(doc, "modelCursor"), "modelCursor");
                from = m.FromStep;
            }
            CheckCase(c);
            var obs = new Observations();
            var agent = BuildAgent(c, obs, out var refused);
            if (U.Has(c, "expectDefinitionError"))
            {
                if (m.StopAfter >= 0 || m.ResumeDir != null) return false;
                var w = U.O(c["expectDefinitionError"]);
                if (refused == null) throw U.Fail("expectDefinitionError: expected " + U.Show(w) + ", but the definition was accepted");
                if (U.Has(w, "code") && !U.JsonEq(w["code"], refused.Code))
                    throw U.Fail("expectDefinitionError.code: expected " + U.Show(w["code"]) + ", got " + U.Show(refused.Code) + " (message: " + refused.Message + ")");
                if (U.Get(w, "messageContains") is string s && !refused.Message.Contains(s))
                    throw U.Fail("expectDefinitionError.message: expected to contain \"" + s + "\", got \"" + refused.Message + "\"");
                return true;
            }
            if (refused != null) throw U.Fail("agent definition refused: " + refused.Code + ": " + refused.Message);
            using (agent)
            {
                var model = new ScriptedModel(U.AsList(U.Get(c, "model")), cursor);
                var run = new CaseRun { Agent = agent, Model = model, Obs = obs, State = state, Streaming = UsesStream(file) };
                for (int i = from; i < to; i++)
                {
                    var step = U.O(steps[i]);
                    if (U.Has(step, "editState"))
                    {
                        if (run.State == null) throw U.Fail("step " + i + ": editState without a state");
                        run.State = JsonPatch(run.State, step["editState"]);
                        continue;
                    }
                    try
                    {
                        var o = run.Step(step);
                        CheckExpect(U.O(U.Get(step, "expect")) ?? new Obj(), o);
                    }
                    catch (CaseError e) { throw U.Fail("step " + i + ": " + e.Message); }
                    catch (Exception e) { throw U.Fail("step " + i + ": " + e.GetType().Name + ": " + e.Message); }
                }
                if (m.SaveDir != null)
                {
                    if (run.State == null) throw U.Fail("no state to save");
                    int cur;
                    lock (model) cur = model.Cursor;
                    Directory.CreateDirectory(m.SaveDir);
                    File.WriteAllText(Path.Combine(m.SaveDir, fileName), "{\"state\":" + run.State + ",\"modelCursor\":" + cur + "}");
                }
            }
            return true;
        }

        static void Collect(string p, List<string> files)
        {
            if (File.Exists(p)) { if (p.EndsWith(".json", StringComparison.Ordinal)) files.Add(p); return; }
            if (!Directory.Exists(p)) throw new FileNotFoundException(p);
            foreach (var n in Directory.GetFileSystemEntries(p).Select(Path.GetFileName).OrderBy(n => n, StringComparer.Ordinal))
                Collect(Path.Combine(p, n), files);
        }

        static int Usage()
        {
            Console.Error.WriteLine("usage: tests/conformance/csharp_runner.sh [--stop-after N --save-state DIR | --resume-state DIR --from-step N] PATH...");
            return 2;
        }

        static int Main(string[] argv)
        {
            // Executors may block (blockingSleepMs): start enough pool threads at once rather
            // than waiting for the pool's slow thread injection.
            ThreadPool.SetMinThreads(64, 64);
            var m = new Mode();
            var paths = new List<string>();
            for (int i = 0; i < argv.Length; i++)
            {
                var a = argv[i];
                int n;
                switch (a)
                {
                    case "--": break;
                    case "--stop-after": if (++i >= argv.Length || !int.TryParse(argv[i], out n) || n < 0) return Usage(); m.StopAfter = n; break;
                    case "--from-step": if (++i >= argv.Length || !int.TryParse(argv[i], out n) || n < 0) return Usage(); m.FromStep = n; break;
                    case "--save-state": if (++i >= argv.Length) return Usage(); m.SaveDir = argv[i]; break;
                    case "--resume-state": if (++i >= argv.Length) return Usage(); m.ResumeDir = argv[i]; break;
                    default: if (a.StartsWith("--", StringComparison.Ordinal)) return Usage(); paths.Add(a); break;
                }
            }
            bool stopping = m.StopAfter >= 0 || m.SaveDir != null;
            bool resuming = m.ResumeDir != null || m.FromStep >= 0;
            if (stopping && (resuming || m.SaveDir == null || m.StopAfter < 1)) return Usage();
            if (resuming && (m.ResumeDir == null || m.FromStep < 0)) return Usage();
            if (paths.Count == 0) paths.Add("tests/conformance/cases");
            var files = new List<string>();
            foreach (var p in paths)
            {
                try { Collect(p, files); }
                catch (FileNotFoundException) { Console.Error.WriteLine("no such case file or folder: " + p); return 2; }
            }
            int passed = 0, failed = 0;
            foreach (var file in files)
            {
                var name = file;
                string errText = null;
                bool ran;
                try
                {
                    var c = U.O(Json.Parse(File.ReadAllText(file))) ?? throw U.Fail("case is not a JSON object");
                    if (U.Get(c, "name") is string n) name = n;
                    ran = RunCase(file, c, m);
                }
                catch (CaseError e) { ran = true; errText = e.Message; }
                catch (Exception e) { ran = true; errText = e.GetType().Name + ": " + e.Message; }
                if (errText != null) { failed++; Console.WriteLine("FAIL " + name + ": " + errText); }
                else if (ran) { passed++; Console.WriteLine("PASS " + name); }
            }
            Console.WriteLine(passed + " passed, " + failed + " failed");
            return failed > 0 ? 1 : 0;
        }
    }
}
