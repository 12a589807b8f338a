package bench.ours;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.AgentSdk.ToolExecutionConfig;
import bench.Bench;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Ours: the Java API ({@code AgentSdk}) with plain Java lambdas as tools and the built-in
 * scripted client. Tools declare JSON Schema {@code parameters} (integers), which the core
 * validates on every call; {@code toolConcurrency} 1000 (≥ the calls of a turn: the peers
 * start every call of a turn at once).
 */
public final class OursBench implements Bench.Sdk {
    private static final Map<String, Object> INTS = Map.of(
        "type", "object",
        "properties", Map.of("a", Map.of("type", "integer"), "b", Map.of("type", "integer")),
        "required", List.of("a", "b"));
    private static final Map<String, Object> I = Map.of(
        "type", "object", "properties", Map.of("i", Map.of("type", "integer")), "required", List.of("i"));

    private final Map<String, Tool> tools = Map.of(
        "add", AgentSdk.defineTool(new Tool("add", (input, context) -> {
            Map<?, ?> in = (Map<?, ?>) input;
            return Bench.add(((Number) in.get("a")).intValue(), ((Number) in.get("b")).intValue());
        }, "Add two integers.", INTS, null)),
        "nap", AgentSdk.defineTool(new Tool("nap", (input, context) ->
            Bench.nap(((Number) ((Map<?, ?>) input).get("i")).intValue()), "Sleep 50 ms, return i.", I, null)));

    @Override
    public String name() {
        return "ours";
    }

    @Override
    public Map<String, String> versions() {
        Map<String, String> v = new LinkedHashMap<>();
        v.put("phaseo-agent", AgentSdk.class.getPackage().getImplementationVersion() + "");
        String dir = System.getProperty("jna.library.path");
        Path lib = Path.of(dir == null ? "." : dir, "libphaseo_agent_uniffi.so");
        v.put("native", lib.toString());
        try (InputStream in = Files.newInputStream(lib)) {
            v.put("native_sha1", HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(in.readAllBytes())).substring(0, 12));
        } catch (Exception e) {
            v.put("native_sha1", "unreadable: " + e.getMessage());
        }
        return v;
    }

    @Override
    public Bench.Run prepare(Bench.Workload w) {
        List<Object> turns = new ArrayList<>();
        for (List<Bench.Call> turn : w.turns()) {
            List<Object> calls = new ArrayList<>();
            for (Bench.Call c : turn) calls.add(Map.of("id", c.id(), "name", c.name(), "arguments", c.arguments()));
            turns.add(Map.of("toolCalls", calls));
        }
        turns.add(Map.of("text", "done"));
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition(
            "bench", null, null, "bench", w.tool() == null ? List.of() : List.of(tools.get(w.tool())),
            w.maxSteps(), null, null, null, new ToolExecutionConfig(1000)));
        AgentSdk.ModelClient client = AgentSdk.scriptedClient(turns);
        RunOptions options = new RunOptions("go", client);
        return () -> {
            AgentSdk.RunResult result = agent.run(options);
            if (!"completed".equals(result.status())) throw new IllegalStateException("status " + result.status());
            return String.valueOf(result.output());
        };
    }

    /** Runs the workloads (see {@link Bench}). */
    public static void main(String[] args) throws Exception {
        Bench.main(new OursBench());
    }
}
