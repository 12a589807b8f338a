import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.*;
import app.phaseo.agent.RunStore;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;

public class DurableRun {
    static final Tool REFUND = AgentSdk.defineTool(new Tool("refund", (input, context) ->
            Map.of("refunded", ((Map<?, ?>) input).get("amount")))
        .withDescription("Refund an order")
        .withParameters(Map.of("type", "object",
            "properties", Map.of("order", Map.of("type", "string"), "amount", Map.of("type", "number")),
            "required", List.of("order", "amount")))
        .withRequireApproval(true));

    /** Every worker builds the same agent over the same store (another process, another day). */
    static AgentSdk.Agent supportDesk(RunStore store) {
        return AgentSdk.createAgent(new AgentDefinition("support-desk", List.of(REFUND)).withStore(store));
    }

    public static void main(String[] args) throws Exception {
        AgentSdk.ModelClient client = AgentSdk.scriptedClient(List.of(
            Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "refund",
                "arguments", "{\"order\": \"A-17\", \"amount\": 42}"))),
            Map.of("text", "Refunded 42 on order A-17.")));
        String path = Files.createTempDirectory("phaseo-").resolve("runs.db").toString();

        // The chat worker: the run pauses on the refund; its state is saved in the store.
        try (AgentSdk.Agent chat = supportDesk(AgentSdk.sqliteStore(path))) {
            RunResult paused = chat.run(new RunOptions("Refund order A-17", client));
            System.out.println("run status: " + paused.status());
        }

        // The approval desk, later: its inbox lists the waiting runs; it continues one by run id.
        RunStore store = AgentSdk.sqliteStore(path);
        try (AgentSdk.Agent desk = supportDesk(store)) {
            for (RunResult run : AgentSdk.listRuns(store, List.of("waiting_for_human"))) {
                for (Map<String, Object> pending : run.pendingToolCalls()) {
                    Map<?, ?> call = (Map<?, ?>) pending.get("call");
                    Map<?, ?> input = (Map<?, ?>) call.get("input");
                    System.out.println("inbox: " + call.get("name") + " " + input.get("order") + " " + input.get("amount"));
                }
                ContinueOptions decide = new ContinueOptions(run.id(), client).approve("c1");
                RunResult done = desk.continueRun(decide);
                System.out.println(done.output());
                System.out.println("stored status: " + AgentSdk.loadRun(store, run.id()).status());
                // Any other continue of that pause, by any worker, is refused: the refund ran once.
                try {
                    desk.continueRun(decide);
                } catch (AgentException e) {
                    System.out.println("again: " + e.code());
                }
            }
        }
    }
}
