using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>Call budgets, retries, attempts and idempotency keys (docs/behaviour.md §15).</summary>
    [TestFixture]
    public class LimitsTests
    {
        [Test]
        public async Task MaxCallsRefusesTheCallsBeyondIt()
        {
            int runs = 0;
            var tool = new Tool("search", (i, rt) => { System.Threading.Interlocked.Increment(ref runs); return Task.FromResult<object>("found"); }) { MaxCalls = 1 };
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "budget", Tools = new[] { tool } }))
            {
                var events = new EventLog();
                var client = new RecordingClient(Calls("c1", "search", "{}", "c2", "search", "{}"), Text("One search was enough."));
                var done = await agent.Run(new RunOptions("go", client) { OnEvent = events.Add });
                Assert.AreEqual("completed", done.Status);
                Assert.AreEqual(1, runs);
                var refused = done.Messages.Single(m => m.ToolCallId == "c2");
                Assert.IsTrue(refused.IsError);
                Assert.AreEqual("{\"error\":\"Tool search may be called at most 1 times in a run\"}", refused.Content);
                Assert.AreEqual(1, events.OfType("tool.started").Count);
                Assert.AreEqual(1, events.OfType("tool.failed").Count);
            }
        }

        [Test]
        public void ZeroMaxCallsAndAttemptsAreTheCoresDefinitionErrors()
        {
            var e = Assert.Throws<AgentException>(() => AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "budget",
                Tools = new[] { new Tool("t", (i, rt) => Task.FromResult<object>(1L)) { MaxCalls = 0 } },
            }));
            Assert.AreEqual(ErrorCodes.DefinitionInvalid, e.Code);
            StringAssert.Contains("maxCalls must be a whole number of at least 1, got 0", e.Message);
            var r = Assert.Throws<AgentException>(() => AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "retry",
                Tools = new[] { new Tool("t", (i, rt) => Task.FromResult<object>(1L)) { Retry = new ToolRetry(0) } },
            }));
            Assert.AreEqual(ErrorCodes.DefinitionInvalid, r.Code);
            StringAssert.Contains("retry.maxAttempts", r.Message);
        }

        [Test]
        public async Task RetriesCountAttemptsWithOneIdempotencyKey()
        {
            var attempts = new List<int>();
            var keys = new List<string>();
            var tool = new Tool("pay", (i, rt) =>
            {
                lock (attempts) { attempts.Add(rt.Attempt); keys.Add(rt.IdempotencyKey); }
                if (rt.Attempt < 3) throw new InvalidOperationException("service unavailable " + rt.Attempt);
                return Task.FromResult<object>((long)rt.Attempt);
            }) { Retry = new ToolRetry(3, TimeSpan.FromMilliseconds(10)) };
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "retry", Tools = new[] { tool } }))
            {
                var events = new EventLog();
                var done = await agent.Run(new RunOptions("pay", new RecordingClient(Calls("c1", "pay", "{}"), Text("Paid."))) { OnEvent = events.Add });
                Assert.AreEqual("completed", done.Status);
                Assert.AreEqual("3", done.Messages.Single(m => m.Role == "tool").Content);
                Assert.AreEqual(new[] { 1, 2, 3 }, attempts.ToArray());
                Assert.AreEqual(Enumerable.Repeat(done.Run.Id + ":c1", 3).ToArray(), keys.ToArray());
                Assert.AreEqual(1, events.OfType("tool.started").Count);
                var retrying = events.OfType("tool.retrying");
                Assert.AreEqual(2, retrying.Count);
                for (int n = 0; n < 2; n++)
                {
                    Assert.AreEqual("c1", retrying[n].Details["toolCallId"]);
                    Assert.AreEqual("pay", retrying[n].Details["toolName"]);
                    Assert.AreEqual((long)(n + 2), retrying[n].Details["attempt"]);
                    StringAssert.Contains("service unavailable " + (n + 1), Json.Write(retrying[n].Details["error"]));
                }
            }
        }

        [Test]
        public async Task RunAndContinueMaxToolCalls()
        {
            int runs = 0;
            var tool = new Tool("deploy", (i, rt) => { System.Threading.Interlocked.Increment(ref runs); return Task.FromResult<object>("ok"); }) { RequireApproval = true };
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { tool } }))
            {
                var client = new RecordingClient(Calls("c1", "deploy", "{}"), Calls("c2", "deploy", "{}"), Text("Stopped."));
                var paused = await agent.Run(new RunOptions("deploy", client) { ToolExecution = new ToolExecutionConfig(MaxToolCalls: 1) });
                var done = await agent.ContinueRun(new ContinueOptions(paused, client)
                {
                    Rejections = new[] { new ToolDecision("c1", "no") },
                    ToolExecution = new ToolExecutionConfig(MaxToolCalls: 1),
                });
                Assert.AreEqual("completed", done.Status);
                Assert.AreEqual(0, runs);
                var refused = done.Messages.Single(m => m.ToolCallId == "c2");
                Assert.IsTrue(refused.IsError);
                Assert.AreEqual("{\"error\":\"A run may make at most 1 tool calls\"}", refused.Content);
                var e = Assert.Throws<AgentException>(() => agent.Run(new RunOptions("x", client) { ToolExecution = new ToolExecutionConfig(MaxToolCalls: 0) }).GetAwaiter().GetResult());
                StringAssert.Contains("toolExecution.maxToolCalls", e.Message);
            }
        }
    }
}
