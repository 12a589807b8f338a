using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using PhaseoAgentSdk;

public static class StreamEvents
{
    // Mono's compiler (C# 7.2 here) has no async Main: the entry point waits for the task.
    public static void Main() => RunAsync().GetAwaiter().GetResult();

    public static async Task RunAsync()
    {
        var parameters = (Dictionary<string, object>)Json.Parse(
            @"{""type"": ""object"", ""properties"": {""order"": {""type"": ""string""}}, ""required"": [""order""]}");
        var lookup = AgentSdk.DefineTool(new Tool("lookup-order", (input, runtime) =>
            Task.FromResult<object>(new Dictionary<string, object>
            {
                ["order"] = ((Dictionary<string, object>)input)["order"],
                ["status"] = "shipped",
            }), "Look up an order", parameters));
        using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "support", Tools = new[] { lookup } }))
        // A scripted model: the first answer calls the tool, the second is the final text.
        using (var client = new ScriptedClient(new[] {
            Json.Parse(@"{""toolCalls"": [{""id"": ""c1"", ""name"": ""lookup-order"", ""arguments"": ""{\""order\"": \""A-7\""}""}]}"),
            Json.Parse(@"{""text"": ""Order A-7 has shipped.""}") }))
        using (var stream = agent.Stream(new RunOptions { Input = "where is order A-7?", Client = client }))
        {
            foreach (var e in stream.FullStream()) // or `await foreach` in C# 8 and later
            {
                // Text, and the tool's arguments as the model writes them, arrive as deltas.
                object delta;
                Console.WriteLine(e.Details.TryGetValue("delta", out delta) ? $"{e.Type} [{delta}]" : e.Type);
            }
            var result = await stream.GetResult(); // replayed: every consumer sees the whole run
            Console.WriteLine(result.Output);
        }
    }
}
