// The support-desk demo in Java (the `AgentSdk` API): three tools on the offline test
// client, a pause for approval and a manual step, and a continue from the state's JSON text.
//
//     make kotlin && examples/java/run.sh
import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import java.time.Duration;
import java.util.List;
import java.util.Map;

public final class SupportDesk {
    private SupportDesk() {}

    private static Map<String, Object> object(Map<String, Object> properties, List<String> required) {
        return Map.of("type", "object", "properties", properties, "required", required);
    }

    static AgentSdk.Agent supportDesk() {
        Tool lookup = AgentSdk.defineTool(new Tool("lookup_ticket", (input, context) -> {
            context.emitProgress().receive(Map.of("phase", "searching"), context);
            Thread.sleep(20);
            context.emitProgress().receive(Map.of("phase", "found"), context);
            Object id = ((Map<?, ?>) input).get("ticketId");
            return Map.of("ticket_id", id, "customer", "Ana", "status", "open", "paid", 150);
        }, "Load a support ticket by id.",
            object(Map.of("ticketId", Map.of("type", "string", "examples", List.of("T-1001"))), List.of("ticketId")),
            Duration.ofSeconds(2)));
        Tool refund = AgentSdk.defineTool(Tool.builder("issue_refund")
            .execute((input, context) ->
                Map.of("refunded", ((Map<?, ?>) input).get("amount"), "idempotency_key", context.toolCall().id()))
            .description("Refund a ticket's customer. Amounts over 100 need a person's approval.")
            .parameters(object(Map.of("ticketId", Map.of("type", "string", "examples", List.of("T-1001")),
                "amount", Map.of("type", "number", "minimum", 0, "examples", List.of(150))), List.of("ticketId", "amount")))
            .requireApproval((input, context) -> ((Number) ((Map<?, ?>) input).get("amount")).doubleValue() > 100)
            .build());
        Tool escalate = AgentSdk.defineTool(new Tool("escalate", null,
            "Hand the ticket to a human specialist, who answers later.",
            object(Map.of("ticketId", Map.of("type", "string", "examples", List.of("T-1001")),
                "reason", Map.of("type", "string", "examples", List.of("customer asked for a manager"))), List.of("ticketId", "reason")),
            null));
        return AgentSdk.createAgent(new AgentDefinition("support-desk", List.of(lookup, refund, escalate))
            .withInstructions("You resolve support tickets."));
    }

    private static void printEvent(AgentSdk.AgentEvent event) {
        String type = event.type();
        Map<String, Object> details = event.details();
        String detail = "";
        if (type.startsWith("tool.")) {
            detail = " " + details.get("tool_name") + (details.containsKey("result") ? " progress " + details.get("result") : "")
                + (details.containsKey("output") ? " -> " + details.get("output") : "");
        }
        System.out.println("  event " + type + detail);
    }

    public static void main(String[] args) {
        AgentSdk.ModelClient client = AgentSdk.testClient();
        AgentSdk.Agent agent = supportDesk();
        RunResult paused = agent.run(new RunOptions("Ticket T-1001: the customer wants a refund.", client)
            .withOnEvent(SupportDesk::printEvent));
        System.out.println("status: " + paused.status());
        for (Map<String, Object> pending : paused.pendingToolCalls()) {
            System.out.println("  pending " + ((Map<?, ?>) pending.get("call")).get("name") + " (" + pending.get("kind") + ")");
        }

        // The state is plain JSON text: store it anywhere, continue in another process.
        String json = paused.toJson();
        ContinueOptions decide = new ContinueOptions(RunResult.fromJson(json), client);
        for (Map<String, Object> pending : paused.pendingToolCalls()) {
            Map<?, ?> call = (Map<?, ?>) pending.get("call");
            decide = "manual".equals(pending.get("kind"))
                ? decide.output((String) call.get("id"), Map.of("assigned_to", "Lee", "eta", "2h"))
                : decide.approve((String) call.get("id"));
        }
        RunResult done = supportDesk().continueRun(decide.withOnEvent(SupportDesk::printEvent));
        System.out.println("status: " + done.status());
        System.out.println("output: " + done.output());
        if (!"completed".equals(done.status())) {
            System.exit(1);
        }
    }
}
