using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using PhaseoAgentSdk;

public static class Tracing
{
    // Mono's compiler (C# 7.2 here) has no async Main: the entry point waits for the task.
    public static void Main() => RunAsync().GetAwaiter().GetResult();

    public static async Task RunAsync()
    {
        // Every run from now on records spans. The collector's address comes from
        // OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) unless Endpoint is set.
        AgentSdk.EnableTracing(new TracingOptions { ServiceName = "orders-bot" });

        var parameters = (Dictionary<string, object>)Json.Parse(
            @"{""type"": ""object"", ""properties"": {""order"": {""type"": ""string""}}, ""required"": [""order""]}");
        var lookup = AgentSdk.DefineTool(new Tool("lookup-order", (input, runtime) =>
            Task.FromResult<object>(new Dictionary<string, object>
            {
                ["order"] = ((Dictionary<string, object>)input)["order"],
                ["status"] = "shipped",
            }), "Look up an order", parameters));
        using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "support", Tools = new[] { lookup } }))
        using (var client = new ScriptedClient(new[] {
            Json.Parse(@"{""toolCalls"": [{""id"": ""c1"", ""name"": ""lookup-order"", ""arguments"": ""{\""order\"": \""A-7\""}""}]}"),
            Json.Parse(@"{""text"": ""Order A-7 has shipped.""}") }))
        {
            var result = await agent.Run(new RunOptions { Input = "where is order A-7?", Client = client });
            Console.WriteLine(result.Output);
        }
        // .NET has no exit hook here: this exports what is left.
        await AgentSdk.ShutdownTracing();
    }
}
