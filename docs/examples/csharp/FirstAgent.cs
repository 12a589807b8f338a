using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using PhaseoAgentSdk;

public static class FirstAgent
{
    // Mono's compiler (C# 7.2 here) has no async Main: the entry point waits for the task.
    public static void Main() => RunAsync().GetAwaiter().GetResult();

    public static async Task RunAsync()
    {
        var parameters = (Dictionary<string, object>)Json.Parse(
            @"{""type"": ""object"", ""properties"": {""env"": {""type"": ""string""}}, ""required"": [""env""]}");
        var deploy = AgentSdk.DefineTool(new Tool("deploy", async (input, runtime) =>
        {
            await runtime.EmitProgress(new Dictionary<string, object> { ["phase"] = "rolling out" });
            return new Dictionary<string, object>
            {
                ["deployed"] = ((Dictionary<string, object>)input)["env"],
                ["key"] = runtime.ToolCall.Id,
            };
        }, "Deploy a release", parameters, TimeSpan.FromSeconds(5)) { RequireApproval = true });
        using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { deploy } }))
        // A scripted model: the first answer calls the tool, the second is the final text.
        using (var client = new ScriptedClient(new[] {
            Json.Parse(@"{""toolCalls"": [{""id"": ""c1"", ""name"": ""deploy"", ""arguments"": ""{\""env\"": \""prod\""}""}]}"),
            Json.Parse(@"{""text"": ""Deployed.""}") }))
        {
            var paused = await agent.Run(new RunOptions { Input = "deploy to prod", Client = client });
            var stored = paused.ToJson(); // persist anywhere; any language continues it
            var done = await agent.ContinueRun(new ContinueOptions
            {
                Run = RunResult.FromJson(stored),
                Client = client,
                Approvals = new ToolDecision[] { "c1" },
            });
            Console.WriteLine(done.Output); // Deployed.
        }
    }
}
