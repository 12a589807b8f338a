using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>What the hostile probe (ProbeTests) found, each kept as a test of its own.</summary>
    [TestFixture]
    public class ProbeRegressionTests
    {
        /// <summary>Calls tool "t" (or the tools given) once, then answers text.</summary>
        sealed class Once : IModelClient
        {
            int n;
            public Task<ModelResponse> Generate(ModelRequest request) =>
                Task.FromResult(Interlocked.Increment(ref n) == 1
                    ? new ModelResponse(null, new[] { new ModelToolCall("c1", "t", "{}") })
                    : new ModelResponse("done"));
        }

        /// <summary>Answers text.</summary>
        sealed class Answer : IModelClient
        {
            public Task<ModelResponse> Generate(ModelRequest request) => Task.FromResult(new ModelResponse("done"));
        }

        static (Agent Agent, RunResult Paused) Paused()
        {
            var agent = AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "p",
                Tools = new[] { new Tool("t", (i, rt) => Task.FromResult<object>("ran")) { RequireApproval = true } },
            });
            var paused = agent.Run(new RunOptions("go", new Once())).Result;
            Assert.AreEqual("waiting_for_human", paused.Status);
            return (agent, paused);
        }

        [Test]
        public void NullElementsOfOptionsAreErrorsNamingThem()
        {
            var e = Assert.Throws<AgentException>(() => AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "a", StopWhen = new StopCondition[] { AgentSdk.StepCountIs(3), null },
            }));
            Assert.AreEqual(ErrorCodes.DefinitionInvalid, e.Code);
            StringAssert.Contains("stopWhen[1] is null", e.Message);
            var (agent, paused) = Paused();
            using (agent)
            {
                var c = Assert.Throws<AgentException>(() => agent.ContinueRun(new ContinueOptions(paused, new Once()) { Approvals = new ToolDecision[] { "c1", null } }));
                Assert.AreEqual(ErrorCodes.ContinueInvalid, c.Code);
                StringAssert.Contains("approvals[1] is null", c.Message);
                c = Assert.Throws<AgentException>(() => agent.ContinueStream(new ContinueOptions(paused, new Once()) { Rejections = new ToolDecision[] { null } }));
                StringAssert.Contains("rejections[0] is null", c.Message);
                c = Assert.Throws<AgentException>(() => agent.ContinueRun(new ContinueOptions(paused, new Once()) { ToolOutputs = new ToolOutput[] { null } }));
                StringAssert.Contains("toolOutputs[0] is null", c.Message);
                // Nothing was lost: the state still continues.
                Assert.AreEqual("completed", agent.ContinueRun(new ContinueOptions(paused, new Answer()) { Approvals = new ToolDecision[] { "c1" } }).Result.Status);
            }
        }

        [Test]
        public void CallerValuesJsonCannotHoldAreStateInvalid()
        {
            var cyclic = new Dictionary<string, object>();
            cyclic["me"] = cyclic;
            var deep = (object)"bottom";
            for (int i = 0; i < 65; i++) deep = new object[] { deep };
            var sixtyFour = (object)"bottom";
            for (int i = 0; i < 64; i++) sixtyFour = new object[] { sixtyFour };
            var (agent, paused) = Paused();
            using (agent)
            {
                foreach (var v in new object[] { cyclic, deep, new RawJson("{"), new ThrowingGetter(), IntPtr.Zero })
                {
                    var e = Assert.Throws<AgentException>(() => agent.Run(new RunOptions(v, new Once())));
                    Assert.AreEqual(ErrorCodes.StateInvalid, e.Code, e.Message);
                    StringAssert.StartsWith("Invalid run input: ", e.Message);
                    e = Assert.Throws<AgentException>(() => agent.ContinueRun(new ContinueOptions(paused, new Once()) { Approvals = new ToolDecision[] { "c1" }, Context = v }));
                    Assert.AreEqual(ErrorCodes.StateInvalid, e.Code, e.Message);
                    StringAssert.StartsWith("Invalid continue context: ", e.Message);
                    Assert.IsNull(e.State);
                }
                // A value of 64 levels is within the limit, wherever it stands in the options.
                var done = agent.ContinueRun(new ContinueOptions(paused, new Answer()) { Approvals = new ToolDecision[] { "c1" }, Context = sixtyFour }).Result;
                Assert.AreEqual("completed", done.Status);
            }
        }

        /// <summary>A state accessor whose Load and Save block until cancelled (or for ever).</summary>
        sealed class Blocking : IStateAccessor
        {
            internal bool Honour;
            internal string State;
            internal readonly ManualResetEventSlim Release = new ManualResetEventSlim();
            Task Wait(CancellationToken token) => Task.Run(() =>
            {
                if (Honour) WaitHandle.WaitAny(new[] { token.WaitHandle, Release.WaitHandle });
                else Release.Wait();
            });
            public async Task<RunResult> Load(string runId, CancellationToken token) { await Wait(token); return RunResult.FromJson(State); }
            public Task Save(RunResult result, CancellationToken token) => Wait(token);
        }

        [Test]
        public void ABlockingStateAccessorDoesNotHoldACancelledRun()
        {
            var (agent, paused) = Paused();
            using (agent)
            {
                foreach (var honour in new[] { true, false })
                {
                    var acc = new Blocking { Honour = honour, State = paused.ToJson() };
                    try
                    {
                        using (var cts = new CancellationTokenSource(200))
                        {
                            var run = agent.Run(new RunOptions("go", new Once()) { State = acc, CancellationToken = cts.Token });
                            Assert.IsTrue(((IAsyncResult)run).AsyncWaitHandle.WaitOne(TimeSpan.FromMinutes(1)), "the cancelled run did not end");
                            if (run.IsFaulted) Assert.AreEqual(ErrorCodes.StoreFailed, ((AgentException)run.Exception.InnerException).Code);
                            else Assert.AreEqual("cancelled", run.Result.Status);
                        }
                        using (var cts = new CancellationTokenSource(200))
                        {
                            var cont = agent.ContinueRun(new ContinueOptions { RunId = paused.Run.Id, State = acc, Client = new Once(), Approvals = new ToolDecision[] { "c1" }, CancellationToken = cts.Token });
                            Assert.IsTrue(((IAsyncResult)cont).AsyncWaitHandle.WaitOne(TimeSpan.FromMinutes(1)), "the cancelled continue did not end");
                            var e = (AgentException)cont.Exception.InnerException;
                            Assert.AreEqual(ErrorCodes.Cancelled, e.Code);
                            Assert.IsNull(e.State);
                        }
                    }
                    finally { acc.Release.Set(); }
                }
            }
        }
    }
}
