using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using PhaseoAgentSdk;

public static class EditAndRetry
{
    // Mono's compiler (C# 7.2 here) has no async Main: the entry point waits for the task.
    public static void Main() => RunAsync().GetAwaiter().GetResult();

    public static async Task RunAsync()
    {
        var parameters = (Dictionary<string, object>)Json.Parse(
            @"{""type"": ""object"", ""properties"": {""env"": {""enum"": [""staging"", ""production""]}}, ""required"": [""env""]}");
        var deploy = AgentSdk.DefineTool(new Tool("deploy", (input, runtime) =>
        {
            var env = ((Dictionary<string, object>)input)["env"];
            if (runtime.Attempt == 1) // the first attempt fails; the SDK retries it
            {
                Console.WriteLine($"attempt 1 to deploy to {env}: registry busy");
                throw new InvalidOperationException("registry busy");
            }
            // The same key on every attempt and after any continue: hand it to the service.
            if (!runtime.IdempotencyKey.EndsWith(":c1")) throw new InvalidOperationException("unexpected key");
            Console.WriteLine($"attempt {runtime.Attempt} deployed to {env}");
            return Task.FromResult<object>(new Dictionary<string, object> { ["deployed"] = env });
        }, "Deploy a release", parameters)
        {
            RequireApproval = true,
            Retry = new ToolRetry(3, TimeSpan.FromMilliseconds(10)),
            MaxCalls = 1, // at most one deploy per run
        });
        using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { deploy } }))
        using (var client = new ScriptedClient(new[] {
            Json.Parse(@"{""toolCalls"": [{""id"": ""c1"", ""name"": ""deploy"", ""arguments"": ""{\""env\"": \""production\""}""}]}"),
            Json.Parse(@"{""text"": ""Deployed to staging.""}") }))
        {
            var paused = await agent.Run(new RunOptions { Input = "deploy", Client = client });
            // The person approves, but to staging: the edited input is validated before anything runs.
            var done = await agent.ContinueRun(new ContinueOptions
            {
                Run = RunResult.FromJson(paused.ToJson()),
                Client = client,
                Approvals = new[] { new ToolDecision("c1", EditedInput: new Dictionary<string, object> { ["env"] = "staging" }) },
            });
            Console.WriteLine(done.Output);
        }
    }
}
