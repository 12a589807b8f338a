// Two tools served over MCP on this process's stdin and stdout: an MCP client (an IDE, a
// desktop assistant, another agent) starts this program and calls them.
using System.Collections.Generic;
using System.Threading.Tasks;
using PhaseoAgentSdk;

public static class ServeTools
{
    // Mono's compiler (C# 7.2 here) has no async Main: the entry point waits for the task.
    public static void Main() => RunAsync().GetAwaiter().GetResult();

    public static async Task RunAsync()
    {
        var order = (Dictionary<string, object>)Json.Parse(
            @"{""type"": ""object"", ""properties"": {""order"": {""type"": ""string""}}, ""required"": [""order""]}");
        var lookup = AgentSdk.DefineTool(new Tool("lookup-order", (input, runtime) =>
            Task.FromResult<object>(new Dictionary<string, object>
            {
                ["order"] = ((Dictionary<string, object>)input)["order"],
                ["status"] = "shipped",
            }), "Look up an order", order));
        var cancel = AgentSdk.DefineTool(new Tool("cancel-order", (input, runtime) =>
            Task.FromResult<object>(new Dictionary<string, object>
            {
                ["order"] = ((Dictionary<string, object>)input)["order"],
                ["cancelled"] = true,
            }), "Cancel an order", order));

        // Console.Out now speaks MCP: log to Console.Error, never Console.WriteLine.
        using (var server = McpServer.Serve(new ServeMcpOptions { Name = "orders", Tools = new[] { lookup, cancel } }))
        {
            await server.WaitAsync(); // until the client closes stdin
        }
    }
}
