using System;
using System.Collections.Generic;
using System.IO;
using System.Threading.Tasks;
using PhaseoAgentSdk;

public static class DurableRun
{
    // Mono's compiler (C# 7.2 here) has no async Main: the entry point waits for the task.
    public static void Main() => RunAsync().GetAwaiter().GetResult();

    static readonly Tool Refund = AgentSdk.DefineTool(new Tool("refund", (input, runtime) =>
        Task.FromResult<object>(new Dictionary<string, object>
        {
            ["refunded"] = ((Dictionary<string, object>)input)["amount"],
        }),
        "Refund an order",
        (Dictionary<string, object>)Json.Parse(@"{""type"": ""object"",
            ""properties"": {""order"": {""type"": ""string""}, ""amount"": {""type"": ""number""}},
            ""required"": [""order"", ""amount""]}")) { RequireApproval = true });

    // Every worker builds the same agent over the same store (another process, another day).
    static Agent SupportDesk(RunStore store) =>
        AgentSdk.CreateAgent(new AgentDefinition { Id = "support-desk", Tools = new[] { Refund }, Store = store });

    public static async Task RunAsync()
    {
        var path = Path.Combine(Path.GetTempPath(), "phaseo-" + Guid.NewGuid().ToString("N") + ".db");
        using (var client = new ScriptedClient(new[] {
            Json.Parse(@"{""toolCalls"": [{""id"": ""c1"", ""name"": ""refund"", ""arguments"": ""{\""order\"": \""A-17\"", \""amount\"": 42}""}]}"),
            Json.Parse(@"{""text"": ""Refunded 42 on order A-17.""}") }))
        {
            // The chat worker: the run pauses on the refund; its state is saved in the store.
            using (var chatStore = RunStore.Sqlite(path))
            using (var chat = SupportDesk(chatStore))
            {
                var paused = await chat.Run(new RunOptions { Input = "Refund order A-17", Client = client });
                Console.WriteLine("run status: " + paused.Status);
            }

            // The approval desk, later: its inbox lists the waiting runs; it continues one by run id.
            using (var store = RunStore.Sqlite(path))
            using (var desk = SupportDesk(store))
            {
                var page = await store.List(statuses: new[] { "waiting_for_human" });
                foreach (var run in page.Runs)
                {
                    foreach (var pending in run.State.Run.Pause.PendingToolCalls)
                    {
                        var input = (Dictionary<string, object>)pending.Call.Input;
                        Console.WriteLine("inbox: " + pending.Call.Name + " " + input["order"] + " " + input["amount"]);
                    }
                    var decide = new ContinueOptions { RunId = run.RunId, Client = client, Approvals = new ToolDecision[] { "c1" } };
                    var done = await desk.ContinueRun(decide);
                    Console.WriteLine(done.Output);
                    Console.WriteLine("stored status: " + (await store.Load(run.RunId)).Status);
                    // Any other continue of that pause, by any worker, is refused: the refund ran once.
                    try
                    {
                        await desk.ContinueRun(decide);
                    }
                    catch (AgentException e)
                    {
                        Console.WriteLine("again: " + e.Code);
                    }
                }
            }
        }
        File.Delete(path);
    }
}
