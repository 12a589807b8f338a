using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>An exception whose <c>Message</c> (and <c>ToString</c>) throws.</summary>
    public sealed class MessageThrows : Exception
    {
        /// <summary>Throws.</summary>
        public override string Message => throw new InvalidOperationException("Message threw");
        /// <summary>Throws.</summary>
        public override string ToString() => throw new InvalidOperationException("ToString threw");
    }

    /// <summary>The hostile probe: what a hostile user can do through the public API, each
    /// input drawn from a seeded generator and run in a child process (the test worker,
    /// <c>probe SEED FROM INPUTS</c>), which the fixture restarts after an input that killed
    /// it, and replaces when the callbacks it ran hold half the thread pool for ever. It counts deaths (the child ended during an input), hangs (a run that did not end
    /// within its deadline plus a grace period, or a child silent for minutes), wrong kinds
    /// (an exception that is not an <see cref="AgentException"/> with a documented code, nor
    /// one the API documents for the argument), lost states (a refused continue after which
    /// the original state no longer continues) and leaks (threads and RSS after thousands of
    /// runs; a callback still waiting on its own CancellationToken after its run ended). <c>PHASEO_FUZZ_SEED</c> sets the seed, <c>PHASEO_PROBE_INPUTS</c> the inputs
    /// (default 800; <c>make fuzz-csharp</c> runs 20,000).</summary>
    public static class Probe
    {
        /// <summary>The default seed.</summary>
        public const int DefaultSeed = 20260514;

        static readonly HashSet<string> Documented = new HashSet<string>(
            typeof(ErrorCodes).GetFields().Where(f => f.IsLiteral).Select(f => (string)f.GetRawConstantValue()));

        static readonly TimeSpan Grace = TimeSpan.FromSeconds(20);

        /// <summary>Released when the child ends: what "blocks for ever" waits on.</summary>
        static readonly ManualResetEventSlim Release = new ManualResetEventSlim(false);

        static readonly object Out = new object();

        /// <summary>Thread-pool threads the probe's own callbacks hold for ever (blocked until
        /// the child ends).</summary>
        static int poolHeld;

        /// <summary>How many pool threads the callbacks may hold for ever before the worker
        /// hands over to a new one: half the pool's maximum (Mono's is 100 a core). With
        /// every pool thread held by the application nothing queued to the pool runs (the
        /// probe's own runs start there), which bindings-dotnet/README.md documents; past
        /// this bound a worker would only measure that.</summary>
        static int PoolLimit
        {
            get { ThreadPool.GetMaxThreads(out var workers, out _); return Math.Max(8, workers / 2); }
        }

        static void Report(string line)
        {
            line = Hostile.Safe(line, 1500);
            lock (Out) { Console.Out.WriteLine("PROBE " + line); Console.Out.Flush(); }
        }

        /// <summary>The worker's entry: runs inputs <paramref name="from"/> to
        /// <paramref name="inputs"/> (or, with <paramref name="from"/> = -1, the leak check).</summary>
        public static int Child(int seed, int from, int inputs)
        {
            if (from < 0) return LeakChild(seed);
            for (int i = from; i < inputs; i++)
            {
                Report("begin " + i);
                var r = One(seed, i, false);
                foreach (var f in r.Findings) Report("finding " + i + " " + f + " | " + r.Desc);
                Report("end " + i);
                if (Volatile.Read(ref poolHeld) >= PoolLimit && i + 1 < inputs)
                {
                    Report("recycle " + (i + 1) + " (" + Volatile.Read(ref poolHeld) + " pool threads held for ever)");
                    Release.Set();
                    return 0;
                }
            }
            Release.Set();
            Report("done");
            return 0;
        }

        static int LeakChild(int seed)
        {
            int runs = 1000, base0 = 1000000;
            for (int i = 0; i < 300; i++) One(seed, base0 + i, true);
            var (t0, r0) = Settle();
            for (int i = 0; i < runs / 2; i++) One(seed, base0 + 300 + i, true);
            var (t1, r1) = Settle();
            for (int i = 0; i < runs / 2; i++) One(seed, base0 + 300 + runs / 2 + i, true);
            var (t2, r2) = Settle();
            Report("measured threads " + t0 + " -> " + t1 + " -> " + t2 + ", RSS " + (r0 >> 20) + " MB -> " + (r1 >> 20) + " MB -> " + (r2 >> 20) + " MB over " + runs + " runs");
            // Threads the pool or the SDK started for a busy moment end after their idle time
            // (the SDK's: 10 s); a leaked thread never does. Under load the busy moments come
            // more often, so a count above the bound is looked at again for up to 30 s.
            var settling = Stopwatch.StartNew();
            while (t2 > t0 + 10 && settling.Elapsed < TimeSpan.FromSeconds(30))
            {
                Thread.Sleep(1000);
                t2 = Settle().Threads;
            }
            if (t2 > t0 + 10) Report("leak threads " + t0 + " after warm-up, " + t2 + " after " + runs + " more runs (and 30 s)");
            if (r2 > r1 + (24L << 20) && r2 - r1 > (r1 - r0) / 2 + (8L << 20)) Report("leak RSS " + (r0 >> 20) + " -> " + (r1 >> 20) + " -> " + (r2 >> 20) + " MB");
            Release.Set();
            Report("done");
            return 0;
        }

        static (int Threads, long Rss) Settle()
        {
            int prev = -1, n = 0;
            for (int k = 0; k < 50; k++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
                n = Process.GetCurrentProcess().Threads.Count;
                if (n == prev) break;
                prev = n;
                Thread.Sleep(200);
            }
            long rss = 0;
            foreach (var line in File.ReadAllLines("/proc/self/status"))
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                    rss = long.Parse(line.Split(new[] { ' ', '\t' }, StringSplitOptions.RemoveEmptyEntries)[1], CultureInfo.InvariantCulture) * 1024;
            return (n, rss);
        }

        /// <summary>What one input did and found.</summary>
        public sealed class Result
        {
            /// <summary>What the input did.</summary>
            public string Desc;
            /// <summary>What it found ("wrong …", "hang …", "lost …").</summary>
            public List<string> Findings = new List<string>();
        }

        sealed class Input
        {
            internal Random R;
            internal readonly List<string> Desc = new List<string>();
            internal Result Res = new Result();
            internal bool Cancels, NoForever;
            /// <summary>Callbacks of this input waiting on a token that can be cancelled.</summary>
            internal int TokenWaiters;
            internal void Note(string s) => Desc.Add(s);
            internal void Find(string s) { lock (Res) Res.Findings.Add(s); }
            internal int Next(int n) { lock (R) return R.Next(n); }
        }

        /// <summary>Runs input <paramref name="i"/> of <paramref name="seed"/> in this process.</summary>
        public static Result One(int seed, int i, bool noForever)
        {
            var x = new Input { R = new Random(unchecked(seed * 1000003 + i)), NoForever = noForever };
            try
            {
                int pick = x.Next(100);
                if (pick < 70) CallbackInput(x);
                else if (pick < 92) StateInput(x);
                else DefinitionInput(x);
            }
            catch (Exception e)
            {
                x.Find("wrong an exception out of the probe's own setup or the API: " + e);
            }
            x.Res.Desc = string.Join("; ", x.Desc);
            return x.Res;
        }

        // ---- behaviours -------------------------------------------------------------------

        enum B { Value, Throw, ThrowMessage, Faulted, NullTask, BlockToken, BlockForever, NeverTask, Slow, Nested, LazyThrow, Count }

        sealed class Behaviour
        {
            internal B Kind;
            internal object Value;
            internal Exception Error;
            internal string What;
            internal int Delay;
            internal Input X;

            /// <summary>Blocks until the child ends, counting a pool thread held so.</summary>
            static void HoldForever()
            {
                if (Thread.CurrentThread.IsThreadPoolThread) Interlocked.Increment(ref poolHeld);
                Release.Wait();
            }

            internal object Do(CancellationToken token)
            {
                switch (Kind)
                {
                    case B.Value: return Value;
                    case B.Throw: throw Error;
                    case B.ThrowMessage: throw new MessageThrows();
                    case B.BlockToken:
                        if (!token.CanBeCanceled) { HoldForever(); return "late"; }
                        Interlocked.Increment(ref X.TokenWaiters);
                        try { WaitHandle.WaitAny(new[] { token.WaitHandle, Release.WaitHandle }); }
                        finally { Interlocked.Decrement(ref X.TokenWaiters); }
                        return "late";
                    case B.BlockForever: HoldForever(); return "released";
                    case B.Slow: Thread.Sleep(Delay); return "slow";
                    case B.Nested:
                        using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "inner", Tools = new[] { new Tool("t", (i, rt) => Task.FromResult<object>("fine")) } }))
                            return agent.Run(new RunOptions("inner", new Calls()) { CancellationToken = token }).GetAwaiter().GetResult().Output;
                    case B.LazyThrow: return new[] { 1, 0 }.Select(v => 10 / v);
                    default: return Value;
                }
            }

            internal Task<T> Async<T>(CancellationToken token, Func<object, T> map)
            {
                switch (Kind)
                {
                    case B.Faulted: return Task.FromException<T>(Error);
                    case B.NullTask: return null;
                    case B.NeverTask: return new TaskCompletionSource<T>().Task;
                    case B.BlockToken: return Task.Run(() => map(Do(token)));
                    default: return Task.FromResult(map(Do(token)));
                }
            }
        }

        static Exception Error(Input x)
        {
            switch (x.Next(9))
            {
                case 0: return new MessageThrows();
                case 1: return new InvalidOperationException(Hostile.Text(x.R));
                case 2: return new OperationCanceledException();
                case 3: return new TaskCanceledException();
                case 4: return new AgentException("weird_code", "fake");
                case 5: return new AggregateException(new MessageThrows(), new TimeoutException());
                case 6: return new TimeoutException("\ud800");
                case 7: return new StackOverflowException("not really");
                default: return new ArgumentException(new string('x', x.Next(200000)));
            }
        }

        static Behaviour NewBehaviour(Input x)
        {
            var b = new Behaviour { X = x, Kind = (B)x.Next((int)B.Count), Value = Hostile.Value(x.R, 0), Error = Error(x), Delay = 1 + x.Next(20) };
            // The leak check leaves out what holds a thread or task for ever by the application's
            // own doing (a callback without a token blocks for ever when told to block until it).
            if (x.NoForever && (b.Kind == B.BlockForever || b.Kind == B.NeverTask || b.Kind == B.BlockToken)) b.Kind = B.Slow;
            if (b.Kind == B.BlockToken || b.Kind == B.BlockForever || b.Kind == B.NeverTask) x.Cancels = true;
            b.What = b.Kind + (b.Kind == B.Value ? " " + Hostile.Describe(b.Value).Substring(0, Math.Min(60, Hostile.Describe(b.Value).Length)) : b.Kind == B.Throw || b.Kind == B.Faulted ? " " + b.Error.GetType().Name : "");
            return b;
        }

        /// <summary>Calls tool "t" once, then answers text.</summary>
        sealed class Calls : IModelClient
        {
            int n;
            internal string Args = "{}";
            public Task<ModelResponse> Generate(ModelRequest request)
            {
                if (Interlocked.Increment(ref n) == 1) return Task.FromResult(new ModelResponse(null, new[] { new ModelToolCall("c1", "t", Args) }));
                return Task.FromResult(new ModelResponse("done"));
            }
        }

        /// <summary>A host model client that calls the tool, then behaves; it also streams.</summary>
        sealed class HostileModel : IStreamingModelClient
        {
            internal Behaviour B;
            internal Input X;
            internal int Steps, Shape;
            int n;

            public Task<ModelResponse> Generate(ModelRequest request)
            {
                if (Interlocked.Increment(ref n) <= Steps) return Task.FromResult(Odd());
                return B.Async(request.CancellationToken, v => new ModelResponse(v as string ?? "x") { Usage = new Dictionary<string, object> { { "inputTokens", v } } });
            }

            ModelResponse Odd()
            {
                var args = new[] { "{}", "", "{", "null", "{\"a\":" + new string('[', 10000) + new string(']', 10000) + "}", "{\"x\":\"\\ud800\"}", "\ud800", "{\"n\":1e999}" };
                var ids = new[] { "c1", "", null, "\ud800", new string('i', 10000) };
                var calls = new List<ModelToolCall> { new ModelToolCall(ids[X.Next(ids.Length)], "t", args[X.Next(args.Length)]) };
                if (X.Next(3) == 0) calls.Add(X.Next(2) == 0 ? null : new ModelToolCall("c1", null, null));
                return new ModelResponse(null, calls) { Cost = double.NaN, FinishReason = "\ud800", Usage = new Dictionary<string, object> { { "inputTokens", -1 } } };
            }

            public Task Stream(ModelRequest request, Action<ModelStreamEvent> emit)
            {
                if (Interlocked.Increment(ref n) <= Steps)
                {
                    emit(ModelStreamEvent.TextDelta("\ud800"));
                    emit(ModelStreamEvent.Completed(Odd()));
                    return Task.CompletedTask;
                }
                switch (Shape)
                {
                    case 0: return null;
                    case 1: return new TaskCompletionSource<bool>().Task;
                    case 2:
                        return Task.Run(() => { for (int i = 0; i < 1000; i++) emit(ModelStreamEvent.TextDelta("x")); });
                    case 3:
                        emit(ModelStreamEvent.ItemEvent(B.Do(request.CancellationToken)));
                        return Task.CompletedTask;
                    case 4:
                        emit(new ModelStreamEvent(ModelStreamEvent.CompletedType));
                        return Task.CompletedTask;
                    case 5:
                        emit(null);
                        return Task.CompletedTask;
                    default:
                        return B.Async<object>(request.CancellationToken, v => v).ContinueWith(t =>
                        {
                            if (t.IsFaulted) throw t.Exception.InnerException;
                            emit(ModelStreamEvent.Completed(new ModelResponse(Hostile.Describe(t.Result))));
                        });
                }
            }
        }

        sealed class Accessor : IStateAccessor
        {
            internal Behaviour LoadB, SaveB;
            internal string Paused;
            internal Input X;
            public Task<RunResult> Load(string runId, CancellationToken token)
            {
                if (LoadB == null) return Task.FromResult<RunResult>(null);
                return LoadB.Async(token, v =>
                {
                    if (v == null) return null;
                    if (v is string) return RunResult.FromJson(Paused);
                    try { return RunResult.FromJson(MutateState(X, Paused)); }
                    catch (AgentException) { return null; }
                });
            }

            public Task Save(RunResult result, CancellationToken token) => SaveB == null ? Task.CompletedTask : SaveB.Async<object>(token, v => v);
        }

        static readonly string[] Kinds =
        {
            "execute", "progress", "context", "inputSchema", "outputSchema", "eventSchema", "approval", "agentApproval",
            "onToolCalled", "onResponseReceived", "nextTurn", "agentOutputSchema", "stopWhen", "humanReview", "perTurn",
            "onEvent", "generate", "stream", "stateSave", "stateLoad", "mcp", "options",
        };

        static void CallbackInput(Input x)
        {
            var kind = Kinds[x.Next(Kinds.Length)];
            var b = NewBehaviour(x);
            x.Note(kind + " " + b.What);
            var tool = new Tool("t", (i, rt) => Task.FromResult<object>("fine")) { OnError = new[] { null, "fail-run", "return-to-model" }[x.Next(3)] };
            if (x.Next(3) == 0) { tool.Timeout = TimeSpan.FromMilliseconds(1 + x.Next(300)); x.Note("timeout " + tool.Timeout); }
            var def = new AgentDefinition { Id = "probe", Tools = new[] { tool } };
            IModelClient model = new Calls();
            Action<AgentEvent> onEvent = null;
            IStateAccessor state = null;
            bool streamed = x.Next(4) == 0, cont = false, load = false;
            switch (kind)
            {
                case "execute": tool.Execute = (i, rt) => b.Async(rt.CancellationToken, v => v); break;
                case "progress": tool.Execute = async (i, rt) => { await rt.EmitProgress(b.Value); return "ok"; }; break;
                case "context": tool.Execute = (i, rt) => { rt.SetContext(b.Value); return Task.FromResult<object>("ok"); }; break;
                case "inputSchema": tool.InputSchema = v => b.Do(CancellationToken.None); break;
                case "outputSchema": tool.OutputSchema = v => b.Do(CancellationToken.None); break;
                case "eventSchema":
                    tool.EventSchema = v => b.Do(CancellationToken.None);
                    tool.Execute = async (i, rt) => { await rt.EmitProgress(1); return "ok"; };
                    break;
                case "approval": tool.Approval = (i, rt) => b.Async(rt.CancellationToken, v => v != null); break;
                case "agentApproval": def.RequireApproval = (c, rt) => b.Async(rt.CancellationToken, v => v == null); break;
                case "onToolCalled":
                    {
                        bool completed = x.Next(2) == 0;
                        tool.OnToolCalled = (i, rt) => b.Async(rt.CancellationToken, v => (completed, v));
                        break;
                    }
                case "onResponseReceived":
                    tool.Execute = null;
                    tool.OnResponseReceived = (o, rt) => b.Async(rt.CancellationToken, v => v);
                    cont = true;
                    break;
                case "nextTurn":
                    tool.DynamicNextTurnParams = (i, rt) => b.Async(rt.CancellationToken, v => new NextTurnParams(Model: v as string, Temperature: double.NaN, MaxOutputTokens: -5) { ToolChoice = v, Tools = new Tool[] { null } });
                    break;
                case "agentOutputSchema": def.OutputSchema = v => b.Do(CancellationToken.None); break;
                case "stopWhen":
                    def.StopWhen = new[] { new StopCondition(s => { var v = b.Do(CancellationToken.None); return (v != null, v as string); }) };
                    break;
                case "humanReview":
                    def.HumanReview = ctx => b.Async(CancellationToken.None, v => new HumanReviewRequest("\ud800", v));
                    break;
                case "perTurn":
                    switch (x.Next(4))
                    {
                        case 0: def.DynamicModel = c => b.Do(CancellationToken.None) as string; break;
                        case 1: def.Temperature = c => { b.Do(CancellationToken.None); return double.NaN; }; break;
                        case 2: def.MaxOutputTokens = c => { b.Do(CancellationToken.None); return -1; }; break;
                        default: def.DynamicInstructions = c => (b.Do(CancellationToken.None) ?? "").ToString(); break;
                    }
                    break;
                case "onEvent":
                    {
                        int at = x.Next(14), n = 0;
                        onEvent = e => { if (Interlocked.Increment(ref n) == at) b.Do(CancellationToken.None); };
                        break;
                    }
                case "generate": model = new HostileModel { B = b, X = x, Steps = x.Next(3) }; break;
                case "stream":
                    {
                        var shape = x.Next(7);
                        if (shape == 1 && x.NoForever) shape = 6;
                        if (shape == 1) x.Cancels = true; // a stream that never ends holds its run until cancelled
                        model = new HostileModel { B = b, X = x, Steps = x.Next(3), Shape = shape };
                        streamed = true;
                        break;
                    }
                case "stateSave": state = new Accessor { SaveB = b, X = x }; break;
                case "stateLoad": state = new Accessor { LoadB = b, X = x, Paused = Fixture().State }; load = true; break;
                case "mcp":
                    {
                        var s = new McpServer
                        {
                            Name = Hostile.Text(x.R), Optional = x.Next(2) == 0, Timeout = TimeSpan.FromMilliseconds(x.Next(3) - 1),
                            Filter = info => b.Do(CancellationToken.None) != null,
                        };
                        switch (x.Next(5))
                        {
                            case 0: s.Command = "/bin/false"; break;
                            case 1: s.Url = "http://127.0.0.1:1/mcp"; break;
                            case 2: s.Command = "/bin/sh"; s.Args = new[] { "-c", "exec 0<&-; echo '{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":[[[['; sleep 1" }; break;
                            case 3: s.Url = Hostile.Text(x.R); break;
                            default: s.Command = "/nonexistent/" + Hostile.Text(x.R); break;
                        }
                        def.McpServers = new[] { s };
                        break;
                    }
                case "options": HostileOptions(x, def); break;
            }
            if (x.Next(8) == 0 && kind != "onEvent")
            {
                var eb = NewBehaviour(x);
                if (eb.Kind == B.BlockForever || eb.Kind == B.BlockToken) eb.Kind = B.Throw;
                x.Note("onEvent " + eb.What);
                onEvent = e => eb.Do(CancellationToken.None);
            }
            Agent agent;
            try { agent = AgentSdk.CreateAgent(def); }
            catch (Exception e) { Check(x, e, "CreateAgent", true, ErrorCodes.DefinitionInvalid); return; }
            object output = Hostile.Value(x.R, 0);
            int concurrent = x.Next(10) == 0 ? 2 + x.Next(6) : 1;
            if (concurrent > 1) x.Note(concurrent + " concurrent runs");
            using (agent)
            {
                var tasks = new List<Task>();
                for (int c = 0; c < concurrent; c++)
                {
                    var cts = Canceller(x);
                    var opts = new RunOptions("go", model) { OnEvent = onEvent, State = state, CancellationToken = cts.Token };
                    if (kind == "options") HostileRunOptions(x, opts);
                    tasks.Add(Task.Run(() =>
                    {
                        if (load)
                            Await(x, cts, "ContinueRun by RunId", () => agent.ContinueRun(new ContinueOptions { RunId = "r-probe", State = state, Client = model, Approvals = new ToolDecision[] { "c1" }, CancellationToken = cts.Token }));
                        else if (cont)
                        {
                            var paused = Await(x, cts, "Run", () => agent.Run(opts));
                            if (paused == null || paused.Status != "waiting_for_human") return;
                            Await(x, cts, "ContinueRun", () => agent.ContinueRun(new ContinueOptions(paused, model) { ToolOutputs = new[] { new ToolOutput("c1", output) }, CancellationToken = cts.Token }));
                        }
                        else if (streamed)
                            Await(x, cts, "Stream", () => agent.Stream(opts).GetResult());
                        else
                            Await(x, cts, "Run", () => agent.Run(opts));
                    }));
                }
                if (!Task.WaitAll(tasks.ToArray(), TimeSpan.FromMinutes(3))) x.Find("hang the runs of the input did not end within 3 minutes");
                else TokensReleased(x);
            }
        }

        /// <summary>Once an input's runs ended, every callback that waits on its own token (a
        /// tool's, a model request's, a state accessor's) must be released: the SDK cancels
        /// the token of a call it no longer waits for (a timeout, a cancellation, the end of
        /// the run; a cancelled run's final save within 5 s).</summary>
        static void TokensReleased(Input x)
        {
            var waited = Stopwatch.StartNew();
            while (Volatile.Read(ref x.TokenWaiters) > 0 && waited.Elapsed < Grace) Thread.Sleep(20);
            int left = Volatile.Read(ref x.TokenWaiters);
            if (left > 0) x.Find("leak " + left + " callback(s) still waiting on their CancellationToken " + Grace.TotalSeconds + " s after the input's runs ended: the token was never cancelled");
        }

        /// <summary>A cancellation at a random moment (always, when a callback blocks).</summary>
        static CancellationTokenSource Canceller(Input x)
        {
            int pick = x.Next(4), ms = x.Next(400);
            var cts = new CancellationTokenSource();
            if (x.Cancels || pick == 0)
            {
                x.Cancels = true;
                var t = new Thread(() => { Thread.Sleep(ms); try { cts.Cancel(); } catch (ObjectDisposedException) { } }) { IsBackground = true };
                t.Start();
            }
            return cts;
        }

        /// <summary>Runs a call to its end and checks how (and when) it ended.</summary>
        static RunResult Await(Input x, CancellationTokenSource cts, string what, Func<Task<RunResult>> start)
        {
            Task<RunResult> t;
            try { t = start(); }
            catch (Exception e) { Check(x, e, what, false); return null; }
            if (t == null) { x.Find("wrong " + what + " returned a null Task"); return null; }
            var limit = TimeSpan.FromSeconds(60);
            if (!((IAsyncResult)t).AsyncWaitHandle.WaitOne(limit))
            {
                if (!cts.IsCancellationRequested) { x.Find("hang " + what + " did not end within " + limit.TotalSeconds + " s"); return null; }
            }
            if (!((IAsyncResult)t).AsyncWaitHandle.WaitOne(Grace)) { x.Find("hang " + what + " did not end " + Grace.TotalSeconds + " s after its cancellation"); return null; }
            if (t.IsFaulted) { Check(x, t.Exception.InnerException, what, false); return null; }
            if (t.IsCanceled) { x.Find("wrong " + what + ": the Task was cancelled (an OperationCanceledException) instead of a result or an AgentException"); return null; }
            var st = t.Result.Status;
            if (st != "completed" && st != "waiting_for_human" && st != "stopped" && !(st == "cancelled" && x.Cancels))
                x.Find("wrong " + what + " returned status " + st + " without an exception");
            return t.Result;
        }

        static void Check(Input x, Exception e, string what, bool synchronous, params string[] want)
        {
            if (e is AgentException ae)
            {
                if (!Documented.Contains(ae.Code)) { x.Find("wrong " + what + ": undocumented code " + ae.Code + ": " + ae.Message); return; }
                if (ae.Code == ErrorCodes.InvalidArgument) { x.Find("wrong " + what + ": invalid_argument for a hostile value: " + ae.Message); return; }
                if (ae.Code == ErrorCodes.Cancelled && !x.Cancels) { x.Find("wrong " + what + ": cancelled with nothing cancelling: " + ae.Message); return; }
                if (want.Length > 0 && !want.Contains(ae.Code)) x.Find("wrong " + what + ": code " + ae.Code + ", expected " + string.Join("/", want) + ": " + ae.Message);
                return;
            }
            // A run's own arguments: the .NET argument exceptions, thrown before anything runs.
            if (synchronous && e is ArgumentException) return;
            x.Find("wrong " + what + ": " + e.GetType().FullName + ": " + SafeMessage(e));
        }

        static string SafeMessage(Exception e)
        {
            try { return e.ToString(); } catch (Exception) { return "(its message throws)"; }
        }

        static void HostileOptions(Input x, AgentDefinition def)
        {
            for (int k = 0, n = 1 + x.Next(3); k < n; k++)
            {
                switch (x.Next(10))
                {
                    case 0: def.MaxSteps = new[] { -1, 0, int.MaxValue, int.MinValue }[x.Next(4)]; x.Note("MaxSteps " + def.MaxSteps); break;
                    case 1: def.ToolExecution = new ToolExecutionConfig(-x.Next(3), Hostile.Text(x.R), -1); x.Note("ToolExecution odd"); break;
                    case 2: def.ToolChoice = Hostile.Value(x.R, 0); x.Note("ToolChoice hostile"); break;
                    case 3: def.ActiveTools = new[] { Hostile.Text(x.R), null }; x.Note("ActiveTools with null"); break;
                    case 4: def.ModelRetry = new ModelRetryConfig(-3, TimeSpan.FromSeconds(-1)); x.Note("ModelRetry negative"); break;
                    case 5: def.StopWhen = new StopCondition[] { AgentSdk.StepCountIs(-1), null }; x.Note("StopWhen with null"); break;
                    case 6: def.Lease = new LeaseConfig(TimeSpan.FromMilliseconds(-1), TimeSpan.Zero); def.Store = RunStore.Memory(); x.Note("Lease negative"); break;
                    case 7: def.Tools = new[] { def.Tools[0], null }; x.Note("null tool"); break;
                    case 8: def.Tools[0].Timeout = TimeSpan.FromMilliseconds(-x.Next(1000)); x.Note("Timeout negative"); break;
                    default: def.Tools[0].Parameters = new Dictionary<string, object> { { "type", Hostile.Value(x.R, 0) } }; x.Note("Parameters hostile"); break;
                }
            }
        }

        static void HostileRunOptions(Input x, RunOptions o)
        {
            for (int k = 0, n = 1 + x.Next(3); k < n; k++)
            {
                switch (x.Next(6))
                {
                    case 0: o.Input = Hostile.Value(x.R, 0); x.Note("Input hostile"); break;
                    case 1: o.Context = Hostile.Value(x.R, 0); x.Note("Context hostile"); break;
                    case 2: o.Messages = new object[] { null, Hostile.Value(x.R, 0) }; x.Note("Messages hostile"); break;
                    case 3: o.MaxSteps = -1; o.Temperature = double.NegativeInfinity; o.MaxOutputTokens = int.MinValue; x.Note("overrides odd"); break;
                    case 4: o.ToolChoice = Hostile.Value(x.R, 0); o.ActiveTools = new string[] { null }; x.Note("ToolChoice/ActiveTools odd"); break;
                    default: o.Store = RunStore.Memory(); x.Note("Store and State"); break;
                }
            }
        }

        static void DefinitionInput(Input x)
        {
            var tools = new List<Tool>();
            for (int k = 0, n = x.Next(4); k < n; k++)
            {
                var t = x.Next(6) == 0 ? null : new Tool(new[] { "t", "", null, "\ud800", "a b", Hostile.Text(x.R) }[x.Next(6)]);
                if (t != null && x.Next(2) == 0) t.Execute = (i, rt) => Task.FromResult<object>(1);
                if (t != null && x.Next(3) == 0) t.Parameters = new Dictionary<string, object> { { "type", Hostile.Value(x.R, 0) }, { "properties", Hostile.Value(x.R, 0) } };
                tools.Add(t);
            }
            var def = new AgentDefinition { Id = new[] { "a", "", null, "\ud800" }[x.Next(4)], Tools = tools };
            if (tools.Count > 0 && tools[0] != null) HostileOptions(x, def);
            x.Note("definition of " + tools.Count + " tools");
            Agent agent;
            try { agent = AgentSdk.CreateAgent(def); }
            catch (Exception e) { Check(x, e, "CreateAgent", true, ErrorCodes.DefinitionInvalid); return; }
            using (agent)
            {
                var cts = Canceller(x);
                Await(x, cts, "Run", () => agent.Run(new RunOptions("go", new Calls()) { CancellationToken = cts.Token }));
            }
        }

        // ---- states -----------------------------------------------------------------------

        sealed class Paused { internal Agent Agent; internal string State; }

        static Paused fixture;

        static Paused Fixture()
        {
            if (fixture != null) return fixture;
            var agent = AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "probe-fz",
                Tools = new[]
                {
                    new Tool("deploy", (i, rt) => Task.FromResult<object>("deployed")) { RequireApproval = true },
                    new Tool("manual"),
                    new Tool("ask") { OnToolCalled = (i, rt) => Task.FromResult((false, (object)null)) },
                },
            });
            var deep = new string('[', 60) + new string(']', 60);
            var client = new ScriptedClient(new object[]
            {
                new Dictionary<string, object>
                {
                    {
                        "toolCalls", new object[]
                        {
                            new Dictionary<string, object> { { "id", "c1" }, { "name", "deploy" }, { "arguments", "{\"env\":\"prod\",\"deep\":" + deep + "}" } },
                            new Dictionary<string, object> { { "id", "c2" }, { "name", "manual" }, { "arguments", "{\"n\":12345678901234567890}" } },
                            new Dictionary<string, object> { { "id", "c3" }, { "name", "ask" }, { "arguments", "{\"q\":\"\u00fc\"}" } },
                        }
                    },
                },
            });
            var paused = agent.Run(new RunOptions("deploy", client)).GetAwaiter().GetResult();
            if (paused.Status != "waiting_for_human") throw new InvalidOperationException("the probe's fixture did not pause");
            fixture = new Paused { Agent = agent, State = paused.ToJson() };
            return fixture;
        }

        static readonly string[] Tokens = { "\"", "{", "}", "[", "]", ",", "null", "1e999", "\"\\ud800\"", new string('[', 70), "\u0000", "\ud800", "\"c1\"", "\"c4\"", "\"hitl\"", "\"manual\"" };

        static string MutateState(Input x, string s)
        {
            for (int k = 0, n = 1 + x.Next(3); k < n && s.Length > 0; k++)
            {
                int at = x.Next(s.Length);
                switch (x.Next(6))
                {
                    case 0: s = s.Substring(0, at) + (char)(s[at] ^ (1 << x.Next(7))) + s.Substring(at + 1); break;
                    case 1: s = s.Substring(0, at); break;
                    case 2: s = s.Remove(at, Math.Min(s.Length - at, 1 + x.Next(40))); break;
                    case 3: s = s.Insert(at, Tokens[x.Next(Tokens.Length)]); break;
                    default:
                        {
                            var swaps = new[] { new[] { "\"c1\"", "\"c2\"" }, new[] { "\"approval\"", "\"manual\"" }, new[] { "\"waiting_for_human\"", "\"running\"" }, new[] { "\"version\":1", "\"version\":\"1\"" }, new[] { "\"env\":\"prod\"", "\"env\":" + new string('[', 10000) + new string(']', 10000) }, new[] { "\"stepCount\":1", "\"stepCount\":-1" }, new[] { "\"hitl\"", "\"approval\"" } };
                            var sw = swaps[x.Next(swaps.Length)];
                            int i = s.IndexOf(sw[0], StringComparison.Ordinal);
                            if (i >= 0) s = s.Substring(0, i) + sw[1] + s.Substring(i + sw[0].Length);
                            break;
                        }
                }
            }
            return s;
        }

        static ContinueOptions Good() => new ContinueOptions
        {
            Approvals = new ToolDecision[] { "c1" },
            ToolOutputs = new[] { new ToolOutput("c2", "manual out"), new ToolOutput("c3", "asked") },
        };

        static void StateInput(Input x)
        {
            var f = Fixture();
            bool mutated = x.Next(5) != 0;
            var state = mutated ? MutateState(x, f.State) : f.State;
            var o = Good();
            if (!mutated || x.Next(3) == 0)
            {
                for (int k = 0, n = 1 + x.Next(3); k < n; k++)
                {
                    switch (x.Next(7))
                    {
                        case 0: o.Approvals = new ToolDecision[] { "c1", new ToolDecision(Hostile.Text(x.R), "\ud800"), null }; break;
                        case 1: o.Rejections = new ToolDecision[] { "c1" }; break;
                        case 2: o.ToolOutputs = new[] { new ToolOutput("c2", Hostile.Value(x.R, 0)), new ToolOutput("c3", Hostile.Value(x.R, 0)) }; break;
                        case 3: o.ToolOutputs = new[] { new ToolOutput("c2", 1), new ToolOutput("c2", 2), null }; break;
                        case 4: o.Context = Hostile.Value(x.R, 0); break;
                        case 5: o.HumanInput = Hostile.Text(x.R); break;
                        default: o.Approvals = null; break;
                    }
                }
                x.Note("hostile decisions");
            }
            int how = x.Next(3);
            x.Note("state continued (mutated " + mutated + ", by " + how + "): " + Hostile.Safe(state, 300));
            Exception error = null;
            bool refused = false;
            try
            {
                if (how == 0) o.Run = RunResult.FromJson(state);
                else o.StateJson = state;
            }
            catch (Exception e) { error = e; refused = true; }
            if (error == null)
            {
                o.Client = new ScriptedClient(new object[] { new Dictionary<string, object> { { "text", "done" } }, new Dictionary<string, object> { { "text", "done" } } });
                var t = how == 2 ? Task.Run(() => f.Agent.ContinueStream(o).GetResult()) : SafeStart(() => f.Agent.ContinueRun(o), out error);
                if (t != null)
                {
                    if (!((IAsyncResult)t).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(80))) { x.Find("hang a continue did not end"); return; }
                    if (t.IsFaulted) error = t.Exception.InnerException;
                }
                if (error != null) refused = !(error is AgentException ae0) || ae0.State == null;
            }
            if (error == null) return;
            Check(x, error, "ContinueRun", true);
            if (!refused) return;
            if (error is AgentException ae && ae.Code != ErrorCodes.ContinueInvalid && ae.Code != ErrorCodes.StateInvalid)
                x.Find("wrong a refused continue with code " + ae.Code + ": " + ae.Message);
            var good = Good();
            good.StateJson = f.State;
            good.Client = new ScriptedClient(new object[] { new Dictionary<string, object> { { "text", "done" } } });
            try
            {
                var again = f.Agent.ContinueRun(good);
                if (!((IAsyncResult)again).AsyncWaitHandle.WaitOne(TimeSpan.FromSeconds(80))) { x.Find("hang the original's continue did not end"); return; }
                if (again.IsFaulted || again.Result.Status != "completed")
                    x.Find("lost after a refused continue (" + error.GetType().Name + ") the original no longer continues: " + (again.IsFaulted ? SafeMessage(again.Exception.InnerException) : again.Result.Status));
            }
            catch (Exception e) { x.Find("lost the original's continue threw: " + SafeMessage(e)); }
        }

        static Task<RunResult> SafeStart(Func<Task<RunResult>> start, out Exception error)
        {
            error = null;
            try { return start(); }
            catch (Exception e) { error = e; return null; }
        }
    }

    /// <summary>The probe's supervisor: runs <see cref="Probe"/> in worker processes and
    /// fails on any death, hang, wrong kind, lost state or leak.</summary>
    [TestFixture]
    public class ProbeTests
    {
        static int Env(string name, int def)
        {
            var s = Environment.GetEnvironmentVariable(name);
            return string.IsNullOrEmpty(s) ? def : int.Parse(s, CultureInfo.InvariantCulture);
        }

        /// <summary>Starts the worker; lines go to <paramref name="onLine"/>.</summary>
        static Process Worker(int seed, int from, int inputs, List<string> lines)
        {
            var dir = Path.GetDirectoryName(typeof(ProbeTests).Assembly.Location);
            var p = new Process
            {
                StartInfo = new ProcessStartInfo("mono", "Phaseo.AgentSdk.TestWorker.exe probe " + seed + " " + from + " " + inputs)
                {
                    WorkingDirectory = dir, UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true,
                },
            };
            // The library's allocator gives free memory back to the system 10 s after it was
            // freed (core/src/allocator.rs): the leak worker has it given back at once, so
            // that its RSS is what the runs still hold, not what they held in the last seconds.
            if (from < 0) p.StartInfo.EnvironmentVariables["MIMALLOC_PURGE_DELAY"] = "0";
            p.OutputDataReceived += (s, e) => { if (e.Data != null) lock (lines) { lines.Add(e.Data); Monitor.PulseAll(lines); } };
            p.ErrorDataReceived += (s, e) => { if (e.Data != null) lock (lines) lines.Add("stderr: " + e.Data); };
            p.Start();
            p.BeginOutputReadLine();
            p.BeginErrorReadLine();
            return p;
        }

        [Test]
        public void HostileProbe()
        {
            int seed = Env("PHASEO_FUZZ_SEED", Probe.DefaultSeed), inputs = Env("PHASEO_PROBE_INPUTS", 800);
            var counts = new Dictionary<string, int> { { "death", 0 }, { "hang", 0 }, { "wrong", 0 }, { "lost", 0 }, { "leak", 0 } };
            var findings = new List<string>();
            int next = 0, recycled = 0;
            var silence = TimeSpan.FromMinutes(3);
            while (next < inputs)
            {
                var lines = new List<string>();
                int last = next, seen = 0;
                string exit = null;
                var tail = new List<string>();
                using (var p = Worker(seed, next, inputs, lines))
                {
                    while (exit == null)
                    {
                        string line = null;
                        lock (lines)
                        {
                            if (seen == lines.Count && !Monitor.Wait(lines, silence) && seen == lines.Count)
                            {
                                exit = p.HasExited ? "death" : "silent";
                                break;
                            }
                            line = lines[seen++];
                        }
                        if (!line.StartsWith("PROBE ", StringComparison.Ordinal))
                        {
                            tail.Add(line);
                            if (tail.Count > 30) tail.RemoveAt(0);
                            continue;
                        }
                        line = line.Substring(6);
                        if (line.StartsWith("begin ", StringComparison.Ordinal)) last = int.Parse(line.Substring(6), CultureInfo.InvariantCulture);
                        else if (line.StartsWith("finding ", StringComparison.Ordinal))
                        {
                            var f = line.Substring(8);
                            var kind = f.Split(' ')[1];
                            if (counts.ContainsKey(kind)) counts[kind]++;
                            findings.Add(f);
                        }
                        else if (line == "done") exit = "done";
                        else if (line.StartsWith("recycle ", StringComparison.Ordinal))
                        {
                            // The worker's callbacks hold half the pool for ever: a new worker
                            // goes on from the next input.
                            exit = "recycle";
                            last = int.Parse(line.Substring(8).Split(' ')[0], CultureInfo.InvariantCulture) - 1;
                        }
                    }
                    if (exit == "silent") { try { p.Kill(); } catch (InvalidOperationException) { } }
                    if (exit != "done" && !p.WaitForExit(10000)) { try { p.Kill(); } catch (InvalidOperationException) { } }
                    // The process ended without "done" while we waited: a death.
                    if (exit == "silent" && p.HasExited && p.ExitCode != 137 && p.ExitCode != 0 && !tail.Any()) exit = "death";
                }
                if (exit == "done") break;
                if (exit == "recycle") { recycled++; next = last + 1; continue; }
                string what = exit == "death" ? "death" : "hang";
                counts[what]++;
                findings.Add(last + " " + what + " (the worker " + (exit == "death" ? "died" : "stopped answering and was killed") + "): " + string.Join(" / ", tail.Skip(Math.Max(0, tail.Count - 8))));
                next = last + 1;
            }
            // Leaks: a worker of its own, without the inputs that block for ever.
            {
                var lines = new List<string>();
                using (var p = Worker(seed, -1, 0, lines))
                {
                    if (!p.WaitForExit(15 * 60 * 1000)) { try { p.Kill(); } catch (InvalidOperationException) { } }
                    p.WaitForExit();
                }
                lock (lines)
                {
                    foreach (var l in lines.Where(l => l.StartsWith("PROBE leak ", StringComparison.Ordinal))) { counts["leak"]++; findings.Add(l.Substring(6)); }
                    foreach (var l in lines.Where(l => l.StartsWith("PROBE measured ", StringComparison.Ordinal))) Console.WriteLine(l);
                    if (!lines.Contains("PROBE done")) { counts["leak"]++; findings.Add("leak the leak worker did not finish: " + string.Join(" / ", lines.Skip(Math.Max(0, lines.Count - 10)))); }
                }
            }
            Console.WriteLine("hostile probe, seed " + seed + ": " + inputs + " inputs in " + (recycled + 1) + " workers, " + counts["death"] + " deaths, " + counts["hang"] + " hangs, " + counts["wrong"] + " wrong kinds, " + counts["lost"] + " lost states, " + counts["leak"] + " leaks");
            if (findings.Count > 0)
                Assert.Fail("the probe found (seed " + seed + "; replay with the worker: mono Phaseo.AgentSdk.TestWorker.exe probe SEED N N+1):\n" + string.Join("\n", findings.OrderBy(s => s, StringComparer.Ordinal).Take(60)));
        }
    }
}
