using System;
using System.Threading;
using System.Threading.Tasks;
using PhaseoAgentSdk;

namespace PhaseoAgentSdk.TestWorker
{
    /// <summary>A worker process of the recover test (RecoverTests) and of the hostile probe
    /// (ProbeTests: <c>probe SEED FROM INPUTS</c>): <c>pause PATH</c> runs the
    /// store-backed agent until it pauses for approval; <c>hang PATH RUN_ID</c> continues that
    /// run and hangs inside the approved tool (the test kills it there). Each prints one JSON
    /// line: <c>{"executing":true}</c> from the hanging tool, else the run id and status.</summary>
    static class Worker
    {
        /// <summary>The agent every worker (and the test's rescuer) runs: a 1 s lease renewed
        /// every 250 ms, an approval-gated tool that hangs when asked to.</summary>
        internal static Agent Agent(RunStore store, bool hang) => AgentSdk.CreateAgent(new AgentDefinition
        {
            Id = "store-worker", Store = store, Lease = new LeaseConfig(TimeSpan.FromSeconds(1), TimeSpan.FromMilliseconds(250)),
            Tools = new[]
            {
                new Tool("deploy", async (input, rt) =>
                {
                    if (hang)
                    {
                        Console.WriteLine("{\"executing\":true}");
                        Console.Out.Flush();
                        await Task.Delay(Timeout.Infinite);
                    }
                    return "deployed";
                }) { RequireApproval = true },
            },
        });

        static int Main(string[] args)
        {
            // The hostile probe's child (bindings-dotnet/tests/ProbeTests.cs): probe SEED FROM INPUTS.
            if (args.Length == 4 && args[0] == "probe")
                return PhaseoAgentSdk.Tests.Probe.Child(int.Parse(args[1]), int.Parse(args[2]), int.Parse(args[3]));
            // A stdio MCP server of the serving tests (bindings-dotnet/tests/ServeTests.cs).
            if (args.Length == 1 && args[0] == "serve-stdio")
                return PhaseoAgentSdk.Tests.ServeTests.ServeStdio();
            if (args.Length == 1 && args[0] == "serve-http")
                return PhaseoAgentSdk.Tests.ServeTests.ServeHttp();
            // The typed tool's cross-language handoff (TypedWorker): typed pause|continue FILE.
            if (args.Length == 3 && args[0] == "typed")
                return TypedWorker.Run(args[1], args[2]);
            try
            {
                using (var store = RunStore.Sqlite(args[1]))
                using (var agent = Agent(store, args[0] == "hang"))
                {
                    RunResult r;
                    if (args[0] == "pause")
                        using (var client = new ScriptedClient(new object[] { Calls() }))
                            r = agent.Run(new RunOptions("deploy please", client)).GetAwaiter().GetResult();
                    else
                        using (var client = new ScriptedClient(new object[] { new System.Collections.Generic.Dictionary<string, object> { { "text", "done" } } }))
                            r = agent.ContinueRun(new ContinueOptions { RunId = args[2], Client = client, Approvals = new ToolDecision[] { "c1" } }).GetAwaiter().GetResult();
                    Console.WriteLine("{\"runId\":\"" + r.Run.Id + "\",\"status\":\"" + r.Status + "\"}");
                    return 0;
                }
            }
            catch (Exception e)
            {
                Console.Error.WriteLine(e);
                return 1;
            }
        }

        static object Calls() => new System.Collections.Generic.Dictionary<string, object>
        {
            { "toolCalls", new object[] { new System.Collections.Generic.Dictionary<string, object> { { "id", "c1" }, { "name", "deploy" }, { "arguments", "{}" } } } },
        };
    }
}
