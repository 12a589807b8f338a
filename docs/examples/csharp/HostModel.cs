using System;
using System.Threading.Tasks;
using PhaseoAgentSdk;

/// <summary>A model client of your own: an <c>IModelClient</c> (<c>IStreamingModelClient</c>
/// adds streaming). This one answers without calling a real model.</summary>
public sealed class EchoModel : IModelClient
{
    public Task<ModelResponse> Generate(ModelRequest request)
    {
        var question = request.Messages[request.Messages.Count - 1].Content;
        return Task.FromResult(new ModelResponse { Text = $"{request.AgentId} heard: {question}" });
    }
}

public static class HostModel
{
    // Mono's compiler (C# 7.2 here) has no async Main: the entry point waits for the task.
    public static void Main() => RunAsync().GetAwaiter().GetResult();

    public static async Task RunAsync()
    {
        using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "support" }))
        {
            var result = await agent.Run(new RunOptions { Input = "where is order A-7?", Client = new EchoModel() });
            Console.WriteLine(result.Output);
        }
    }
}
