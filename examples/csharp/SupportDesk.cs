// The support-desk demo in C#: three tools on the offline test client (or a real model when
// PHASEO_API_KEY / OPENAI_BASE_URL is set), a pause for approval and a manual step, and a
// continue from the state's JSON text.
//
//   examples/csharp/run.sh        (after `make csharp`; Mono's mcs + mono)
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using PhaseoAgentSdk;

static class SupportDesk
{
    static Dictionary<string, object> O(params object[] kv)
    {
        var m = new Dictionary<string, object>();
        for (int i = 0; i < kv.Length; i += 2) m[(string)kv[i]] = kv[i + 1];
        return m;
    }

    static readonly Tool Lookup = AgentSdk.DefineTool(new Tool("lookup_ticket", async (input, runtime) =>
    {
        await runtime.EmitProgress(O("phase", "searching"));
        await Task.Delay(20, runtime.CancellationToken);
        await runtime.EmitProgress(O("phase", "found"));
        return O("ticketId", ((Dictionary<string, object>)input)["ticketId"], "customer", "Ana", "status", "open", "paid", 150L);
    }, "Load a support ticket by id.",
        O("type", "object", "properties", O("ticketId", O("type", "string", "examples", new[] { "T-1001" })),
          "required", new[] { "ticketId" }, "additionalProperties", false),
        TimeSpan.FromSeconds(2)));

    static readonly Tool Refund = AgentSdk.DefineTool(new Tool("issue_refund",
        (input, runtime) => Task.FromResult<object>(O("refunded", ((Dictionary<string, object>)input)["amount"], "idempotencyKey", runtime.ToolCall.Id)),
        "Refund a ticket's customer. Amounts over 100 need a person's approval.",
        O("type", "object", "properties", O("ticketId", O("type", "string", "examples", new[] { "T-1001" }),
                                             "amount", O("type", "number", "minimum", 0L, "examples", new[] { 150L })),
          "required", new[] { "ticketId", "amount" }, "additionalProperties", false))
    {
        Approval = (input, runtime) => Task.FromResult(Convert.ToDouble(((Dictionary<string, object>)input)["amount"]) > 100),
    });

    // No Execute: a manual tool (a person answers later, on continue).
    static readonly Tool Escalate = AgentSdk.DefineTool(new Tool("escalate", null,
        "Hand the ticket to a human specialist, who answers later.",
        O("type", "object", "properties", O("ticketId", O("type", "string", "examples", new[] { "T-1001" }),
                                             "reason", O("type", "string", "examples", new[] { "customer asked for a manager" })),
          "required", new[] { "ticketId", "reason" })));

    static void PrintEvent(AgentEvent e)
    {
        if (e.Type.StartsWith("response.")) return;
        var detail = "";
        if (e.Type.StartsWith("tool."))
        {
            detail = " " + e.Details["toolName"];
            if (e.Details.ContainsKey("result")) detail += " progress " + Json.Write(e.Details["result"]);
            if (e.Details.ContainsKey("output")) detail += " -> " + Json.Write(e.Details["output"]);
        }
        Console.WriteLine("  event " + e.Type + detail);
    }

    static IModelClient ClientFromEnv()
    {
        if (Environment.GetEnvironmentVariable("PHASEO_API_KEY") != null)
        {
            Console.WriteLine("model: Phaseo gateway");
            return AgentSdk.CreateGatewayAgentClient(new HttpClientOptions { Model = Environment.GetEnvironmentVariable("PHASEO_MODEL") });
        }
        if (Environment.GetEnvironmentVariable("OPENAI_BASE_URL") != null)
        {
            Console.WriteLine("model: OpenAI-compatible server");
            return AgentSdk.CreateOpenAICompatibleClient(new HttpClientOptions { Model = Environment.GetEnvironmentVariable("OPENAI_MODEL") });
        }
        Console.WriteLine("model: the offline test client (set PHASEO_API_KEY or OPENAI_BASE_URL for a real one)");
        return new TestClient();
    }

    // mcs has no async Main (C# 7.1): Main waits for Run.
    static int Main() => Run().GetAwaiter().GetResult();

    static async Task<int> Run()
    {
        var client = ClientFromEnv();
        using (var agent = AgentSdk.CreateAgent(new AgentDefinition
        {
            Id = "support-desk",
            Instructions = "You are a support agent. Look tickets up before acting.",
            Tools = new[] { Lookup, Refund, Escalate },
            ToolExecution = new ToolExecutionConfig(Concurrency: 4),
        }))
        {
            var result = await agent.Run(new RunOptions("Ticket T-1001: the customer wants a refund of 150.", client) { OnEvent = PrintEvent });
            for (int round = 0; result.Status == "waiting_for_human" && round < 5; round++)
            {
                var pending = result.Run.Pause.PendingToolCalls;
                Console.WriteLine("paused: " + string.Join(", ", pending.Select(p => p.Call.Name + " (" + p.Kind + ")")));
                var stored = result.ToJson();   // persist anywhere; continue later, in any language
                result = await agent.ContinueRun(new ContinueOptions
                {
                    Run = RunResult.FromJson(stored), Client = client, OnEvent = PrintEvent,
                    Approvals = pending.Where(p => p.Kind == "approval").Select(p => new ToolDecision(p.Call.Id)).ToList(),
                    ToolOutputs = pending.Where(p => p.Kind != "approval").Select(p => new ToolOutput(p.Call.Id, O("answer", "handled by Marta"))).ToList(),
                });
            }
            Console.WriteLine("status: " + result.Status);
            Console.WriteLine("output: " + (result.Output is string s ? s : Json.Write(result.Output)));
            return result.Status == "completed" ? 0 : 1;
        }
    }
}
