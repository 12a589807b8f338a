using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;

namespace PhaseoAgentSdk
{
    /// <summary>Threads of the SDK's own for work that meets application code the SDK must not
    /// wait on (an event handler, a token's registrations), and for the SDK's blocking waits.
    /// Not the thread pool: the application may hold every pool thread, and a run must still
    /// deliver its events, cancel its calls and end. A job goes to an idle thread when there is
    /// one, else to a new one, so a job that never returns holds its own thread only; a thread
    /// idle for <see cref="IdleMs"/> ends.</summary>
    internal static class SdkThreads
    {
        const int IdleMs = 10000;
        static readonly object gate = new object();
        static readonly List<Worker> idle = new List<Worker>();

        sealed class Worker
        {
            internal readonly AutoResetEvent Wake = new AutoResetEvent(false);
            internal Action Job;
        }

        /// <summary>Runs <paramref name="job"/> on an SDK thread (what it throws is dropped).</summary>
        internal static void Run(Action job)
        {
            Worker w = null;
            lock (gate)
            {
                if (idle.Count > 0)
                {
                    w = idle[idle.Count - 1];
                    idle.RemoveAt(idle.Count - 1);
                    w.Job = job;
                }
            }
            if (w != null) { w.Wake.Set(); return; }
            w = new Worker { Job = job };
            new Thread(() => Loop(w)) { IsBackground = true, Name = "phaseo-sdk" }.Start();
        }

        static void Loop(Worker w)
        {
            while (true)
            {
                var job = w.Job;
                w.Job = null;
                try { job(); }
                catch (Exception) { /* nothing a job throws may end the thread's service */ }
                lock (gate) idle.Add(w);
                if (w.Wake.WaitOne(IdleMs)) continue;
                lock (gate)
                {
                    // Taken by Run between the timeout and this lock: its job is set.
                    if (!idle.Remove(w)) { w.Wake.WaitOne(); continue; }
                }
                w.Wake.Dispose();
                return;
            }
        }
    }

    /// <summary>Hands one run's events to its <c>OnEvent</c> handler, one after the other and
    /// in order, on an SDK thread (<see cref="SdkThreads"/>): the dispatch thread only queues
    /// them, so a handler that blocks holds its own run's events, never another run's
    /// callbacks. A thread is taken when an event arrives and none is delivering, and given
    /// back when the queue is empty.
    ///
    /// The run's end waits until its events were delivered (<see cref="WhenDelivered"/>), so a
    /// run's Task completes after its handler saw every event. Once the run is cancelled
    /// (<see cref="Abandon"/>), the end waits only while the handler keeps up: when one event
    /// has been in the handler for <see cref="Grace"/> the run ends without waiting for it,
    /// and the events still queued reach the handler if and when it returns.</summary>
    internal sealed class EventDelivery
    {
        /// <summary>How long an abandoned run's end waits for one event in the handler: far
        /// more than a handler that keeps up needs, short enough for a cancelled run to end
        /// on time.</summary>
        internal static readonly TimeSpan Grace = TimeSpan.FromMilliseconds(500);

        readonly Action<AgentEvent> handler;
        readonly object gate = new object();
        readonly Queue<string> queue = new Queue<string>();
        readonly Stopwatch clock = Stopwatch.StartNew();
        bool busy, abandoned;
        long lastProgress;           // clock ms when the handler last took an event
        List<Action> whenDelivered;  // run once the queue is delivered (each at most once)

        internal EventDelivery(Action<AgentEvent> handler) { this.handler = handler; }

        /// <summary>Queues an event (the dispatch thread's part: never waits).</summary>
        internal void Post(string json)
        {
            lock (gate)
            {
                queue.Enqueue(json);
                if (busy) return;
                busy = true;
                lastProgress = clock.ElapsedMilliseconds;
            }
            SdkThreads.Run(Drain);
        }

        void Drain()
        {
            while (true)
            {
                string json = null;
                List<Action> done = null;
                lock (gate)
                {
                    if (queue.Count == 0)
                    {
                        busy = false;
                        done = whenDelivered;
                        whenDelivered = null;
                    }
                    else
                    {
                        json = queue.Dequeue();
                        lastProgress = clock.ElapsedMilliseconds;
                    }
                }
                if (json == null)
                {
                    if (done != null) foreach (var a in done) a();
                    return;
                }
                try { handler(new AgentEvent(json)); }
                catch (Exception) { /* an event has no call to fail, and the run does not depend on its listener */ }
            }
        }

        /// <summary>Runs <paramref name="then"/> (SDK code that never blocks) once every event
        /// queued so far has been handled; after <see cref="Abandon"/>, at the latest when the
        /// handler has held one event for <see cref="Grace"/>.</summary>
        internal void WhenDelivered(Action then)
        {
            int once = 0;
            Action act = () => { if (Interlocked.Exchange(ref once, 1) == 0) then(); };
            bool now, watch;
            lock (gate)
            {
                now = !busy;
                watch = !now && abandoned;
                if (!now) (whenDelivered ?? (whenDelivered = new List<Action>())).Add(act);
            }
            if (now) act();
            else if (watch) Watch(act);
        }

        /// <summary>Nobody waits for the handler any more than <see cref="Grace"/> per event
        /// (the run was cancelled).</summary>
        internal void Abandon()
        {
            List<Action> waiting;
            lock (gate)
            {
                if (abandoned) return;
                abandoned = true;
                waiting = whenDelivered == null ? null : new List<Action>(whenDelivered);
            }
            if (waiting != null) foreach (var a in waiting) Watch(a);
        }

        // Runs act once the handler has held its current event for Grace (checked again
        // while it keeps taking events); the delivery runs it sooner if the queue empties.
        void Watch(Action act)
        {
            long due;
            lock (gate)
            {
                if (!busy) due = 0;
                else due = Math.Max(0, lastProgress + (long)Grace.TotalMilliseconds - clock.ElapsedMilliseconds);
            }
            if (due == 0) { act(); return; }
            Dispatcher.After(TimeSpan.FromMilliseconds(due), () =>
            {
                bool stuck;
                lock (gate) stuck = busy && clock.ElapsedMilliseconds - lastProgress >= (long)Grace.TotalMilliseconds;
                if (stuck) act();
                else Watch(act);
            });
        }
    }
}
