using System;
using System.Collections;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>A streamed run. Events are read once from the core and kept, so every
    /// <see cref="FullStream"/> / <see cref="TextStream"/> replays from the first event.
    /// Enumerate them with <c>await foreach</c> (C# 8+: the types follow the
    /// <c>GetAsyncEnumerator</c> pattern; <c>IAsyncEnumerable</c> itself needs C# 8, which
    /// Mono's mcs lacks), with <c>while (await e.MoveNextAsync())</c>, or synchronously with
    /// <c>foreach</c> (blocks the thread: never inside a callback of the SDK).</summary>
    public sealed class AgentStreamResult : IDisposable
    {
        readonly object pull = new object();     // one reader of the core's cursor at a time
        readonly object handle = new object();   // the pointer, its users and disposal
        readonly List<AgentEvent> events = new List<AgentEvent>();
        readonly object keep;
        IntPtr ptr;
        int users;
        bool disposed, ended;
        Task<RunResult> result;

        readonly EventDelivery delivery;

        internal AgentStreamResult(IntPtr ptr, object keep, EventDelivery delivery) { this.ptr = ptr; this.keep = keep; this.delivery = delivery; }

        // Native calls run between Enter and Exit; the handle is freed by whichever of
        // Dispose and the last Exit comes last, so Cancel never waits for a blocked pull and
        // nothing uses a freed handle.
        bool Enter(out IntPtr p)
        {
            lock (handle)
            {
                p = ptr;
                if (disposed || p == IntPtr.Zero) return false;
                users++;
                return true;
            }
        }

        void Exit()
        {
            IntPtr free = IntPtr.Zero;
            lock (handle)
            {
                users--;
                if (disposed && users == 0) { free = ptr; ptr = IntPtr.Zero; }
            }
            if (free != IntPtr.Zero) Native.phaseo_stream_free(free);
        }

        /// <summary>Event <paramref name="i"/>, pulling from the core as needed (blocks);
        /// null after the last.</summary>
        internal AgentEvent At(int i)
        {
            lock (pull)
            {
                while (i >= events.Count && !ended)
                {
                    if (!Enter(out var p)) { ended = true; break; }
                    try
                    {
                        int s = Native.phaseo_stream_next(p, out var json, out var err);
                        if (s == Native.OK) events.Add(new AgentEvent(Native.Take(json)));
                        else { Native.Take(err); ended = true; }
                    }
                    finally { Exit(); }
                }
                return i < events.Count ? events[i] : null;
            }
        }

        /// <summary>Every event, from the first.</summary>
        public EventStream<AgentEvent> FullStream() => new EventStream<AgentEvent>(this, e => e);

        /// <summary>The model's text deltas (<c>response.output_text.delta</c>), from the first.</summary>
        public EventStream<string> TextStream() =>
            new EventStream<string>(this, e => e.Type == "response.output_text.delta" ? e.Details.TryGetValue("delta", out var d) ? d as string : null : null);

        /// <summary>The run's result (a failed run: an <see cref="AgentException"/> with its
        /// State; a refused continue: one without), once OnEvent has seen every event of the
        /// run (as for Run). The wait for the run's end is on a thread of the SDK's own, not
        /// the thread pool's.</summary>
        public Task<RunResult> GetResult()
        {
            lock (handle)
            {
                if (result == null)
                {
                    var tcs = new TaskCompletionSource<RunResult>(TaskCreationOptions.RunContinuationsAsynchronously);
                    result = tcs.Task;
                    SdkThreads.Run(() =>
                    {
                        Tuple<RunResult, AgentException> outcome;
                        try { outcome = WaitResult(); }
                        catch (Exception e) { tcs.TrySetException(e); return; }
                        Action finish = () =>
                        {
                            if (outcome.Item2 != null) tcs.TrySetException(outcome.Item2);
                            else tcs.TrySetResult(outcome.Item1);
                        };
                        // The run's events are all queued by now: once the drain thread has
                        // passed them, they are in the delivery.
                        Dispatcher.Flush(() =>
                        {
                            if (delivery == null) finish();
                            else delivery.WhenDelivered(finish);
                        });
                    });
                }
                return result;
            }
        }

        // Blocks until the run ends (on an SDK thread); the native part of GetResult.
        Tuple<RunResult, AgentException> WaitResult()
        {
            if (!Enter(out var p)) throw new AgentException(ErrorCodes.InvalidArgument, "the stream was disposed");
            try
            {
                int s = Native.phaseo_stream_result(p, out var json, out var err);
                GC.KeepAlive(keep);
                return s == Native.OK
                    ? Tuple.Create(RunResult.FromCore(Native.Take(json)), (AgentException)null)
                    : Tuple.Create((RunResult)null, AgentException.FromErrorJson(Native.Take(err)));
            }
            finally { Exit(); }
        }

        /// <summary>Cancels the run (it ends <c>cancelled</c>). Any thread; never blocks. From
        /// then on, the result no longer waits for an OnEvent handler that does not return.</summary>
        public void Cancel()
        {
            delivery?.Abandon();
            if (!Enter(out var p)) return;
            try { Native.phaseo_stream_cancel(p); } finally { Exit(); }
        }

        /// <summary>Frees the native stream (does not cancel the run); calls in progress
        /// finish first.</summary>
        public void Dispose()
        {
            IntPtr free = IntPtr.Zero;
            lock (handle)
            {
                disposed = true;
                if (users == 0) { free = ptr; ptr = IntPtr.Zero; }
            }
            if (free != IntPtr.Zero) Native.phaseo_stream_free(free);
            GC.SuppressFinalize(this);
        }

        /// <summary>Frees the native stream when the application did not.</summary>
        ~AgentStreamResult() { if (ptr != IntPtr.Zero) Native.phaseo_stream_free(ptr); }
    }

    /// <summary>A replayable sequence of a stream's events (or values picked from them):
    /// <c>foreach</c> (blocking) or <c>await foreach</c> / <see cref="GetAsyncEnumerator"/>.</summary>
    public sealed class EventStream<T> : IEnumerable<T> where T : class
    {
        readonly AgentStreamResult source;
        readonly Func<AgentEvent, T> pick;
        internal EventStream(AgentStreamResult source, Func<AgentEvent, T> pick) { this.source = source; this.pick = pick; }

        /// <summary>An asynchronous cursor from the first event.</summary>
        public AsyncCursor GetAsyncEnumerator() => new AsyncCursor(this);

        /// <inheritdoc/>
        public IEnumerator<T> GetEnumerator()
        {
            for (int i = 0; ; i++)
            {
                var e = source.At(i);
                if (e == null) yield break;
                var v = pick(e);
                if (v != null) yield return v;
            }
        }

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

        /// <summary>An asynchronous cursor (the <c>await foreach</c> pattern).</summary>
        public sealed class AsyncCursor
        {
            readonly EventStream<T> s;
            int next;
            internal AsyncCursor(EventStream<T> s) { this.s = s; }
            /// <summary>The current value.</summary>
            public T Current { get; private set; }
            /// <summary>Moves to the next value (false at the end); waits on the pool.</summary>
            public Task<bool> MoveNextAsync() => Task.Run(() =>
            {
                while (true)
                {
                    var e = s.source.At(next++);
                    if (e == null) return false;
                    var v = s.pick(e);
                    if (v != null) { Current = v; return true; }
                }
            });
            /// <summary>Nothing to release (the pattern's optional disposal).</summary>
            public Task DisposeAsync() => Task.CompletedTask;
        }
    }
}
