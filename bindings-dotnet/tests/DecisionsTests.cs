using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>Collects a run's events (OnEvent runs on a thread of the SDK).</summary>
    sealed class EventLog
    {
        readonly List<AgentEvent> events = new List<AgentEvent>();
        public void Add(AgentEvent e) { lock (events) events.Add(e); }
        public List<AgentEvent> OfType(string type) { lock (events) return events.Where(e => e.Type == type).ToList(); }
    }

    /// <summary>Approvals with an edited input and responses (docs/behaviour.md §14).</summary>
    [TestFixture]
    public class DecisionsTests
    {
        /// <summary>"deploy" needs approval (env staging|production) and records what it ran with.</summary>
        static Agent GatedAgent(List<string> ran) => AgentSdk.CreateAgent(new AgentDefinition
        {
            Id = "ops",
            Tools = new[]
            {
                new Tool("deploy", (input, rt) => { lock (ran) ran.Add(Json.Write(input)); return Task.FromResult(input); })
                {
                    RequireApproval = true,
                    Parameters = O("type", "object", "required", L("env"), "additionalProperties", false,
                        "properties", O("env", O("type", "string", "enum", L("staging", "production")))),
                },
            },
        });

        [Test]
        public async Task ApprovalWithEditedInputRunsIt()
        {
            var ran = new List<string>();
            using (var agent = GatedAgent(ran))
            {
                var client = new RecordingClient(Calls("c1", "deploy", "{\"env\":\"production\"}"), Text("Deployed to staging."));
                var paused = await agent.Run(new RunOptions("deploy", client));
                var events = new EventLog();
                var done = await agent.ContinueRun(new ContinueOptions(paused, client)
                {
                    Approvals = new[] { new ToolDecision("c1", EditedInput: O("env", "staging")) },
                    OnEvent = events.Add,
                });
                Assert.AreEqual("completed", done.Status);
                Assert.AreEqual(new[] { "{\"env\":\"staging\"}" }, ran.ToArray());
                var call = done.Messages.Last(m => m.ToolCalls != null && m.ToolCalls.Count > 0).ToolCalls.Single();
                Assert.AreEqual("c1", call.Id);
                Assert.AreEqual("{\"env\":\"staging\"}", Json.Write(call.Input));
                var started = events.OfType("tool.started");
                Assert.AreEqual(1, started.Count);
                Assert.AreEqual(true, started[0].Details["inputEdited"]);
                StringAssert.Contains("\"originalInput\":{\"env\":\"production\"}", Json.Write(done.Value["stepResults"]));
            }
        }

        [Test]
        public async Task InvalidEditedInputIsRefusedAndTheStateStaysUsable()
        {
            var ran = new List<string>();
            using (var agent = GatedAgent(ran))
            {
                var client = new RecordingClient(Calls("c1", "deploy", "{\"env\":\"production\"}"), Text("Deployed."));
                var paused = await agent.Run(new RunOptions("deploy", client));
                var e = Assert.Throws<AgentException>(() => agent.ContinueRun(new ContinueOptions(paused, client)
                {
                    Approvals = new[] { new ToolDecision("c1", EditedInput: O("env", "moon")) },
                }).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.ContinueInvalid, e.Code);
                StringAssert.Contains("Edited input for tool call c1 is invalid", e.Message);
                Assert.IsEmpty(ran);
                var done = await agent.ContinueRun(new ContinueOptions(paused, client) { Approvals = new ToolDecision[] { "c1" } });
                Assert.AreEqual("completed", done.Status);
                Assert.AreEqual(new[] { "{\"env\":\"production\"}" }, ran.ToArray());
            }
        }

        [Test]
        public async Task ResponseAnswersInTheToolsPlace()
        {
            var ran = new List<string>();
            using (var agent = GatedAgent(ran))
            {
                var client = new RecordingClient(Calls("c1", "deploy", "{\"env\":\"production\"}"), Text("Done by hand."));
                var paused = await agent.Run(new RunOptions("deploy", client));
                var events = new EventLog();
                var done = await agent.ContinueRun(new ContinueOptions(paused, client)
                {
                    Responses = new[] { new ToolOutput("c1", O("deployedBy", "Ada")) },
                    OnEvent = events.Add,
                });
                Assert.AreEqual("Done by hand.", done.Output);
                Assert.IsEmpty(ran);
                var message = done.Messages.Single(m => m.Role == "tool");
                Assert.IsFalse(message.IsError);
                Assert.AreEqual("{\"deployedBy\":\"Ada\"}", message.Content);
                Assert.IsEmpty(events.OfType("tool.started"));
                Assert.AreEqual(true, events.OfType("tool.completed").Single().Details["respondedByHuman"]);
                var twice = Assert.Throws<AgentException>(() => agent.ContinueRun(new ContinueOptions(paused, client)
                {
                    Approvals = new ToolDecision[] { "c1" },
                    Responses = new[] { new ToolOutput("c1", 1L) },
                }).GetAwaiter().GetResult());
                StringAssert.Contains("Tool call c1 has more than one decision", twice.Message);
            }
        }
    }
}
