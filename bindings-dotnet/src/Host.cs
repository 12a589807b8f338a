using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>What a PhaseoHost's <c>user_data</c> points at (through a GCHandle): the
    /// C# functions of one agent, run or client, by callback id, and a run's event handler
    /// and end notification.</summary>
    internal sealed class HostObject
    {
        readonly List<Action<HostCall>> funcs = new List<Action<HostCall>>();
        int handed;

        // The calls waiting to start, in call order, and the one loop that starts them on the
        // thread pool (see Enqueue). All under startGate.
        readonly object startGate = new object();
        readonly Queue<KeyValuePair<HostCall, Action<HostCall>>> pending = new Queue<KeyValuePair<HostCall, Action<HostCall>>>();
        bool starting, watching;
        int generation;
        long since;

        /// <summary>The run's event delivery (null: the run has no handler).</summary>
        internal EventDelivery Events;
        /// <summary>The run ended (called on the dispatch thread: must not block or run
        /// application code).</summary>
        internal Action OnDone;

        /// <summary>Registers f and returns its marker for the definition JSON.</summary>
        internal Dictionary<string, object> Add(Action<HostCall> f)
        {
            funcs.Add(f);
            return new Dictionary<string, object> { { "$callback", (long)funcs.Count } };
        }

        /// <summary>No call of this host waits to start (the start loop is not running).</summary>
        internal bool Idle { get { lock (startGate) return !starting; } }

        internal Action<HostCall> Lookup(ulong id) => id == 0 || id > (ulong)funcs.Count ? null : funcs[(int)(id - 1)];

        /// <summary>The native host: a queue host of the C ABI (its callbacks are drained by
        /// <see cref="Dispatcher"/>). The GCHandle made here is freed on <c>release</c>, which
        /// the core reports exactly once (also when the function taking the host fails). A
        /// host object is handed to the core once.</summary>
        internal Native.Host ToNative(bool events, bool done)
        {
            if (Interlocked.Exchange(ref handed, 1) != 0) throw new InvalidOperationException("host handed twice");
            Dispatcher.Start();
            return Native.phaseo_queue_host(GCHandle.ToIntPtr(GCHandle.Alloc(this)), events, done);
        }

        /// <summary>How long a call may take to start (its delegate to return its Task) before
        /// the next call starts anyway.</summary>
        static readonly long StartGraceTicks = System.Diagnostics.Stopwatch.Frequency / 50;

        /// <summary>Queues a call to be started on the thread pool after every call queued
        /// before it, so calls start in call order (docs/behaviour.md §2.9) whatever order the
        /// pool would pick. One loop on one pool thread starts them one after the other: a call
        /// has started once its delegate returned its Task (reached its first await), so a
        /// turn's calls cost no pool hop and no wait each. A delegate that blocks before
        /// returning its Task holds the loop 20 ms at most: a watch on the dispatch thread then
        /// hands the queue to a new loop (the blocked one stops once its delegate returns).
        /// Called on the dispatch thread or a run's driver (<see cref="RunDriver"/>).</summary>
        internal void Enqueue(HostCall c, Action<HostCall> f) => QueueCalls(new KeyValuePair<HostCall, Action<HostCall>>(c, f), null);

        /// <summary><see cref="Enqueue(HostCall, Action{HostCall})"/> for several calls, in
        /// their order, under one lock: the start loop takes calls from the queue while they
        /// are added, and a lock taken per call was contended by both sides at every call of
        /// a large turn.</summary>
        internal void EnqueueAll(List<KeyValuePair<HostCall, Action<HostCall>>> calls) => QueueCalls(default(KeyValuePair<HostCall, Action<HostCall>>), calls);

        void QueueCalls(KeyValuePair<HostCall, Action<HostCall>> one, List<KeyValuePair<HostCall, Action<HostCall>>> many)
        {
            bool launch = false, watch = false;
            int gen = 0;
            lock (startGate)
            {
                if (many == null) pending.Enqueue(one);
                else foreach (var call in many) pending.Enqueue(call);
                if (!starting) { starting = true; launch = true; gen = generation; }
                if (!watching) { watching = true; watch = true; }
            }
            if (launch) Launch(gen);
            if (watch) Dispatcher.After(TimeSpan.FromTicks(TimeSpan.TicksPerMillisecond * 20), Watch);
        }

        void Launch(int gen) => ThreadPool.UnsafeQueueUserWorkItem(_ => StartLoop(gen), null);

        void StartLoop(int gen)
        {
            while (true)
            {
                KeyValuePair<HostCall, Action<HostCall>> next;
                lock (startGate)
                {
                    // Replaced while its call blocked: the new loop owns the queue.
                    if (gen != generation) return;
                    if (pending.Count == 0)
                    {
                        starting = false;
                        since = 0;
                        return;
                    }
                    next = pending.Dequeue();
                    since = System.Diagnostics.Stopwatch.GetTimestamp();
                }
                var c = next.Key;
                try
                {
                    c.Decode();
                    next.Value(c);
                }
                catch (Exception e) { c.Fail(e); }
            }
        }

        // On the dispatch thread (must not block): replaces a loop whose current call has not
        // started within the grace; watches again while a loop runs.
        void Watch()
        {
            bool launch = false, again;
            int gen = 0;
            long wait = StartGraceTicks;
            lock (startGate)
            {
                if (starting && since != 0)
                {
                    long elapsed = System.Diagnostics.Stopwatch.GetTimestamp() - since;
                    if (elapsed >= StartGraceTicks)
                    {
                        gen = ++generation;
                        since = 0;
                        launch = true;
                    }
                    else wait = StartGraceTicks - elapsed;
                }
                again = watching = starting;
            }
            if (launch) Launch(gen);
            if (again)
                Dispatcher.After(TimeSpan.FromMilliseconds(Math.Max(1.0, wait * 1000.0 / System.Diagnostics.Stopwatch.Frequency)), Watch);
        }
    }

    /// <summary>Serves every host of the process. The core never calls into C# on its own
    /// threads: each callback is queued by the C ABI (<c>phaseo_queue_host</c>) and this
    /// class's one background thread drains the queue. (Mono attaches a foreign thread that
    /// calls managed code and, at exit, waits forever for the core's worker threads; the
    /// queue also keeps the core's threads free of any host work.) The drain thread itself
    /// never runs application code and never waits for it, so nothing one run's callbacks do
    /// holds another run: calls are started on the thread pool in call order, events go to
    /// their run's <see cref="EventDelivery"/>, token cancellations to
    /// <see cref="SdkThreads"/>, and a run's end completes its Task from here (continuations
    /// run asynchronously), without needing a pool thread.</summary>
    internal static class Dispatcher
    {
        static readonly object gate = new object();
        static Thread thread;
        static long nextCancel;
        static readonly System.Collections.Concurrent.ConcurrentDictionary<long, CancellationTokenSource> cancels =
            new System.Collections.Concurrent.ConcurrentDictionary<long, CancellationTokenSource>();

        internal static void Start()
        {
            if (thread != null) return;
            lock (gate)
            {
                if (thread != null) return;
                var t = new Thread(Drain) { IsBackground = true, Name = "phaseo-dispatch" };
                t.Start();
                thread = t;
            }
        }

        static void Drain()
        {
            while (true)
            {
                Native.Queued item;
                int s = Native.phaseo_queue_next(NextWaitMs(), out item, out var err);
                if (s == Native.ERROR) Native.Take(err);
                else if (s == Native.OK)
                {
                    try { Handle(item); }
                    catch (Exception) { /* nothing may stop the drain thread */ }
                }
                RunDueTimers();
            }
        }

        // Timers of the SDK's own (an abandoned run's grace), run by the drain thread between
        // items: System.Threading timers fire on the thread pool, which may have no thread.
        static readonly object timerGate = new object();
        static readonly List<KeyValuePair<long, Action>> timers = new List<KeyValuePair<long, Action>>();
        static readonly System.Diagnostics.Stopwatch clock = System.Diagnostics.Stopwatch.StartNew();

        /// <summary>Runs <paramref name="action"/> (SDK code that never blocks) on the drain
        /// thread once <paramref name="delay"/> has passed (give or take the 100 ms poll).</summary>
        internal static void After(TimeSpan delay, Action action)
        {
            Start();
            lock (timerGate) timers.Add(new KeyValuePair<long, Action>(clock.ElapsedMilliseconds + (long)delay.TotalMilliseconds, action));
        }

        static uint NextWaitMs()
        {
            long wait = 100;
            lock (timerGate)
                foreach (var t in timers) wait = Math.Min(wait, Math.Max(1, t.Key - clock.ElapsedMilliseconds));
            return (uint)wait;
        }

        static void RunDueTimers()
        {
            List<Action> due = null;
            lock (timerGate)
            {
                if (timers.Count == 0) return;
                long now = clock.ElapsedMilliseconds;
                for (int i = timers.Count - 1; i >= 0; i--)
                    if (timers[i].Key <= now)
                    {
                        (due ?? (due = new List<Action>())).Add(timers[i].Value);
                        timers.RemoveAt(i);
                    }
            }
            if (due == null) return;
            foreach (var a in due)
            {
                try { a(); }
                catch (Exception) { /* nothing may stop the drain thread */ }
            }
        }

        static HostObject Target(IntPtr ud) => GCHandle.FromIntPtr(ud).Target as HostObject;

        static void Handle(Native.Queued item)
        {
            switch (item.Kind)
            {
                case Native.QueuedInvoke: Invoke(item.UserData, item.Call); break;
                case Native.QueuedEvent:
                    {
                        var json = Native.Take(item.EventJson);
                        Target(item.UserData)?.Events?.Post(json);
                        break;
                    }
                case Native.QueuedDone: Target(item.UserData)?.OnDone?.Invoke(); break;
                case Native.QueuedWake: RunDriver.Wake(item.UserData); break;
                case Native.QueuedRelease: GCHandle.FromIntPtr(item.UserData).Free(); break;
                case Native.QueuedPost:
                    if (flushes.TryRemove((long)item.UserData, out var flushed)) flushed();
                    break;
                case Native.QueuedCancel:
                    // The token's registrations are application code (a tool may also hold
                    // every pool thread while it waits for this very token): SDK threads.
                    if (cancels.TryGetValue((long)item.UserData, out var cts))
                        SdkThreads.Run(() => cts.Cancel());
                    break;
            }
        }

        /// <summary>Registers <paramref name="cts"/> to be cancelled with the call; the
        /// returned id is forgotten with <see cref="Forget"/> once the call is answered (a
        /// cancellation queued before that finds nothing and is ignored).</summary>
        internal static long Register(IntPtr call, CancellationTokenSource cts)
        {
            long id = Interlocked.Increment(ref nextCancel);
            cancels[id] = cts;
            if (Native.phaseo_queue_on_cancel(call, (IntPtr)id, out var err) != Native.OK) Native.Take(err);
            return id;
        }

        internal static void Forget(long id) => cancels.TryRemove(id, out _);

        static readonly System.Collections.Concurrent.ConcurrentDictionary<long, Action> flushes =
            new System.Collections.Concurrent.ConcurrentDictionary<long, Action>();

        /// <summary>Runs <paramref name="then"/> (SDK code that never blocks) on the drain
        /// thread once every item queued before this call has been handled (e.g. a streamed
        /// run's events, once its result is known, are then all in its delivery).</summary>
        internal static void Flush(Action then)
        {
            Start();
            long id = Interlocked.Increment(ref nextCancel);
            flushes[id] = then;
            Native.phaseo_queue_post((IntPtr)id);
        }

        // The call is started on the thread pool by its host, in call order (HostObject.Enqueue).
        static void Invoke(IntPtr ud, IntPtr call)
        {
            var c = Prepare(ud, call, out var host, out var f);
            if (c != null) host.Enqueue(c, f);
        }

        /// <summary>The call of an invoke item, its host and its function; null when the call
        /// cannot be started (it has been answered with the reason).</summary>
        internal static HostCall Prepare(IntPtr ud, IntPtr call, out HostObject host, out Action<HostCall> f)
        {
            host = null;
            f = null;
            try
            {
                host = Target(ud);
                if (Native.phaseo_call_read(call, out var info) != Native.OK) throw new InvalidOperationException("unreadable call");
                var c = new HostCall(call, info.Kind, Native.Read(info.Args, info.ArgsLen));
                f = host?.Lookup(info.Callback);
                if (f == null)
                {
                    c.Fail(new InvalidOperationException("PhaseoAgentSdk: no C# function for callback " + info.Callback));
                    return null;
                }
                return c;
            }
            catch (Exception)
            {
                try { Native.phaseo_call_complete(call, Native.Utf8("PhaseoAgentSdk: unreadable call"), true); } catch (Exception) { }
                return null;
            }
        }
    }

    /// <summary>The runtime argument of a call (<c>{runId, agentId, stepIndex, context,
    /// toolCall, attempt, idempotencyKey}</c>): read into fields from the call's arguments
    /// text the first time <see cref="Read"/> is called (<see cref="Json.ParseCallArgs"/>),
    /// or made from a dictionary (<see cref="From"/>).</summary>
    internal sealed class CallRuntime
    {
        /// <summary>The arguments text and where the runtime begins in it; null once read.</summary>
        string text;
        readonly int start;

        internal CallRuntime() { }

        internal CallRuntime(string text, int start)
        {
            this.text = text;
            this.start = start;
        }

        /// <summary>The runtime of a call whose arguments arrived as a dictionary.</summary>
        internal static CallRuntime From(Dictionary<string, object> m) => new CallRuntime
        {
            RunId = V.Str(m, "runId"),
            AgentId = V.Str(m, "agentId"),
            StepIndex = V.Get(m, "stepIndex"),
            Context = V.Get(m, "context"),
            Call = ToolCall.From(V.Get(m, "toolCall")),
            Attempt = V.Get(m, "attempt"),
            IdempotencyKey = V.Str(m, "idempotencyKey"),
        };

        /// <summary>This runtime, its fields read (once, whichever thread asks first).</summary>
        internal CallRuntime Read()
        {
            if (Volatile.Read(ref text) == null) return this;
            lock (this)
            {
                if (text != null)
                {
                    Json.ReadCallRuntime(text, start, this);
                    Volatile.Write(ref text, null);
                }
            }
            return this;
        }

        internal string RunId, AgentId, IdempotencyKey;
        internal object StepIndex, Context, Attempt;
        /// <summary>The call (from a dictionary) when known as a whole.</summary>
        internal ToolCall Call;
        /// <summary>Whether the arguments named a call (read into the three below).</summary>
        internal bool HasCall;
        internal string CallId, CallName;
        /// <summary>The call's input as JSON text, parsed when the call's Input is read.</summary>
        internal string CallInput;

        internal ToolCall ToolCall => Call ?? (HasCall ? ToolCall.Lazy(CallId, CallName, CallInput) : null);
    }

    /// <summary>One invocation the core handed to C#: answered exactly once.</summary>
    internal sealed class HostCall
    {
        readonly IntPtr call;
        readonly string argsText;
        readonly object gate = new object();
        bool done;
        List<object> args;
        CallRuntime runtime;
        CancellationTokenSource tokenSource;
        long cancelRegistration;
        internal readonly int Kind;

        internal HostCall(IntPtr call, int kind, string argsText)
        {
            this.call = call;
            Kind = kind;
            this.argsText = argsText;
        }

        internal void Decode()
        {
            if (HasRuntime(Kind) && argsText != null) args = Json.ParseCallArgs(argsText, out runtime);
            else args = Json.Parse(argsText ?? "[]") as List<object> ?? new List<object>();
        }

        /// <summary>The call kinds whose arguments are <c>[value, runtime]</c>.</summary>
        static bool HasRuntime(int kind) =>
            kind == Native.KindExecute || kind == Native.KindApprove || kind == Native.KindToolCalled ||
            kind == Native.KindResponseReceived || kind == Native.KindNextTurn;

        internal object Arg(int i) => args != null && i < args.Count ? args[i] : null;

        /// <summary>The answer of an interactive hook that did not complete its call.</summary>
        internal static readonly object PauseCall = new object();

        /// <summary>Completes the call with a value (<see cref="PauseCall"/>: pauses an
        /// interactive hook's call for a person).</summary>
        internal void Answer(object v)
        {
            if (ReferenceEquals(v, PauseCall))
            {
                lock (gate)
                {
                    if (done) return;
                    done = true;
                    Native.phaseo_call_pause(call);
                }
                return;
            }
            string text = null, invalid = null;
            try { text = Json.Write(v); }
            catch (ArgumentException e) { invalid = e.Message; }
            // Anything else thrown while the value is read (an enumeration or a property
            // getter that throws) is the value's fault too: the call is still answered.
            catch (Exception e) { invalid = "value cannot be read: " + Message(e); }
            lock (gate)
            {
                if (done) return;
                done = true;
                if (invalid != null) Native.phaseo_call_complete_invalid(call, Native.Utf8(invalid));
                else Native.phaseo_call_complete(call, Native.Utf8(text), false);
            }
        }

        /// <summary>Completes the call with an exception's message.</summary>
        internal void Fail(Exception e)
        {
            var msg = Message(e);
            lock (gate)
            {
                if (done) return;
                done = true;
                Native.phaseo_call_complete(call, Native.Utf8(msg), true);
            }
        }

        /// <summary>The message of an exception of any type: its Message, else its type's
        /// name; the inner exception of an AggregateException (a faulted Task).</summary>
        internal static string Message(Exception e)
        {
            while (e is AggregateException ae && ae.InnerExceptions.Count == 1) e = ae.InnerException;
            string m = null;
            try { m = e?.Message; } catch (Exception) { }
            return string.IsNullOrEmpty(m) ? (e?.GetType().FullName ?? "error") : m;
        }

        /// <summary>Runs a delegate returning a task and answers with its outcome. A task's
        /// exception of any type (or a synchronous throw) is the call's error.</summary>
        internal void Finish<T>(Func<Task<T>> f, Func<T, object> map = null, Action after = null)
        {
            Task<T> task;
            try
            {
                task = f();
                if (task == null) throw new InvalidOperationException("the callback returned no Task");
            }
            catch (Exception e)
            {
                Fail(e);
                after?.Invoke();
                return;
            }
            // A task already complete (a tool that never awaited) is answered here: a
            // continuation would cost an allocation and a scheduling of its own.
            if (task.IsCompleted) Settle(task, map, after);
            else task.ContinueWith(t => Settle(t, map, after), TaskContinuationOptions.ExecuteSynchronously);
        }

        /// <summary>Answers with a completed task's outcome, then runs <paramref name="after"/>.</summary>
        void Settle<T>(Task<T> t, Func<T, object> map, Action after)
        {
            try
            {
                if (t.IsFaulted) Fail(t.Exception);
                else if (t.IsCanceled) Fail(new TaskCanceledException());
                else
                {
                    object v;
                    try { v = map == null ? t.Result : map(t.Result); }
                    catch (Exception e) { Fail(e); return; }
                    Answer(v);
                }
            }
            finally { after?.Invoke(); }
        }

        /// <summary>Answers with a synchronous function's outcome.</summary>
        internal void FinishSync(Func<object> f)
        {
            object v;
            try { v = f(); }
            catch (Exception e) { Fail(e); return; }
            Answer(v);
        }

        /// <summary>Runs f with the RuntimeContext of <c>Arg(runtimeArg)</c>, whose token is
        /// cancelled when the core stops waiting for the call (timeout, run cancelled, a
        /// sibling's fatal error); answers with its outcome.</summary>
        internal void WithRuntime<T>(int runtimeArg, Func<RuntimeContext, Task<T>> f, Func<T, object> map = null)
        {
            if (runtime == null) runtime = CallRuntime.From(V.Obj(Arg(runtimeArg)));
            Finish(() => f(new RuntimeContext(this)), map, ForgetToken);
        }

        /// <summary>The call's runtime, read (the calls of WithRuntime only).</summary>
        internal CallRuntime Runtime => runtime.Read();

        /// <summary>The call's token (<see cref="RuntimeContext.CancellationToken"/>), made and
        /// registered with the core when a tool first asks for it: a call whose tool never
        /// does costs no registration. Asked for after the answer, it is a token that is
        /// never cancelled (the SDK no longer waits for the call).</summary>
        internal CancellationToken Token()
        {
            lock (gate)
            {
                if (tokenSource == null)
                {
                    tokenSource = new CancellationTokenSource();
                    if (!done) cancelRegistration = Dispatcher.Register(call, tokenSource);
                }
                return tokenSource.Token;
            }
        }

        void ForgetToken()
        {
            long id;
            lock (gate) id = cancelRegistration;
            if (id != 0) Dispatcher.Forget(id);
        }

        /// <summary><see cref="RuntimeContext.EmitProgress"/>: an executor's only.</summary>
        internal Task EmitProgress(object value)
        {
            if (Kind != Native.KindExecute) throw new InvalidOperationException("only a tool's executor can emit progress");
            Progress(value);
            return Task.CompletedTask;
        }

        /// <summary><see cref="RuntimeContext.SetContext"/>: an executor's only.</summary>
        internal void SetContext(object value)
        {
            if (Kind != Native.KindExecute) throw new InvalidOperationException("only a tool's executor can set the context");
            SetContextValue(value);
        }

        /// <summary>Answers with f's outcome, <paramref name="cts"/> cancelled when the core
        /// stops waiting for the call.</summary>
        internal void WithRuntimeless<T>(CancellationTokenSource cts, Func<Task<T>> f, Func<T, object> map = null)
        {
            var id = Dispatcher.Register(call, cts);
            Finish(f, map, () => Dispatcher.Forget(id));
        }

        void Progress(object value)
        {
            string text = null, invalid = null;
            try { text = Json.Write(value); }
            catch (ArgumentException e) { invalid = e.Message; }
            catch (Exception e) { invalid = "value cannot be read: " + Message(e); }
            lock (gate)
            {
                if (done) throw new InvalidOperationException("the tool call has already ended");
                IntPtr err;
                int st = invalid != null
                    ? Native.phaseo_call_reject_progress(call, Native.Utf8(invalid), out err)
                    : Native.phaseo_call_emit_progress(call, Native.Utf8(text), out err);
                Native.Check(st, err);
                if (invalid != null) throw new ArgumentException(invalid);
            }
        }

        /// <summary>Passes one event of a streaming model client to the run. A refused event
        /// (or a request that is over) fails the call with the core's message and throws it,
        /// so the client stops streaming.</summary>
        internal void StreamEvent(ModelStreamEvent e)
        {
            if (e == null) throw new ArgumentNullException(nameof(e), "a model stream event is null");
            string text;
            try { text = Json.Write(e.ToJson()); }
            catch (ArgumentException ex) { throw new ArgumentException("model stream event " + e.Type + ": " + ex.Message); }
            lock (gate)
            {
                if (done) throw new InvalidOperationException("the model request has ended");
                try { Native.Check(Native.phaseo_call_stream_event(call, Native.Utf8(text), out var err), err); }
                catch (AgentException ex)
                {
                    done = true;
                    Native.phaseo_call_complete(call, Native.Utf8(ex.Message), true);
                    throw;
                }
            }
        }

        void SetContextValue(object value)
        {
            string text;
            try { text = Json.Write(value); }
            catch (ArgumentException e) { throw new ArgumentException("SetContext: " + e.Message); }
            catch (Exception e) { throw new ArgumentException("SetContext: value cannot be read: " + Message(e)); }
            lock (gate)
            {
                if (done) throw new InvalidOperationException("the tool call has already ended");
                Native.Check(Native.phaseo_call_set_context(call, Native.Utf8(text), out var err), err);
            }
        }
    }
}
