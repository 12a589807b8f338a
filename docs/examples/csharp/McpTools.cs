using System;
using System.Threading.Tasks;
using PhaseoAgentSdk;

public static class McpTools
{
    // Mono's compiler (C# 7.2 here) has no async Main: the entry point waits for the task.
    public static void Main() => RunAsync().GetAwaiter().GetResult();

    public static async Task RunAsync()
    {
        // An MCP server started as a child process and spoken to over stdio: here the protocol's
        // reference server, installed under tests/mcp; any server's command works the same way.
        var everything = McpServer.Stdio("everything", "node",
            "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio");
        everything.AllowTools = new[] { "echo" }; // offer only these of the server's tools
        // The server starts when a run first needs its tools and stops with the agent.
        using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "assistant", McpServers = new[] { everything } }))
        // A scripted model: the first answer calls the server's tool, the second is the final text.
        using (var client = new ScriptedClient(new[] {
            Json.Parse(@"{""toolCalls"": [{""id"": ""c1"", ""name"": ""echo"", ""arguments"": ""{\""message\"": \""hello\""}""}]}"),
            Json.Parse(@"{""text"": ""The server said hello.""}") }))
        {
            var result = await agent.Run(new RunOptions
            {
                Input = "say hello through the server",
                Client = client,
                OnEvent = e =>
                {
                    if (e.Type == "tool.completed") Console.WriteLine($"{e.Details["toolName"]} -> {e.Details["output"]}");
                },
            });
            Console.WriteLine(result.Output);
        }
    }
}
