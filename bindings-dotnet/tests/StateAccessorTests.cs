using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>An application's own state storage (the product's IStateAccessor).</summary>
    sealed class MapAccessor : IStateAccessor
    {
        readonly Dictionary<string, string> rows = new Dictionary<string, string>();
        public int Saves;
        public Task<RunResult> Load(string runId, CancellationToken token = default(CancellationToken))
        {
            lock (rows) return Task.FromResult(rows.TryGetValue(runId, out var text) ? RunResult.FromJson(text) : null);
        }
        public async Task Save(RunResult result, CancellationToken token = default(CancellationToken))
        {
            await Task.Yield();
            lock (rows) { rows[result.Run.Id] = result.ToJson(); Saves++; }
        }
    }

    sealed class BrokenAccessor : IStateAccessor
    {
        public Task<RunResult> Load(string runId, CancellationToken token = default(CancellationToken)) => Task.FromResult<RunResult>(null);
        public Task Save(RunResult result, CancellationToken token = default(CancellationToken)) => throw new System.IO.IOException("disk full");
    }

    [TestFixture]
    public class StateAccessorTests
    {
        /// <summary>A run saves its checkpoints through the application's Save; a continue by
        /// RunId loads through Load; an unknown id, Store and State together and a failing
        /// accessor are clear errors; the accessor also serves as an agent's store.</summary>
        [Test]
        public async Task PauseSaveThroughTheAccessorAndContinueById()
        {
            int executions = 0;
            Func<RunStore, Agent> make = store => AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "ops", Store = store,
                Tools = new[] { new Tool("deploy", (input, rt) => { Interlocked.Increment(ref executions); return Task.FromResult<object>("ok"); }, "Deploy", Schema("env")) { RequireApproval = true } },
            });
            var acc = new MapAccessor();
            using (var agent = make(null))
            using (var client = new ScriptedClient(new object[] { Calls("c1", "deploy", "{\"env\":\"prod\"}"), Text("Deployed.") }))
            {
                var paused = await agent.Run(new RunOptions { Input = "deploy", Client = client, State = acc });
                Assert.AreEqual("waiting_for_human", paused.Status);
                Assert.Greater(acc.Saves, 0);
                var saved = await acc.Load(paused.Run.Id);
                Assert.AreEqual("waiting_for_human", saved.Status);

                var done = await agent.ContinueRun(new ContinueOptions { RunId = paused.Run.Id, Accessor = acc, Client = client, Approvals = new ToolDecision[] { "c1" } });
                Assert.AreEqual("Deployed.", done.Output);
                Assert.AreEqual(1, executions);
                Assert.AreEqual("completed", (await acc.Load(paused.Run.Id)).Status);

                var unknown = Assert.Throws<AgentException>(() => agent.ContinueRun(new ContinueOptions { RunId = "run_nope", State = acc, Client = client }).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.ContinueInvalid, unknown.Code);
                StringAssert.Contains("run_nope", unknown.Message);

                using (var mem = RunStore.Memory())
                {
                    var both = Assert.Throws<AgentException>(() => agent.Run(new RunOptions { Input = "x", Client = client, State = acc, Store = mem }).GetAwaiter().GetResult());
                    Assert.AreEqual(ErrorCodes.DefinitionInvalid, both.Code);
                }
            }
            using (var agent = make(null))
            using (var client = new ScriptedClient(new object[] { Text("hi") }))
            {
                var broken = Assert.Throws<AgentException>(() => agent.Run(new RunOptions { Input = "x", Client = client, State = new BrokenAccessor() }).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.StoreFailed, broken.Code);
                StringAssert.Contains("disk full", broken.Message);
            }
            // As an agent's store.
            using (var store = RunStore.FromAccessor(acc))
            using (var agent = make(store))
            using (var client = new ScriptedClient(new object[] { Calls("c9", "deploy", "{\"env\":\"qa\"}"), Text("ok") }))
            {
                var p2 = await agent.Run(new RunOptions("deploy", client));
                Assert.AreEqual("waiting_for_human", (await acc.Load(p2.Run.Id)).Status);
            }
        }
    }
}
