using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>Deferred tools and the built-in tool_search (docs/behaviour.md §17).</summary>
    [TestFixture]
    public class DeferredToolsTests
    {
        /// <summary>The ids a model request offered, in offered order.</summary>
        internal static string[] Offered(ModelRequest request) => request.Tools.Select(t => t.Id).ToArray();

        /// <summary>An always-loaded tool that needs approval (to pause the run) and a
        /// deferred weather tool counting its executions.</summary>
        static Agent WeatherAgent(int[] executions) => AgentSdk.CreateAgent(new AgentDefinition
        {
            Id = "deferred",
            Tools = new[]
            {
                new Tool("gate", (i, rt) => Task.FromResult<object>("opened"), "Needs approval") { RequireApproval = true },
                new Tool("lookup_weather", (i, rt) =>
                {
                    Interlocked.Increment(ref executions[0]);
                    return Task.FromResult<object>("sunny in " + ((Dictionary<string, object>)i)["city"]);
                }, "Current weather of a city", Schema("city")) { DeferLoading = true },
            },
        });

        /// <summary>A deferred tool is offered only once tool_search has found it; the state
        /// keeps it loaded, so a continue in a fresh agent still offers it.</summary>
        [Test]
        public async Task ToolSearchLoadsADeferredToolThatSurvivesAPause()
        {
            var executions = new int[1];
            var first = new RecordingClient(
                Calls("c1", "tool_search", "{\"query\":\"weather\"}"),
                Calls("c2", "lookup_weather", "{\"city\":\"Oslo\"}"),
                Calls("c3", "gate", "{}"));
            RunResult paused;
            using (var agent = WeatherAgent(executions)) paused = await agent.Run(new RunOptions("weather?", first));
            Assert.AreEqual("waiting_for_human", paused.Status);
            Assert.AreEqual(3, first.Requests.Count);
            // Not offered at first; tool_search follows the always-loaded tools and the found
            // tool joins at the end from the next request on.
            Assert.AreEqual(new[] { "gate", "tool_search" }, Offered(first.Requests[0]));
            Assert.AreEqual(new[] { "gate", "tool_search", "lookup_weather" }, Offered(first.Requests[1]));
            StringAssert.Contains("\"id\":\"lookup_weather\"", paused.Messages.Single(m => m.ToolCallId == "c1").Content);
            Assert.AreEqual("sunny in Oslo", paused.Messages.Single(m => m.ToolCallId == "c2").Content);
            Assert.AreEqual(1, executions[0]);
            Assert.AreEqual(new[] { "lookup_weather" }, paused.Run.LoadedTools.ToArray());
            StringAssert.Contains("\"loadedTools\":[\"lookup_weather\"]", paused.ToJson());

            // Continued from the state text in a fresh agent, as another process would.
            var second = new RecordingClient(Calls("c4", "lookup_weather", "{\"city\":\"Lima\"}"), Text("done"));
            using (var agent = WeatherAgent(executions))
            {
                var done = await agent.ContinueRun(new ContinueOptions
                {
                    StateJson = paused.ToJson(), Client = second, Approvals = new ToolDecision[] { "c3" },
                });
                Assert.AreEqual("completed", done.Status);
                Assert.AreEqual("done", done.Output);
                Assert.AreEqual(2, executions[0]);
                Assert.AreEqual("sunny in Lima", done.Messages.Single(m => m.ToolCallId == "c4").Content);
            }
            Assert.AreEqual(new[] { "gate", "tool_search", "lookup_weather" }, Offered(second.Requests[0]));
            Assert.AreEqual(new[] { "gate", "tool_search", "lookup_weather" }, Offered(second.Requests[1]));
        }
    }
}
