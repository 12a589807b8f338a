using System.Linq;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>An agent as a tool of another (docs/behaviour.md §18).</summary>
    [TestFixture]
    public class AgentsAsToolsTests
    {
        [Test]
        public async Task NestedApprovalSurfacesAndIsDecidedOnTheOuterContinue()
        {
            using (var researcher = AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "researcher",
                Tools = new[] { new Tool("lookup", (input, rt) => Task.FromResult<object>("fact")) { RequireApproval = true } },
            }))
            using (var boss = AgentSdk.CreateAgent(new AgentDefinition { Id = "boss", Tools = new[] { researcher.AsTool() } }))
            {
                var client = new RecordingClient(Calls("c1", "researcher", "{\"input\":\"topic\"}"), Calls("n1", "lookup", "{}"),
                    Text("inner done"), Text("All done."));
                var paused = await boss.Run(new RunOptions("study", client));
                var pending = paused.Run.Pause.PendingToolCalls.Single();
                Assert.AreEqual(("c1/n1", "lookup", "approval"), (pending.Call.Id, pending.Call.Name, pending.Kind));
                var refused = Assert.Throws<AgentException>(() => boss.ContinueRun(new ContinueOptions(paused, client)
                {
                    Approvals = new[] { new ToolDecision("c1/n9") },
                }).GetAwaiter().GetResult());
                Assert.AreEqual("Unknown tool call c1/n9", refused.Message);
                var events = new EventLog();
                var done = await boss.ContinueRun(new ContinueOptions(paused, client)
                {
                    Approvals = new[] { new ToolDecision("c1/n1") },
                    OnEvent = events.Add,
                });
                Assert.AreEqual("All done.", done.Output);
                Assert.AreEqual("c1", events.OfType("run.completed").First().ParentToolCallId);
            }
        }
    }
}
