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

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentEvent;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.AgentSdk.TracingOptions;
import app.phaseo.agent.AgentSdk.TurnContext;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The product's AgentEvent record, the per-turn (dynamic) functions and tracing from Java. */
class AgentSdkEventsTurnsTracingTest {
    private static final Tool ADD = new Tool("add", (input, ctx) -> 5);
    private static final Tool NOTE = new Tool("note", (input, ctx) -> "noted");

    @Test
    void eventsAreAgentEventRecordsWithSnakeCaseDetails() {
        List<AgentEvent> events = Collections.synchronizedList(new ArrayList<>());
        RunResult result = AgentSdk.createAgent(new AgentDefinition("events", List.of(ADD)))
            .run(new RunOptions("2+3?", client(calls(call("c1", "add", "{}")), text("5"))).withOnEvent(events::add));
        assertEquals("completed", result.status());
        AgentEvent started = events.get(0);
        assertEquals("run.started", started.type());
        assertEquals(result.id(), started.runId());
        assertEquals("events", started.agentId());
        assertTrue(started.timestamp().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z"), started.timestamp());
        assertEquals("queued", started.status());
        AgentEvent completed = events.stream().filter(e -> e.type().equals("tool.completed")).findFirst().orElseThrow();
        assertEquals("c1", completed.details().get("tool_call_id"));
        assertEquals("add", completed.details().get("tool_name"));
        assertEquals(0, ((Number) completed.details().get("step_index")).intValue());
        assertEquals(5, ((Number) completed.details().get("output")).intValue());
        // toMap() is the core's event, camelCase, and reads back to the same record.
        Map<String, Object> raw = completed.toMap();
        assertEquals("c1", raw.get("toolCallId"));
        assertEquals(result.id(), raw.get("runId"));
        assertEquals(completed, AgentEvent.of(raw));
        assertEquals("run.completed", events.get(events.size() - 1).type());

        // A stream's events are the same records.
        AgentSdk.StreamResult stream = AgentSdk.createAgent(new AgentDefinition("events", List.of(ADD)))
            .stream(new RunOptions("2+3?", client(calls(call("c1", "add", "{}")), text("5"))));
        List<AgentEvent> streamed = stream.fullStream();
        List<String> types = streamed.stream().map(AgentEvent::type).collect(Collectors.toList());
        assertEquals(List.of("run.started", "step.started", "model.requested", "tool.input_started", "tool.input_delta",
            "model.completed", "response.item",
            "tool.started", "tool.completed", "response.item", "step.completed", "checkpoint.saved", "step.started",
            "model.requested", "response.output_text.delta", "model.completed", "response.item", "response.item",
            "step.completed", "checkpoint.saved", "run.completed"), types);
        AgentEvent delta = streamed.get(types.indexOf("response.output_text.delta"));
        assertEquals("5", delta.details().get("delta"));
        assertEquals(List.of("5"), stream.textStream());
        assertTrue(delta.details().containsKey("step_index"), delta.toString());
        // The call's input as the model wrote it (docs/behaviour.md §16), before model.completed.
        AgentEvent inputStarted = streamed.get(types.indexOf("tool.input_started"));
        assertEquals("c1", inputStarted.details().get("tool_call_id"));
        assertEquals("add", inputStarted.details().get("tool_name"));
        AgentEvent input = streamed.get(types.indexOf("tool.input_delta"));
        assertEquals("c1", input.details().get("tool_call_id"));
        assertEquals("{}", input.details().get("delta"));
        assertFalse(events.stream().anyMatch(e -> e.type().startsWith("tool.input_")), "a run that is not streamed has none");
    }

    @Test
    void toolInputArrivesInPiecesWhoseConcatenationIsTheArguments() {
        String arguments = "{\"a\":2,\"b\":3}";
        AgentSdk.StreamResult stream = AgentSdk.createAgent(new AgentDefinition("events", List.of(ADD)))
            .stream(new RunOptions("2+3?", client(calls(call("c1", "add", arguments)), text("5"))));
        List<AgentEvent> streamed = stream.fullStream();
        List<String> deltas = streamed.stream()
            .filter(e -> e.type().equals("tool.input_delta") && "c1".equals(e.details().get("tool_call_id")))
            .map(e -> (String) e.details().get("delta"))
            .collect(Collectors.toList());
        assertTrue(deltas.size() > 1, deltas.toString());
        assertEquals(arguments, String.join("", deltas));
        List<String> types = streamed.stream().map(AgentEvent::type).collect(Collectors.toList());
        assertTrue(types.lastIndexOf("tool.input_delta") < types.indexOf("model.completed"), types.toString());
        assertTrue(types.indexOf("model.completed") < types.indexOf("tool.started"), types.toString());
    }

    /** A Java model client recording every request: first a call of `add`, then text. */
    private static final class Recorder implements AgentSdk.ModelClient {
        final List<Map<String, Object>> requests = Collections.synchronizedList(new ArrayList<>());

        @Override
        public Object generate(Map<String, Object> request) {
            requests.add(request);
            return requests.size() == 1 ? calls(call("c1", "add", "{}")) : text("done");
        }

        @SuppressWarnings("unchecked")
        List<String> toolNames(int i) {
            return ((List<Map<String, Object>>) requests.get(i).get("tools")).stream()
                .map(t -> (String) t.get("id")).collect(Collectors.toList());
        }
    }

    @Test
    void theProductsDynamicFunctionsShapeEachRequest() {
        List<TurnContext> turns = Collections.synchronizedList(new ArrayList<>());
        AgentDefinition definition = new AgentDefinition("dynamic", "fixed/model", null, "Be brief.", List.of(ADD, NOTE), 0,
            null, null, null, null, null, null, null,
            turn -> {
                turns.add(turn);
                return turn.stepIndex() == 0 ? "model/first" : null;
            },
            turn -> "Turn " + turn.numberOfTurns() + " of " + turn.context(),
            turn -> 0.25 * turn.numberOfTurns(),
            turn -> 100 * turn.numberOfTurns(),
            turn -> turn.stepIndex() == 0 ? 0.9 : null,
            turn -> turn.lastToolCall() == null ? List.of(ADD) : List.of(NOTE));
        Recorder recorder = new Recorder();
        RunResult result = AgentSdk.createAgent(definition).run(new RunOptions("go", recorder, "ctx"));
        assertEquals("completed", result.status());
        assertEquals(2, recorder.requests.size());

        Map<String, Object> first = recorder.requests.get(0);
        Map<String, Object> second = recorder.requests.get(1);
        assertEquals("model/first", first.get("model"));
        assertNull(second.get("model"), "a null answer leaves the model unset for that request");
        assertEquals("Turn 1 of ctx", first.get("instructions"));
        assertEquals("Turn 2 of ctx", second.get("instructions"));
        assertEquals(0.25, ((Number) first.get("temperature")).doubleValue());
        assertEquals(0.5, ((Number) second.get("temperature")).doubleValue());
        assertEquals(100, ((Number) first.get("maxOutputTokens")).intValue());
        assertEquals(200, ((Number) second.get("maxOutputTokens")).intValue());
        assertEquals(0.9, ((Number) first.get("topP")).doubleValue());
        assertNull(second.get("topP"));
        assertEquals(List.of("add"), recorder.toolNames(0));
        assertEquals(List.of("note"), recorder.toolNames(1));

        assertEquals(2, turns.size());
        assertEquals(1, turns.get(0).numberOfTurns());
        assertEquals(0, turns.get(0).stepIndex());
        assertNull(turns.get(0).lastToolCall());
        assertEquals("ctx", turns.get(0).context());
        assertEquals(2, turns.get(1).numberOfTurns());
        assertEquals(1, turns.get(1).stepIndex());
        assertEquals("c1", turns.get(1).lastToolCall().id());
        assertEquals("add", turns.get(1).lastToolCall().name());
        assertTrue(turns.get(1).messages().size() > turns.get(0).messages().size());
        assertEquals("user", turns.get(0).messages().get(0).get("role"));
    }

    @Test
    void withDynamicMethodsAndTheirFailures() {
        Recorder recorder = new Recorder();
        AgentDefinition base = new AgentDefinition("dynamic", List.of(ADD, NOTE));
        RunResult result = AgentSdk.createAgent(base.withDynamicModel(turn -> "m/" + turn.stepIndex())
                .withDynamicTools(turn -> List.of(ADD, NOTE)))
            .run(new RunOptions("go", recorder));
        assertEquals("completed", result.status());
        assertEquals("m/0", recorder.requests.get(0).get("model"));
        assertEquals("m/1", recorder.requests.get(1).get("model"));
        assertEquals(List.of("add", "note"), recorder.toolNames(0));

        // A tool the agent was not defined with fails the run, naming it.
        Tool stranger = new Tool("stranger", (input, ctx) -> null);
        AgentException unknown = assertThrows(AgentException.class, () -> AgentSdk.createAgent(
            base.withDynamicTools(turn -> List.of(stranger))).run(new RunOptions("go", new Recorder())));
        assertTrue(unknown.getMessage().contains("stranger"), unknown.getMessage());
        assertNotNull(unknown.state());

        // A throwing function fails the run with its message.
        AgentException thrown = assertThrows(AgentException.class, () -> AgentSdk.createAgent(
            base.withDynamicInstructions(turn -> {
                throw new IllegalStateException("no instructions today");
            })).run(new RunOptions("go", new Recorder())));
        assertTrue(thrown.getMessage().contains("no instructions today"), thrown.getMessage());
    }

    @Test
    void tracingExportsARunsSpansToAnOtlpReceiver() throws Exception {
        AgentException bad = assertThrows(AgentException.class,
            () -> AgentSdk.enableTracing(new TracingOptions().withEndpoint("not a url")));
        assertEquals("definition_invalid", bad.code());

        File root = new File("../..").getCanonicalFile();
        String python = System.getenv().getOrDefault("PHASEO_PYTHON", new File(root, ".venvs/py/bin/python").getPath());
        Process receiver = new ProcessBuilder(python, new File(root, "tests/otlp/receiver.py").getPath())
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            String line = new BufferedReader(new InputStreamReader(receiver.getInputStream(), StandardCharsets.UTF_8)).readLine();
            assertNotNull(line, "the OTLP receiver did not start: is opentelemetry-proto installed (make .venvs/py/.otel)?");
            String base = "http://127.0.0.1:" + line.replace("PORT ", "");
            AgentSdk.enableTracing(new TracingOptions(base, Map.of("x-collector-token", "java-token"), "java-tests", false));
            RunResult result = AgentSdk.createAgent(new AgentDefinition("traced", List.of(ADD)))
                .run(new RunOptions("2+3?", client(calls(call("c1", "add", "{}")), text("5"))));
            AgentSdk.flushTracing();
            String traceId = ((String) ((Map<?, ?>) result.toMap().get("run")).get("traceparent")).split("-")[1];
            HttpClient http = HttpClient.newHttpClient();
            String spans = "";
            for (int i = 0; i < 250 && !spans.contains("execute_tool add"); i++) {
                spans = http.send(HttpRequest.newBuilder(URI.create(base + "/spans")).build(), HttpResponse.BodyHandlers.ofString()).body();
                Thread.sleep(20);
            }
            assertTrue(spans.contains("invoke_agent traced"), spans);
            assertTrue(spans.contains("execute_tool add"), spans);
            assertTrue(spans.contains(traceId), spans);
            assertTrue(spans.contains("java-tests"), "the service name: " + spans);
            assertTrue(spans.contains("java-token"), "the export headers: " + spans);
        } finally {
            AgentSdk.shutdownTracing();
            receiver.getOutputStream().close();
            receiver.waitFor();
        }
    }
}
