package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.client;
import static app.phaseo.agent.javaapi.Scripts.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.McpServer;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.RunStore;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Run stores and MCP servers through the Java API. */
class AgentSdkStoreMcpTest {
    private static final File REPO = new File("../..").getAbsoluteFile();

    private static Tool pay() {
        return new Tool("pay", (input, ctx) -> "paid", "Pays", Map.of("type", "object"), null, null, null, null, true,
            null, null, null, "fail-run");
    }

    private static RunStore store(String kind) throws Exception {
        switch (kind) {
            case "memory":
                return AgentSdk.inMemoryStore();
            case "sqlite":
                Path dir = Files.createTempDirectory("phaseo-java-store");
                return AgentSdk.sqliteStore(dir.resolve("runs.db").toString());
            case "postgres":
                String url = System.getenv("PHASEO_TEST_POSTGRES_URL");
                if (url == null) {
                    fail("PHASEO_TEST_POSTGRES_URL is not set: run the tests under scripts/with-test-postgres.sh; a PostgreSQL test never skips");
                }
                return AgentSdk.postgresStore(url);
            default:
                throw new IllegalArgumentException(kind);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "sqlite", "postgres"})
    void aStoredRunIsListedAndContinuedByIdAtMostOnce(String kind) throws Exception {
        RunStore store = store(kind);
        String agentId = "java-store-" + kind + "-" + System.nanoTime();
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition(agentId, List.of(pay())).withStore(store));
        RunResult paused = agent.run("pay", client(calls(call("c1", "pay", "{}")), text("done")));
        assertEquals("waiting_for_human", paused.status());

        List<RunResult> inbox = AgentSdk.listRuns(store, List.of("waiting_for_human"));
        assertTrue(inbox.stream().anyMatch(r -> r.id().equals(paused.id())), "the paused run is in the inbox");
        RunResult loaded = AgentSdk.loadRun(store, paused.id());
        assertNotNull(loaded);
        assertEquals("c1", ((Map<?, ?>) loaded.pendingToolCalls().get(0).get("call")).get("id"));

        RunResult done = agent.continueRun(new ContinueOptions(paused.id(), client(text("done"))).approve("c1"));
        assertEquals("completed", done.status());
        AgentException twice = assertThrows(AgentException.class,
            () -> agent.continueRun(new ContinueOptions(paused.id(), client(text("done"))).approve("c1")));
        assertEquals("continue_invalid", twice.code());
        assertEquals("completed", AgentSdk.loadRun(store, paused.id()).status());
        // Pruning: too recent, an unknown status, then every completed run (the store may be
        // shared with other tests: at least this one).
        assertEquals(0L, AgentSdk.pruneRuns(store, List.of("completed"), Duration.ofHours(1)));
        AgentException unknown = assertThrows(AgentException.class,
            () -> AgentSdk.pruneRuns(store, List.of("done"), Duration.ZERO));
        assertTrue(unknown.getMessage().contains("unknown run status 'done'"), unknown.getMessage());
        assertTrue(AgentSdk.pruneRuns(store, List.of("completed"), Duration.ofMinutes(-1)) >= 1);
        assertNull(AgentSdk.loadRun(store, paused.id()));
        assertFalse(AgentSdk.deleteRun(store, paused.id()));
    }

    @Test
    void aStateAccessorKeepsTheStatesOfTheApplication() {
        Map<String, String> saved = new ConcurrentHashMap<>();
        RunStore store = AgentSdk.accessorStore(new AgentSdk.StateAccessor() {
            @Override
            public RunResult load(String runId) {
                String json = saved.get(runId);
                return json == null ? null : RunResult.fromJson(json);
            }

            @Override
            public void save(RunResult result) {
                saved.put(result.id(), result.toJson());
            }
        });
        AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("accessor", List.of(pay())).withStore(store));
        RunResult paused = agent.run("pay", client(calls(call("c1", "pay", "{}")), text("done")));
        assertTrue(saved.containsKey(paused.id()));
        RunResult done = agent.continueRun(new ContinueOptions(paused.id(), client(text("done"))).approve("c1"));
        assertEquals("completed", done.status());
        assertTrue(saved.get(paused.id()).contains("\"completed\""));
    }

    private static String python() {
        File py = new File(REPO, ".venvs/py/bin/python");
        if (!py.exists() || !new File(REPO, ".venvs/py/.mcp").exists()) {
            fail("the Python `mcp` package (.venvs/py) is not installed: run `make mcp-servers`");
        }
        return py.getPath();
    }

    @Test
    void mcpToolsAreCalledAndDestructiveCallsPause() throws Exception {
        Path markers = Files.createTempDirectory("phaseo-java-mcp");
        McpServer server = McpServer.stdio("t", python(), List.of(new File(REPO, "tests/mcp/test_server.py").getPath()))
            .withEnv(Map.of("PHASEO_MCP_MARKERS", markers.toString(), "PHASEO_MCP_NAME", "t"))
            .withRequireApproval("destructive");
        String json;
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("mcp-java", List.of()).withMcpServers(List.of(server)))) {
            RunResult paused = agent.run("go", client(calls(call("c1", "delete_file", "{\"path\":\"a.txt\"}"),
                call("c2", "echo", "{\"text\":\"hello from MCP\"}")), text("done")));
            assertEquals("waiting_for_human", paused.status());
            assertEquals(1, paused.pendingToolCalls().size());
            assertFalse(Files.exists(markers.resolve("deleted-a.txt")));
            json = paused.toJson();
        }
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("mcp-java", List.of()).withMcpServers(List.of(server)))) {
            RunResult done = agent.continueRun(new ContinueOptions(RunResult.fromJson(json), client(text("done"))).approve("c1"));
            assertEquals("completed", done.status());
            assertTrue(Files.exists(markers.resolve("deleted-a.txt")));
            Map<String, Map<String, Object>> tools = Scripts.toolMessages(done);
            assertTrue(((String) tools.get("c2").get("content")).contains("hello from MCP"));
            assertTrue(((String) tools.get("c1").get("content")).contains("deleted a.txt"));
        }
        assertEquals("definition_invalid", assertThrows(AgentException.class,
            () -> AgentSdk.createAgent(new AgentDefinition("bad", List.of()).withMcpServers(List.of(server.withRequireApproval("sometimes"))))).code());
    }
}
