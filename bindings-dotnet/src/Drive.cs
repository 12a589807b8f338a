using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading;

namespace PhaseoAgentSdk
{
    /// <summary>Drives a run on the SDK's threads: the core's run is started driven and polled
    /// here (<c>phaseo_queue_run_poll</c>), not on a core thread. The calls a poll produces
    /// come back to the polling thread, which starts them; when they are exactly one call and
    /// its host starts no other, the polling thread runs it itself and polls again when it
    /// returns. A turn of one synchronous tool then costs no thread hand-over at all (run on a
    /// core thread it cost three: the core's thread, the drain thread, a pool thread).
    ///
    /// Whatever else makes the run ready (an answer on another thread, a timer, a
    /// cancellation) queues a wake-up that the drain thread turns into <see cref="Schedule"/>.
    /// The calls of a poll that produced several are started as the drain thread starts any
    /// call: on the thread pool, in call order (<see cref="HostObject.Enqueue"/>).
    /// A call run by the driver may block for any time, and the run must still see its
    /// timeout, its cancellation and its other calls' answers: a wake-up that comes meanwhile
    /// starts a new driver (a rescuer) that polls on; the first one, once its call
    /// returns, leaves the run to it.</summary>
    internal sealed class RunDriver
    {
        const int Idle = 0, Driving = 1, Woken = 2, Inline = 3;

        static long nextId;
        static readonly ConcurrentDictionary<long, RunDriver> live = new ConcurrentDictionary<long, RunDriver>();
        readonly RunHandle run;
        readonly IntPtr id;
        readonly bool reportsEnd;
        readonly Action drive;
        int state;

        RunDriver(RunHandle run, bool reportsEnd)
        {
            this.run = run;
            this.reportsEnd = reportsEnd;
            id = (IntPtr)Interlocked.Increment(ref nextId);
            drive = () => Drive(true);
        }

        /// <summary>Starts driving <paramref name="run"/> (its handle set): the first poll
        /// runs on the calling thread, which starts the calls it produces on the pool and
        /// never runs one itself. <paramref name="reportsEnd"/>: the driver tells the run its
        /// end (a run whose end comes through the queue, after its events, does not).</summary>
        internal static void Start(RunHandle run, bool reportsEnd)
        {
            var d = new RunDriver(run, reportsEnd);
            live[(long)d.id] = d;
            d.state = Driving;
            d.Drive(false);
        }

        /// <summary>A queued wake-up (on the drain thread): ids are never reused, so a
        /// wake-up of a run that has ended finds nothing.</summary>
        internal static void Wake(IntPtr id)
        {
            if (live.TryGetValue((long)id, out var d)) d.Schedule();
        }

        /// <summary>The run can make progress: polled by an SDK thread unless one polls it
        /// already (which then polls once more). Not the thread pool: a run must end when it
        /// is cancelled even while the application holds every pool thread.</summary>
        void Schedule()
        {
            while (true)
            {
                int s = Volatile.Read(ref state);
                int next = s == Driving ? Woken : s == Woken ? Woken : Driving;
                if (s == Woken) return;
                if (Interlocked.CompareExchange(ref state, next, s) != s) continue;
                // Idle: nobody polls; Inline: the driver runs a call, a rescuer takes over.
                if (s == Idle || s == Inline) SdkThreads.Run(drive);
                return;
            }
        }

        void Drive(bool mayRunCalls)
        {
            while (true)
            {
                bool ended;
                try { ended = !run.Poll(id); }
                catch (Exception e)
                {
                    // A poll the core refused (a defect): the run cannot go on; its Task
                    // fails rather than never completing.
                    live.TryRemove((long)id, out _);
                    run.Failed(e);
                    return;
                }
                if (ended)
                {
                    live.TryRemove((long)id, out _);
                    if (reportsEnd) run.Ended();
                    return;
                }
                var call = StartCalls(mayRunCalls);
                if (call != null)
                {
                    Interlocked.Exchange(ref state, Inline);
                    RunInline(call.Value.Key, call.Value.Value);
                    // A wake-up meanwhile started a rescuer: it drives the run now (and a
                    // wake-up this call's own answer did not queue is covered by polling
                    // once more).
                    if (Interlocked.CompareExchange(ref state, Driving, Inline) != Inline)
                    {
                        Schedule();
                        return;
                    }
                    continue;
                }
                if (Interlocked.CompareExchange(ref state, Idle, Driving) == Driving) return;
                Volatile.Write(ref state, Driving); // woken while it polled: poll again
            }
        }

        /// <summary>Starts the calls the last poll produced; returns the one this thread is
        /// to run itself (none: null; never when <paramref name="mayRunCalls"/> is false).</summary>
        static KeyValuePair<HostCall, Action<HostCall>>? StartCalls(bool mayRunCalls)
        {
            Native.Queued first;
            if (!Take(out first)) return null;
            HostObject host;
            Action<HostCall> f;
            var c = Dispatcher.Prepare(first.UserData, first.Call, out host, out f);
            Native.Queued more;
            if (!Take(out more))
            {
                if (c == null) return null;
                // Alone, and no call of its host waits to start before it (docs/behaviour.md
                // §2.9): run here.
                if (mayRunCalls && host.Idle) return new KeyValuePair<HostCall, Action<HostCall>>(c, f);
                host.Enqueue(c, f);
                return null;
            }
            // Queued to their hosts a batch at a time (a small one, so that the first calls
            // start while the next are read).
            var batch = new List<KeyValuePair<HostCall, Action<HostCall>>>(BatchSize);
            HostObject batchHost = null;
            if (c != null) { batchHost = host; batch.Add(new KeyValuePair<HostCall, Action<HostCall>>(c, f)); }
            do
            {
                c = Dispatcher.Prepare(more.UserData, more.Call, out host, out f);
                if (c == null) continue;
                if (host != batchHost || batch.Count == BatchSize) Flush(batchHost, batch);
                batchHost = host;
                batch.Add(new KeyValuePair<HostCall, Action<HostCall>>(c, f));
            } while (Take(out more));
            Flush(batchHost, batch);
            return null;
        }

        /// <summary>How many calls <see cref="StartCalls"/> queues to their host at once.</summary>
        const int BatchSize = 32;

        static void Flush(HostObject host, List<KeyValuePair<HostCall, Action<HostCall>>> batch)
        {
            if (batch.Count == 0) return;
            host.EnqueueAll(batch);
            batch.Clear();
        }

        static bool Take(out Native.Queued item)
        {
            int s = Native.phaseo_queue_take_local(out item, out var err);
            if (s == Native.ERROR) Native.Take(err);
            return s == Native.OK;
        }

        void RunInline(HostCall c, Action<HostCall> f)
        {
            var previous = Native.phaseo_queue_inline_begin(id);
            try
            {
                c.Decode();
                f(c);
            }
            catch (Exception e) { c.Fail(e); }
            finally { Native.phaseo_queue_inline_end(previous); }
        }
    }
}
