using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>A model client whose request never ends on its own (only its token ends it).</summary>
    sealed class NeverAnsweringClient : IModelClient
    {
        public async Task<ModelResponse> Generate(ModelRequest request)
        {
            await Task.Delay(Timeout.Infinite, request.CancellationToken);
            return new ModelResponse("never");
        }
    }

    /// <summary>What one application's callbacks do to the others: a blocked event handler,
    /// a thread pool with no free thread. Each wall bound here only catches a hang: what is
    /// checked would take forever (or until the test releases it) when broken.</summary>
    [TestFixture]
    public class DispatchTests
    {
        static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

        static bool Ends(Task t, TimeSpan within) => ((IAsyncResult)t).AsyncWaitHandle.WaitOne(within);

        /// <summary>Run A's OnEvent blocks on its first event. Run B, started after, still runs
        /// its tool and completes (its own events all delivered, in order, before its Task
        /// completes); A, cancelled while its handler is still blocked, returns
        /// <c>cancelled</c>; once released, A's handler gets the rest of A's events in order,
        /// <c>run.cancelled</c> last.</summary>
        [Test]
        public void ABlockedOnEventHoldsNeitherOtherRunsNorItsOwnCancellation()
        {
            var release = new ManualResetEventSlim();
            var entered = new ManualResetEventSlim();
            var seenByA = new List<string>();
            try
            {
                var tool = new Tool("t", (i, rt) => Task.FromResult<object>("ok"));
                using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { tool } }))
                using (var cts = new CancellationTokenSource())
                {
                    var a = agent.Run(new RunOptions("go", new NeverAnsweringClient())
                    {
                        CancellationToken = cts.Token,
                        OnEvent = e =>
                        {
                            lock (seenByA) seenByA.Add(e.Type);
                            entered.Set();
                            release.Wait();
                        },
                    });
                    Assert.IsTrue(entered.Wait(Bound), "run A's handler was never called");

                    var seenByB = new List<string>();
                    var b = agent.Run(new RunOptions("go", new RecordingClient(Calls("c1", "t", "{}"), Text("done")))
                    {
                        OnEvent = e => { lock (seenByB) seenByB.Add(e.Type); },
                    });
                    Assert.IsTrue(Ends(b, Bound), "run B waited for run A's blocked handler");
                    Assert.AreEqual("completed", b.Result.Status);
                    lock (seenByB)
                    {
                        Assert.AreEqual("run.started", seenByB.First());
                        Assert.AreEqual("run.completed", seenByB.Last(), string.Join(", ", seenByB));
                        CollectionAssert.Contains(seenByB, "tool.completed");
                    }

                    cts.Cancel();
                    Assert.IsTrue(Ends(a, Bound), "cancelling run A waited for its blocked handler");
                    Assert.AreEqual("cancelled", a.Result.Status);

                    release.Set();
                    var sw = Stopwatch.StartNew();
                    while (sw.Elapsed < Bound)
                    {
                        lock (seenByA) if (seenByA.Last() == "run.cancelled") break;
                        Thread.Sleep(20);
                    }
                    lock (seenByA)
                    {
                        Assert.AreEqual("run.cancelled", seenByA.Last(), string.Join(", ", seenByA));
                        Assert.AreEqual("run.started", seenByA.First());
                        Assert.AreEqual(1, seenByA.Count(t => t == "run.cancelled"));
                    }
                }
            }
            finally { release.Set(); }
        }

        /// <summary>A tool delegate that blocks before returning its Task (here until the next
        /// call has started) does not hold the calls after it: the next call starts anyway, the
        /// calls still start in call order, and their messages follow call order.</summary>
        [Test]
        public void ADelegateThatBlocksBeforeReturningItsTaskDoesNotHoldTheNextCall()
        {
            var started = new List<string>();
            var secondStarted = new ManualResetEventSlim();
            bool released = false;
            var block = new Tool("block", (i, rt) =>
            {
                lock (started) started.Add(rt.ToolCall.Id);
                // Synchronous: the delegate has not returned its Task while it waits.
                released = secondStarted.Wait(Bound);
                return Task.FromResult<object>("unblocked");
            });
            var mark = new Tool("mark", (i, rt) =>
            {
                lock (started) started.Add(rt.ToolCall.Id);
                if (rt.ToolCall.Id == "b") secondStarted.Set();
                return Task.FromResult<object>(rt.ToolCall.Id);
            });
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { block, mark } }))
            {
                var client = new RecordingClient(Calls("a", "block", "{}", "b", "mark", "{}", "c", "mark", "{}"), Text("done"));
                var run = agent.Run(new RunOptions("go", client) { ToolExecution = new ToolExecutionConfig(Concurrency: 3) });
                Assert.IsTrue(Ends(run, Bound), "the run did not end");
                Assert.AreEqual("completed", run.Result.Status);
                Assert.IsTrue(released, "the call after a blocked delegate never started");
                lock (started) CollectionAssert.AreEqual(new[] { "a", "b", "c" }, started);
                var tools = client.Requests[1].Messages.Where(m => m.Role == "tool").Select(m => m.ToolCallId).ToArray();
                CollectionAssert.AreEqual(new[] { "a", "b", "c" }, tools);
            }
        }

        /// <summary>The calls of a large turn (more than the driver hands its host at once)
        /// each start once, in call order, and their messages follow call order.</summary>
        [Test]
        public void TheCallsOfALargeTurnStartOnceEachInCallOrder()
        {
            var started = new List<string>();
            var mark = new Tool("mark", (i, rt) =>
            {
                lock (started) started.Add(rt.ToolCall.Id);
                return Task.FromResult<object>(rt.ToolCall.Id);
            });
            var ids = Enumerable.Range(0, 150).Select(n => "c" + n).ToArray();
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { mark } }))
            {
                var client = new RecordingClient(Calls(ids.SelectMany(id => new[] { id, "mark", "{}" }).ToArray()), Text("done"));
                var run = agent.Run(new RunOptions("go", client) { ToolExecution = new ToolExecutionConfig(Concurrency: ids.Length) });
                Assert.IsTrue(Ends(run, Bound), "the run did not end");
                Assert.AreEqual("completed", run.Result.Status);
                lock (started) CollectionAssert.AreEqual(ids, started);
                var tools = client.Requests[1].Messages.Where(m => m.Role == "tool").Select(m => m.ToolCallId).ToArray();
                CollectionAssert.AreEqual(ids, tools);
            }
        }

        /// <summary>A turn of one call after the first is run by the run's own driver thread.
        /// When that call blocks (here until the test ends), the run still sees its timeout
        /// on time: another thread polls the run on, and the run fails with
        /// <c>tool_timeout</c> while the call is still blocked.</summary>
        [Test]
        public void ACallThatBlocksTheRunsDriverDoesNotHoldItsTimeout()
        {
            var release = new ManualResetEventSlim();
            int blocked = 0;
            var block = new Tool("block", (i, rt) =>
            {
                Interlocked.Increment(ref blocked);
                release.Wait(Bound); // synchronous: the delegate has not returned its Task
                return Task.FromResult<object>("released");
            }, Timeout: TimeSpan.FromMilliseconds(200));
            var mark = new Tool("mark", (i, rt) => Task.FromResult<object>(rt.ToolCall.Id));
            try
            {
                using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { block, mark } }))
                {
                    var client = new RecordingClient(Calls("m1", "mark", "{}"), Calls("b1", "block", "{}"), Text("done"));
                    var run = agent.Run(new RunOptions("go", client));
                    Assert.IsTrue(Ends(run, Bound), "the run waited for the blocked call");
                    Assert.IsFalse(release.IsSet);
                    Assert.AreEqual(1, Volatile.Read(ref blocked));
                    var e = run.Exception.InnerException as AgentException;
                    Assert.IsNotNull(e, run.Exception.ToString());
                    Assert.AreEqual("tool_timeout", e.Code);
                    Assert.AreEqual("failed", e.State.Status);
                    Assert.AreEqual(2, client.Requests.Count);
                }
            }
            finally { release.Set(); }
        }

        /// <summary>A turn's calls start one after the other on one pool thread: a call that
        /// blocks there after another one was answered on that thread does not hold the run's
        /// timeout.</summary>
        [Test]
        public void ACallBlockingAfterOneAnsweredOnTheSameThreadDoesNotHoldTheTimeout()
        {
            var release = new ManualResetEventSlim();
            var block = new Tool("block", (i, rt) =>
            {
                release.Wait(Bound);
                return Task.FromResult<object>("released");
            }, Timeout: TimeSpan.FromMilliseconds(200));
            var mark = new Tool("mark", (i, rt) => Task.FromResult<object>(rt.ToolCall.Id));
            try
            {
                using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { mark, block } }))
                {
                    var client = new RecordingClient(Calls("m1", "mark", "{}", "b1", "block", "{}"), Text("done"));
                    var run = agent.Run(new RunOptions("go", client));
                    Assert.IsTrue(Ends(run, Bound), "the run waited for the blocked call");
                    Assert.IsFalse(release.IsSet);
                    var e = run.Exception.InnerException as AgentException;
                    Assert.IsNotNull(e, run.Exception.ToString());
                    Assert.AreEqual("tool_timeout", e.Code);
                }
            }
            finally { release.Set(); }
        }

        /// <summary>A tool that cancels its own run (on the thread that starts the run's
        /// calls) and returns a Task that never completes: the run still ends, cancelled.</summary>
        [Test]
        public void AToolCancellingItsOwnRunWithoutAnsweringEndsTheRun()
        {
            using (var cts = new CancellationTokenSource())
            {
                var never = new TaskCompletionSource<object>();
                var cancel = new Tool("cancel", (i, rt) =>
                {
                    cts.Cancel();
                    return never.Task;
                });
                using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { cancel } }))
                {
                    var client = new RecordingClient(Calls("c1", "cancel", "{}"), Text("done"));
                    var run = agent.Run(new RunOptions("go", client) { CancellationToken = cts.Token });
                    Assert.IsTrue(Ends(run, Bound), "the cancelled run never ended");
                    Assert.AreEqual("cancelled", run.Result.Status);
                }
            }
        }

        /// <summary>A run whose handler keeps up still sees every event, <c>run.cancelled</c>
        /// included, before its cancelled run returns.</summary>
        [Test]
        public void ACancelledRunsHandlerThatKeepsUpSeesRunCancelledBeforeTheRunReturns()
        {
            var seen = new List<string>();
            var asked = new ManualResetEventSlim();
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a" }))
            using (var cts = new CancellationTokenSource())
            {
                var run = agent.Run(new RunOptions("go", new NeverAnsweringClient())
                {
                    CancellationToken = cts.Token,
                    OnEvent = e => { lock (seen) seen.Add(e.Type); if (e.Type == "model.requested") asked.Set(); },
                });
                Assert.IsTrue(asked.Wait(Bound), "the model was never asked");
                cts.Cancel();
                Assert.IsTrue(Ends(run, Bound), "the cancelled run did not return");
                Assert.AreEqual("cancelled", run.Result.Status);
                lock (seen) Assert.AreEqual("run.cancelled", seen.Last(), string.Join(", ", seen));
            }
        }

        /// <summary>Every thread of the pool is blocked by the application. A run cancelled
        /// (from a thread of its own) at 300 ms returns in well under the 10 s bound: neither
        /// the cancellation nor the run's end needs a pool thread. (Blocked, it would wait
        /// until the pool is freed at the end of the test.)</summary>
        [Test]
        public void ACancelledRunReturnsWhileEveryPoolThreadIsBlocked()
        {
            ThreadPool.GetMinThreads(out var minWorkers, out var minIo);
            var gate = new ManualResetEventSlim();
            int running = 0;
            try
            {
                ThreadPool.SetMinThreads(2, minIo);
                // Far more blocked items than the pool can start threads for in the bound.
                for (int i = 0; i < 400; i++)
                    ThreadPool.QueueUserWorkItem(_ => { Interlocked.Increment(ref running); gate.Wait(); });
                var sw = Stopwatch.StartNew();
                while (Volatile.Read(ref running) < 2 && sw.Elapsed < Bound) Thread.Sleep(10);
                Assert.GreaterOrEqual(Volatile.Read(ref running), 2, "the pool never started the blocking items");

                using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a" }))
                using (var cts = new CancellationTokenSource())
                {
                    var started = Stopwatch.StartNew();
                    var run = agent.Run(new RunOptions("go", new NeverAnsweringClient()) { CancellationToken = cts.Token });
                    var canceller = new Thread(() => { Thread.Sleep(300); cts.Cancel(); }) { IsBackground = true };
                    canceller.Start();
                    Assert.IsTrue(Ends(run, TimeSpan.FromSeconds(10)), "the cancelled run waited for a pool thread");
                    Assert.Less(started.Elapsed, TimeSpan.FromSeconds(10));
                    Assert.AreEqual("cancelled", run.Result.Status);
                }
            }
            finally
            {
                gate.Set();
                ThreadPool.SetMinThreads(minWorkers, minIo);
            }
        }
    }
}
