using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using PhaseoAgentSdk;

public static class ParallelProgress
{
    // Mono's compiler (C# 7.2 here) has no async Main: the entry point waits for the task.
    public static void Main() => RunAsync().GetAwaiter().GetResult();

    public static async Task RunAsync()
    {
        var parameters = (Dictionary<string, object>)Json.Parse(
            @"{""type"": ""object"", ""properties"": {""service"": {""type"": ""string""}}, ""required"": [""service""]}");
        var checkService = AgentSdk.DefineTool(new Tool("check-service", async (input, runtime) =>
        {
            var service = (string)((Dictionary<string, object>)input)["service"];
            // a tool.preliminary_result event
            await runtime.EmitProgress(new Dictionary<string, object> { ["checking"] = service });
            return new Dictionary<string, object> { ["service"] = service, ["up"] = service != "db" };
        }, "Check one service", parameters, TimeSpan.FromSeconds(3)));
        // The three calls of one turn run side by side; results keep the model's call order.
        var definition = new AgentDefinition
        {
            Id = "status",
            Tools = new[] { checkService },
            ToolExecution = new ToolExecutionConfig(Concurrency: 3),
        };
        var calls = new[] { "api", "db", "queue" }.Select((service, i) => new Dictionary<string, object>
        {
            ["id"] = "c" + (i + 1),
            ["name"] = "check-service",
            ["arguments"] = "{\"service\": \"" + service + "\"}",
        }).ToArray<object>();
        using (var agent = AgentSdk.CreateAgent(definition))
        using (var client = new ScriptedClient(new object[] {
            new Dictionary<string, object> { ["toolCalls"] = calls },
            new Dictionary<string, object> { ["text"] = "api and queue are up; db is down." } }))
        {
            var progress = new List<string>();
            var result = await agent.Run(new RunOptions
            {
                Input = "status?",
                Client = client,
                OnEvent = e =>
                {
                    if (e.Type != "tool.preliminary_result") return;
                    var checking = ((Dictionary<string, object>)e.Details["result"])["checking"];
                    lock (progress) progress.Add(e.Details["toolCallId"] + " progress: checking " + checking);
                },
            });
            progress.Sort(StringComparer.Ordinal); // the calls overlap: their progress arrives in any order
            Console.WriteLine(string.Join("\n", progress));
            Console.WriteLine(result.Output);
        }
    }
}
