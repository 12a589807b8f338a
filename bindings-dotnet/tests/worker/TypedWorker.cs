using System.Collections.Generic;
using System.IO;
using System.Linq;
using PhaseoAgentSdk;
using PhaseoAgentSdk.Tests.Typed;

namespace PhaseoAgentSdk.TestWorker
{
    /// <summary>One half of a typed tool's cross-language handoff (docs/behaviour.md §4, §20),
    /// run by tests/typed-handoff/run.sh: <c>typed pause FILE</c> — the model asks for a refund,
    /// the run pauses for approval and its state is written to FILE; <c>typed continue FILE</c>
    /// — the stored run is approved and continued here. Prints one JSON line: the status and,
    /// after continuing, the output and the refund tool's message.</summary>
    static class TypedWorker
    {
        const string Args = "{\"order_id\":\"A-17\",\"amount\":25,\"reason\":\"damaged\"," +
            "\"lines\":[{\"sku\":\"MUG-1\",\"quantity\":2},{\"sku\":\"CUP-9\",\"quantity\":1}],\"customer\":{\"email\":\"ana@example.com\"}}";

        internal static int Run(string mode, string path)
        {
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "desk", Tools = new[] { RefundTool.Create(new List<Refund>()) } }))
            {
                if (mode == "pause")
                {
                    var call = new Dictionary<string, object> { { "id", "c1" }, { "name", "refund" }, { "arguments", Args } };
                    var calls = new Dictionary<string, object> { { "toolCalls", new List<object> { call } } };
                    using (var client = new ScriptedClient(new object[] { calls }))
                    {
                        var paused = agent.Run(new RunOptions("refund A-17", client)).GetAwaiter().GetResult();
                        File.WriteAllText(path, paused.ToJson());
                        var pending = paused.Run.Pause.PendingToolCalls.Select(p => (object)p.Call.Id).ToList();
                        System.Console.WriteLine(Json.Write(new Dictionary<string, object> { { "status", paused.Status }, { "pending", pending } }));
                    }
                    return 0;
                }
                if (mode != "continue")
                {
                    System.Console.Error.WriteLine("usage: typed pause|continue FILE");
                    return 2;
                }
                using (var client = new ScriptedClient(new object[] { new Dictionary<string, object> { { "text", "Refunded." } } }))
                {
                    var done = agent.ContinueRun(new ContinueOptions(RunResult.FromJson(File.ReadAllText(path)), client)
                    {
                        Approvals = new ToolDecision[] { "c1" },
                    }).GetAwaiter().GetResult();
                    var tool = done.Messages.First(m => m.Role == "tool");
                    System.Console.WriteLine(Json.Write(new Dictionary<string, object>
                    {
                        { "status", done.Status }, { "output", done.Output }, { "tool", Json.Parse(tool.Content) },
                    }));
                    return 0;
                }
            }
        }
    }
}
