using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    [TestFixture]
    public class QuickstartTests
    {
        [Test]
        public async Task PauseStoreAsJsonAndContinue()
        {
            var deploy = AgentSdk.DefineTool(new Tool("deploy", async (input, runtime) =>
            {
                await runtime.EmitProgress(O("phase", "rolling out"));
                return O("deployed", ((Dictionary<string, object>)input)["env"], "key", runtime.ToolCall.Id);
            }, "Deploy a release", Schema("env"), TimeSpan.FromSeconds(5)) { RequireApproval = true });
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { deploy } }))
            using (var client = new ScriptedClient(new object[] { Calls("c1", "deploy", "{\"env\":\"prod\"}"), Text("Deployed.") }))
            {
                var paused = await agent.Run(new RunOptions { Input = "deploy to prod", Client = client });
                Assert.AreEqual("waiting_for_human", paused.Status);
                Assert.AreEqual("tool_approval", paused.Run.Pause.Kind);
                Assert.AreEqual("c1", paused.Run.Pause.PendingToolCalls[0].Call.Id);
                var stored = paused.ToJson();
                var done = await agent.ContinueRun(new ContinueOptions
                {
                    Run = RunResult.FromJson(stored), Client = client, Approvals = new ToolDecision[] { "c1" },
                });
                Assert.AreEqual("completed", done.Status);
                Assert.AreEqual("Deployed.", done.Output);
                var toolMessage = done.Messages[done.Messages.Count - 2];
                Assert.AreEqual("tool", toolMessage.Role);
                Assert.AreEqual("{\"deployed\":\"prod\",\"key\":\"c1\"}", toolMessage.Content);
            }
        }
    }
}
