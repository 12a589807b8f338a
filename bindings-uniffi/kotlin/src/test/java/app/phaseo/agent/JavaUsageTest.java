package app.phaseo.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** The SDK as a Java application calls it (PhaseoJava: blocking tools, JSON text). */
class JavaUsageTest {
    @Test
    void runsAJavaToolAndContinuesAManualOne() throws Exception {
        Tool add = PhaseoJava.tool("add", "Adds two numbers", "{\"type\":\"object\"}",
            (inputJson, runtime) -> {
                String[] parts = inputJson.replaceAll("[^0-9,]", "").split(",");
                return String.valueOf(Integer.parseInt(parts[0]) + Integer.parseInt(parts[1]));
            });
        Tool fetch = PhaseoJava.manualTool("fetch", "Fetched by the application", null);
        Agent agent = PhaseoJava.agent("java-agent", List.of(add, fetch), "Be brief.");
        String script = "[{\"toolCalls\":[{\"id\":\"c1\",\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\"},"
            + "{\"id\":\"c2\",\"name\":\"fetch\",\"arguments\":\"{}\"}]},{\"text\":\"5 and rows\"}]";
        Client client = PhaseoJava.scriptedClient(script);

        RunResult paused = PhaseoJava.runAsync(agent, "2+3?", client).get();
        assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status());
        RunResult stored = PhaseoJava.parseState(paused.toJson());
        RunResult done = PhaseoJava.continueRun(agent, stored, client, List.of(), Map.of("c2", "{\"rows\":3}"));
        assertEquals(RunStatus.COMPLETED, done.status());
        assertEquals("5 and rows", done.outputText());
    }

    @Test
    void aFailedRunThrowsAgentExceptionWithTheFailedState() {
        Tool boom = PhaseoJava.tool("boom", "Fails", null, (inputJson, runtime) -> {
            throw new IllegalStateException("disk full");
        });
        Agent agent = PhaseoJava.agent("java-agent", List.of(boom));
        Client client = PhaseoJava.scriptedClient("[{\"toolCalls\":[{\"id\":\"c1\",\"name\":\"boom\",\"arguments\":\"{}\"}]}]");
        AgentException e = assertThrows(AgentException.class, () -> PhaseoJava.run(agent, "go", client));
        assertEquals("tool_failed", e.getCode());
        assertEquals("disk full", e.getMessage());
        assertEquals(RunStatus.FAILED, e.getResult().status());
        ExecutionException async = assertThrows(ExecutionException.class,
            () -> PhaseoJava.runAsync(agent, "go", PhaseoJava.scriptedClient("[{\"toolCalls\":[{\"id\":\"c1\",\"name\":\"boom\",\"arguments\":\"{}\"}]}]")).get());
        assertEquals("tool_failed", ((AgentException) async.getCause()).getCode());
    }

    @Test
    void aStateSecretSignsTheStateAndAnEditedStateIsRefused() throws Exception {
        Tool deploy = PhaseoJava.tool("deploy", "Deploys", null, (inputJson, runtime) -> "\"deployed\"", null, true);
        Agent agent = PhaseoJava.agent("java-agent", List.of(deploy), null, "s3cret");
        String script = "[{\"toolCalls\":[{\"id\":\"c1\",\"name\":\"deploy\",\"arguments\":\"{}\"}]},{\"text\":\"done\"}]";
        Client client = PhaseoJava.scriptedClient(script);
        RunResult paused = PhaseoJava.run(agent, "go", client);
        String stored = paused.toJson();
        RunResult tampered = PhaseoJava.parseState(stored.replace("\"context\":null", "\"context\":\"admin\""));
        AgentException e = assertThrows(AgentException.class,
            () -> PhaseoJava.continueRun(agent, tampered, client, List.of("c1")));
        assertEquals("state_invalid", e.getCode());
        assertEquals("State signature does not match", e.getMessage());
        Agent rotated = PhaseoJava.agent("java-agent", List.of(deploy), null, List.of("new", "s3cret"));
        RunResult done = PhaseoJava.continueRun(rotated, PhaseoJava.parseState(stored), client, List.of("c1"));
        assertEquals(RunStatus.COMPLETED, done.status());
    }

    @Test
    void editedApprovalsResponsesAndRetriesFromJava() throws Exception {
        List<String> ran = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        Tool deploy = PhaseoJava.tool("deploy", "Deploys", null, (inputJson, runtime) -> {
            ran.add(inputJson);
            return inputJson;
        }, null, true);
        Agent agent = PhaseoJava.agent("java-agent", List.of(deploy));
        String script = "[{\"toolCalls\":[{\"id\":\"c1\",\"name\":\"deploy\",\"arguments\":\"{\\\"env\\\":\\\"prod\\\"}\"},"
            + "{\"id\":\"c2\",\"name\":\"deploy\",\"arguments\":\"{}\"}]},{\"text\":\"done\"}]";
        RunResult paused = PhaseoJava.run(agent, "go", PhaseoJava.scriptedClient(script));
        RunResult done = PhaseoJava.continueRun(agent, paused, PhaseoJava.scriptedClient("[{\"text\":\"done\"}]"), List.of(), Map.of(),
            Map.of("c1", "{\"env\":\"staging\"}"), Map.of("c2", "\"skipped by hand\""));
        assertEquals(RunStatus.COMPLETED, done.status());
        assertEquals(List.of("{\"env\":\"staging\"}"), ran);

        List<Long> attempts = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        List<String> keys = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        Tool flaky = PhaseoJava.tool("flaky", "Fails twice", null, (inputJson, runtime) -> {
            attempts.add((long) runtime.getAttempt());
            keys.add(runtime.getIdempotencyKey().replace(runtime.getRunId(), "<run>"));
            if (runtime.getAttempt() < 3) {
                throw new IllegalStateException("busy");
            }
            return "\"ok\"";
        }, null, false, 1, new ToolRetry(3, 0));
        RunResult retried = PhaseoJava.run(PhaseoJava.agent("java-agent", List.of(flaky)), "go",
            PhaseoJava.scriptedClient("[{\"toolCalls\":[{\"id\":\"c1\",\"name\":\"flaky\",\"arguments\":\"{}\"}]},{\"text\":\"ok\"}]"));
        assertEquals(RunStatus.COMPLETED, retried.status());
        assertEquals(List.of(1L, 2L, 3L), attempts);
        assertEquals(List.of("<run>:c1", "<run>:c1", "<run>:c1"), keys);
    }

    @Test
    void aDeferredToolFromJavaIsFoundByToolSearch() throws Exception {
        List<String> ran = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        Tool weather = PhaseoJava.tool("get_weather", "Current weather of a city", null, (inputJson, runtime) -> {
            ran.add(inputJson);
            return "\"sunny\"";
        }, null, false, null, null, true);
        Agent agent = PhaseoJava.agent("java-agent", List.of(weather));
        String script = "[{\"toolCalls\":[{\"id\":\"c1\",\"name\":\"tool_search\",\"arguments\":\"{\\\"query\\\":\\\"weather\\\"}\"}]},"
            + "{\"toolCalls\":[{\"id\":\"c2\",\"name\":\"get_weather\",\"arguments\":\"{}\"}]},{\"text\":\"Sunny.\"}]";
        RunResult done = PhaseoJava.run(agent, "weather?", PhaseoJava.scriptedClient(script));
        assertEquals(RunStatus.COMPLETED, done.status());
        assertEquals(List.of("{}"), ran);
        assertEquals(true, done.toJson().contains("\"loadedTools\":[\"get_weather\"]"));
    }
}
