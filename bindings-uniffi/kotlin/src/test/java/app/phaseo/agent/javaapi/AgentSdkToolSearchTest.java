package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Deferred tools and the built-in {@code tool_search} (docs/behaviour.md §17), through the Java API. */
class AgentSdkToolSearchTest {
    private static final File REPO = new File("../..").getAbsoluteFile();

    /** A Java model client answering with {@code turns} in order and recording every request. */
    private static final class Recorder implements AgentSdk.ModelClient {
        final List<Map<String, Object>> requests = Collections.synchronizedList(new ArrayList<>());
        private final List<Object> turns;

        Recorder(Object... turns) {
            this.turns = List.of(turns);
        }

        @Override
        public Object generate(Map<String, Object> request) {
            requests.add(request);
            return turns.get(requests.size() - 1);
        }

        /** The tool ids request {@code i} offered, in offered order. */
        @SuppressWarnings("unchecked")
        List<String> offered(int i) {
            return ((List<Map<String, Object>>) requests.get(i).get("tools")).stream()
                .map(t -> (String) t.get("id")).collect(Collectors.toList());
        }
    }

    private static AgentSdk.Agent agent(List<String> ran) {
        Tool gate = new Tool("gate", (input, ctx) -> "opened", "Needs approval", null, null, null, null, null, true,
            null, null, null, "fail-run");
        Tool weather = new Tool("get_weather", (input, ctx) -> {
            ran.add("get_weather");
            return "sunny";
        }, "Current weather of a city", null, null).withDeferLoading(true);
        Tool stock = new Tool("stock_price", (input, ctx) -> {
            ran.add("stock_price");
            return 42;
        }, "Price of a share", null, null).withDeferLoading(true);
        return AgentSdk.createAgent(new AgentDefinition("assistant", List.of(gate, weather, stock)));
    }

    @Test
    @SuppressWarnings("unchecked")
    void aDeferredToolIsOfferedOnceFoundAndAContinueKeepsOfferingIt() {
        List<String> ran = Collections.synchronizedList(new ArrayList<>());
        Recorder first = new Recorder(calls(call("c1", "tool_search", "{\"query\":\"weather\"}"), call("c2", "gate", "{}")));
        RunResult paused = agent(ran).run("weather?", first);
        assertEquals("waiting_for_human", paused.status());
        // Not offered at first; tool_search comes after the always-loaded tools.
        assertEquals(List.of("gate", "tool_search"), first.offered(0));
        assertTrue(paused.toJson().contains("\"loadedTools\":[\"get_weather\"]"), paused.toJson());

        // Continued from the state's JSON by a fresh agent: the loaded tool is still offered, at the end.
        Recorder second = new Recorder(calls(call("c3", "get_weather", "{}")), text("Sunny."));
        RunResult done = agent(ran).continueRun(new ContinueOptions(RunResult.fromJson(paused.toJson()), second).approve("c2"));
        assertEquals("completed", done.status());
        assertEquals(List.of("gate", "tool_search", "get_weather"), second.offered(0));
        assertEquals(List.of("get_weather"), ran);
        Map<String, Map<String, Object>> messages = Scripts.toolMessages(done);
        assertEquals("sunny", messages.get("c3").get("content"));
        assertTrue(((String) messages.get("c1").get("content")).contains("\"id\":\"get_weather\""));
    }

    @Test
    void aDeferredToolThatWasNeverFoundIsAnUnknownTool() {
        List<String> ran = Collections.synchronizedList(new ArrayList<>());
        AgentException e = assertThrows(AgentException.class,
            () -> agent(ran).run("price?", new Recorder(calls(call("c1", "stock_price", "{}")), text("ok"))));
        assertEquals("unknown_tool", e.code());
        assertTrue(e.getMessage().contains("Unknown tool 'stock_price' (not offered in this turn)"), e.getMessage());
        assertEquals(List.of(), ran);
    }

    @Test
    void aDeferredMcpServersToolsAreOfferedOnceFound() throws Exception {
        File python = new File(REPO, ".venvs/py/bin/python");
        if (!python.exists() || !new File(REPO, ".venvs/py/.mcp").exists()) {
            fail("the Python `mcp` package (.venvs/py) is not installed: run `make mcp-servers`");
        }
        McpServer server = McpServer.stdio("t", python.getPath(), List.of(new File(REPO, "tests/mcp/test_server.py").getPath()))
            .withEnv(Map.of("PHASEO_MCP_MARKERS", Files.createTempDirectory("phaseo-java-mcp").toString(), "PHASEO_MCP_NAME", "t"))
            .withAllowTools(List.of("echo", "add"))
            .withDeferLoading(true);
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("mcp-java", List.of()).withMcpServers(List.of(server)))) {
            Recorder model = new Recorder(calls(call("c1", "tool_search", "{\"query\":\"echo\"}")),
                calls(call("c2", "echo", "{\"text\":\"found me\"}")), text("done"));
            RunResult done = agent.run("go", model);
            assertEquals("completed", done.status());
            assertEquals(List.of("tool_search"), model.offered(0));
            assertEquals(List.of("tool_search", "echo"), model.offered(1));
            assertTrue(((String) Scripts.toolMessages(done).get("c2").get("content")).contains("found me"));
            assertTrue(done.toJson().contains("\"loadedTools\":[\"echo\"]"), done.toJson());
        }
    }
}
