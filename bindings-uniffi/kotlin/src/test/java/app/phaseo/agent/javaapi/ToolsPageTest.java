package app.phaseo.agent.javaapi;

import static app.phaseo.agent.javaapi.Scripts.call;
import static app.phaseo.agent.javaapi.Scripts.calls;
import static app.phaseo.agent.javaapi.Scripts.client;
import static app.phaseo.agent.javaapi.Scripts.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Java samples of the product's Tools page, copied verbatim (checked by
 * scripts/check-tools-page-samples.py), run against scripted models, each checked against
 * what the page says it does. Only the application code the samples name is written here.
 */
class ToolsPageTest {
    /** The page's {@code tickets}: the application's ticket index. */
    static final class Tickets {
        Map<String, Object> search(String query) {
            return new java.util.TreeMap<>(Map.of("query", query, "ids", List.of("T-1", "T-7")));
        }
    }

    /** The page's {@code Validators::requireQuery}: "your own validator". */
    static final class Validators {
        static Object requireQuery(Object input) {
            Object query = input instanceof Map<?, ?> m ? m.get("query") : null;
            if (!(query instanceof String)) {
                throw new IllegalArgumentException("query is required");
            }
            return input;
        }
    }

    private final Tickets tickets = new Tickets();

    /** A host model client answering with [turns] in order and recording each request. */
    private static AgentSdk.ModelClient recording(List<Map<String, Object>> requests, Object... turns) {
        List<Object> left = Collections.synchronizedList(new ArrayList<>(List.of(turns)));
        return request -> {
            requests.add(request);
            return left.remove(0);
        };
    }

    private AgentSdk.Tool searchTool() {
        // Tool hat drei Konstruktoren: (id, execute); (id, execute, description, parameters, timeout);
        // und die vollständige Form unten. Validators::requireQuery steht für deinen eigenen Validator.
        var search = AgentSdk.defineTool(new AgentSdk.Tool(
            "search_tickets",
            (input, context) -> tickets.search((String) ((Map<?, ?>) input).get("query")),
            "Search support tickets by keyword",
            Map.of("type", "object", "properties", Map.of("query", Map.of("type", "string"))),
            Duration.ofSeconds(10),
            Validators::requireQuery, // inputSchema: AgentSdk.Validator
            null, null,             // outputSchema, eventSchema
            false, null,            // requireApproval, approval
            null, null,             // onToolCalled, onResponseReceived
            "fail-run"              // onError
        ));
        return search;
    }

    /** "Define a tool": the model calls it by id, the SDK checks the arguments, runs it and sends the result back. */
    @Test
    void defineATool() {
        AgentSdk.Tool search = searchTool();
        assertEquals(Duration.ofSeconds(10), search.timeout());
        List<Map<String, Object>> requests = Collections.synchronizedList(new ArrayList<>());
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("support", List.of(search)))) {
            RunResult result = agent.run(new RunOptions("printer tickets?", recording(requests,
                calls(call("c1", "search_tickets", "{\"query\":\"printer\"}")), text("two tickets"))));
            assertEquals("two tickets", result.output());
            @SuppressWarnings("unchecked")
            Map<String, Object> offered = ((List<Map<String, Object>>) requests.get(0).get("tools")).get(0);
            assertEquals("search_tickets", offered.get("id"));
            assertEquals("Search support tickets by keyword", offered.get("description"));
            assertEquals("{\"ids\":[\"T-1\",\"T-7\"],\"query\":\"printer\"}", Scripts.toolMessages(result).get("c1").get("content"));
            // The validator's failure fails the run: `Invalid tool input: ...`.
            AgentException refused = assertThrows(AgentException.class, () -> agent.run(new RunOptions("x",
                client(calls(call("c1", "search_tickets", "{}")), text("never")))));
            assertEquals("tool_input_invalid", refused.code());
            assertTrue(refused.getMessage().startsWith("Invalid tool input: "), refused.getMessage());
        }
    }

    /** "Report progress and update the context": a tool.preliminary_result event, and the context of later turns. */
    @Test
    void reportProgressAndUpdateTheContext() {
        AgentSdk.Tool index = new AgentSdk.Tool("index-repository",
            (input, context) -> {
                context.emitProgress().receive(Map.of("stage", "indexing"), context); // tool.preliminary_result-Event
                context.setContext().accept(Map.of("indexed", true));                 // Kontext für spätere Turns
                return "done";
            }
        );
        List<Object> progress = Collections.synchronizedList(new ArrayList<>());
        List<Map<String, Object>> requests = Collections.synchronizedList(new ArrayList<>());
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("indexer", List.of(index)))) {
            RunResult result = agent.run(new RunOptions("index", recording(requests,
                calls(call("c1", "index-repository", "{}")), text("indexed")), Map.of("indexed", false)).withOnEvent(e -> {
                if (e.type().equals("tool.preliminary_result")) {
                    progress.add(e.details().get("result"));
                }
            }));
            assertEquals(List.of(Map.of("stage", "indexing")), progress);
            assertEquals("done", Scripts.toolMessages(result).get("c1").get("content"));
            assertEquals(Map.of("indexed", true), requests.get(1).get("context"));
            assertEquals(Map.of("indexed", true), result.context());
        }
    }
}
