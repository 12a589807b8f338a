using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using PhaseoAgentSdk;

public static class ErrorKinds
{
    // Mono's compiler (C# 7.2 here) has no async Main: the entry point waits for the task.
    public static void Main() => RunAsync().GetAwaiter().GetResult();

    /// <summary>One scripted model answer: a call of tool <paramref name="name"/>.</summary>
    static object Call(string name, string arguments) => new Dictionary<string, object>
    {
        ["toolCalls"] = new List<object>
        {
            new Dictionary<string, object> { ["id"] = "c1", ["name"] = name, ["arguments"] = arguments },
        },
    };

    public static async Task RunAsync()
    {
        var parameters = (Dictionary<string, object>)Json.Parse(
            @"{""type"": ""object"", ""properties"": {""order"": {""type"": ""string""}}, ""required"": [""order""]}");
        var lookup = AgentSdk.DefineTool(new Tool("lookup-order", (input, runtime) =>
        {
            var order = (string)((Dictionary<string, object>)input)["order"];
            if (order == "B-0") throw new InvalidOperationException("order service down");
            return Task.FromResult<object>(new Dictionary<string, object> { ["order"] = order, ["status"] = "shipped" });
        }, "Look up an order", parameters));
        var attempts = new List<KeyValuePair<string, object[]>>
        {
            new KeyValuePair<string, object[]>("arguments that fail the schema",
                new[] { Call("lookup-order", @"{""order"": 7}") }),
            new KeyValuePair<string, object[]>("a tool the agent does not have",
                new[] { Call("delete-everything", "{}") }),
            new KeyValuePair<string, object[]>("a tool that raises",
                new[] { Call("lookup-order", @"{""order"": ""B-0""}") }),
            new KeyValuePair<string, object[]>("a model that never answers",
                new[] { Call("lookup-order", @"{""order"": ""A-7""}"), Call("lookup-order", @"{""order"": ""A-7""}") }),
        };
        using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "support", MaxSteps = 2, Tools = new[] { lookup } }))
        {
            foreach (var attempt in attempts)
            {
                using (var client = new ScriptedClient(attempt.Value))
                {
                    try
                    {
                        await agent.Run(new RunOptions { Input = "where is my order?", Client = client });
                    }
                    catch (AgentException error) // one family; Code is the same in every language
                    {
                        Console.WriteLine($"{attempt.Key}\n  {error.Code}: {error.Message}");
                        if (error.State?.Status != "failed")
                            throw new InvalidOperationException("the error carries the run's final state");
                    }
                }
            }
        }
    }
}
