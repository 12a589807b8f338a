package app.phaseo.agent.typed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.ContinueOptions;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import app.phaseo.agent.TypedSchemas;
import app.phaseo.agent.typed.RefundTypes.Category;
import app.phaseo.agent.typed.RefundTypes.Receipt;
import app.phaseo.agent.typed.RefundTypes.Refund;
import app.phaseo.agent.typed.RefundTypes.RefundReason;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** Tools from Java records (docs/behaviour.md §20). */
class TypedToolsTest {
    private static final String ARGS = "{\"order_id\":\"A-17\",\"amount\":25,\"reason\":\"damaged\","
        + "\"lines\":[{\"sku\":\"MUG-1\",\"quantity\":2},{\"sku\":\"CUP-9\",\"quantity\":1}],\"customer\":{\"email\":\"ana@example.com\"}}";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** A model client that answers from a script and records every request. */
    static final class RecordingClient implements AgentSdk.ModelClient {
        final List<Map<String, Object>> requests = Collections.synchronizedList(new ArrayList<>());
        private final Deque<Object> script;

        RecordingClient(Object... turns) {
            script = new ArrayDeque<>(List.of(turns));
        }

        @Override
        public Object generate(Map<String, Object> request) {
            requests.add(request);
            return script.removeFirst();
        }
    }

    private static Map<String, Object> calls(String... triples) {
        List<Object> calls = new ArrayList<>();
        for (int i = 0; i < triples.length; i += 3) {
            calls.add(Map.of("id", triples[i], "name", triples[i + 1], "arguments", triples[i + 2]));
        }
        return Map.of("toolCalls", calls);
    }

    private static Map<String, Object> text(String text) {
        return Map.of("text", text);
    }

    private static AgentSdk.Agent agent(Tool... tools) {
        return AgentSdk.createAgent(new AgentDefinition("desk", List.of(tools)));
    }

    /** A JSON value with its objects' keys (and a schema's {@code required} names) sorted, to compare schemas. */
    private static Object sorted(Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> out = new TreeMap<>();
            map.forEach((k, v) -> out.put((String) k, "required".equals(k) && v instanceof List<?> names
                ? names.stream().map(String::valueOf).sorted().toList() : sorted(v)));
            return out;
        }
        if (value instanceof List<?> list) {
            return list.stream().map(TypedToolsTest::sorted).toList();
        }
        if (value instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
            return n.longValue();
        }
        return value;
    }

    private static Object fixture(String name) throws Exception {
        return sorted(JSON.readValue(Files.readString(Path.of("../../tests/typed-tools", name)), Object.class));
    }

    private static List<Map<String, Object>> toolMessages(Map<String, Object> request) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object m : (List<?>) request.get("messages")) {
            @SuppressWarnings("unchecked")
            Map<String, Object> message = (Map<String, Object>) m;
            if ("tool".equals(message.get("role"))) {
                out.add(message);
            }
        }
        return out;
    }

    private static String error(Map<String, Object> message) {
        return (String) JSON.readValue((String) message.get("content"), Map.class).get("error");
    }

    @Test
    void theGeneratedSchemaMatchesTheCheckedInFile() throws Exception {
        assertEquals(fixture("refund_schema.json"), sorted(TypedSchemas.schemaOf(Refund.class)));
        assertEquals(fixture("category_schema.json"), sorted(TypedSchemas.schemaOf(Category.class)));
    }

    @Test
    void theModelGetsTheSchemaAndExecuteGetsTheDecodedRecordAfterApproval() throws Exception {
        List<Refund> executions = Collections.synchronizedList(new ArrayList<>());
        RecordingClient client = new RecordingClient(calls("c1", "refund", ARGS), text("Refunded."));
        RunResult paused = agent(RefundTypes.refundTool(executions)).run("refund A-17", client);
        assertEquals("waiting_for_human", paused.status());
        assertTrue(executions.isEmpty());
        @SuppressWarnings("unchecked")
        Map<String, Object> sent = ((List<Map<String, Object>>) client.requests.get(0).get("tools")).get(0);
        assertEquals(fixture("refund_schema.json"), sorted(sent.get("parameters")));

        RunResult done = agent(RefundTypes.refundTool(executions))
            .continueRun(new ContinueOptions(RunResult.fromJson(paused.toJson()), client).approve("c1"));
        assertEquals("completed", done.status());
        Refund refund = executions.get(0);
        assertEquals("A-17", refund.orderId());
        assertEquals(25.0, refund.amount());
        assertEquals(RefundReason.DAMAGED, refund.reason());
        assertEquals(List.of("MUG-1", "CUP-9"), refund.lines().stream().map(RefundTypes.OrderLine::sku).toList());
        assertEquals("ana@example.com", refund.customer().email());
        assertFalse(refund.customer().vip());
        assertNull(refund.note());
        Map<?, ?> receipt = JSON.readValue((String) toolMessages(client.requests.get(1)).get(0).get("content"), Map.class);
        assertEquals(sorted(Map.of("order_id", "A-17", "refunded", 25, "lines", 3)), sorted(receipt));
    }

    @Test
    void wrongTypesGoBackToTheModelWhichRetries() {
        List<Refund> executions = Collections.synchronizedList(new ArrayList<>());
        Tool tool = Tool.fromClass("refund", Refund.class, (refund, ctx) -> {
            executions.add(refund);
            return "ok";
        }).withDescription("Refunds").withOnError("return-to-model");
        RecordingClient client = new RecordingClient(
            calls("c1", "refund", ARGS.replace("\"quantity\":2", "\"quantity\":\"two\"")),
            calls("c2", "refund", ARGS.replace("damaged", "broken")),
            calls("c3", "refund", ARGS),
            text("Refunded."));
        RunResult done = agent(tool).run("refund", client);
        assertEquals("completed", done.status());
        assertEquals("Invalid tool input: /lines/0/quantity: \"two\" is not of type \"integer\"",
            error(toolMessages(client.requests.get(1)).get(0)));
        assertTrue(error(toolMessages(client.requests.get(2)).get(1)).startsWith("Invalid tool input: /reason: "));
        assertEquals(1, executions.size(), "only the valid call ran");
    }

    @Test
    void aValueOutOfRangeForTheJavaTypeIsAToolInputErrorWithItsPointer() {
        Tool tool = Tool.fromClass("refund", Refund.class, (refund, ctx) -> "ok").withOnError("return-to-model");
        RecordingClient client = new RecordingClient(calls("c1", "refund", ARGS.replace("\"quantity\":2", "\"quantity\":9999999999")), text("ok"));
        agent(tool).run("refund", client);
        String message = error(toolMessages(client.requests.get(1)).get(0));
        assertTrue(message.startsWith("Invalid tool input: /lines/0/quantity: "), message);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> TypedSchemas.decode(Refund.class, Map.of("order_id", List.of(1))));
        assertTrue(e.getMessage().startsWith("/order_id: "), e.getMessage());
    }

    @Test
    void strictAsksTheCoreForTheStrictForm() {
        List<Refund> executions = Collections.synchronizedList(new ArrayList<>());
        Tool tool = Tool.fromClass("refund", Refund.class, (refund, ctx) -> {
            executions.add(refund);
            return "ok";
        }).withDescription("Refunds").withStrictParameters();
        assertEquals(false, tool.parameters().get("additionalProperties"));
        assertEquals(List.of("order_id", "amount", "reason", "lines", "customer", "note"), tool.parameters().get("required"));
        String args = "{\"order_id\":\"A-1\",\"amount\":1.5,\"reason\":\"late\",\"lines\":null,\"customer\":{\"email\":\"b@x\",\"vip\":null},\"note\":null}";
        RecordingClient client = new RecordingClient(calls("c1", "refund", args), text("ok"));
        RunResult done = agent(tool).run("go", client);
        assertEquals("completed", done.status());
        @SuppressWarnings("unchecked")
        Map<String, Object> sent = ((List<Map<String, Object>>) client.requests.get(0).get("tools")).get(0);
        assertEquals(true, sent.get("strict"));
        assertNull(executions.get(0).lines());
        assertFalse(executions.get(0).customer().vip());
    }

    @Test
    void aRecursiveRecordIsReferencedAndDecodedAtEveryDepth() {
        List<Category> seen = Collections.synchronizedList(new ArrayList<>());
        Tool tool = Tool.fromClass("file", Category.class, (tree, ctx) -> {
            seen.add(tree);
            return tree.children().stream().map(Category::name).toList();
        }).withOnError("return-to-model");
        RecordingClient client = new RecordingClient(calls(
            "c1", "file", "{\"name\":\"home\",\"children\":[{\"name\":\"kitchen\",\"children\":[{\"name\":\"mugs\"}]},{\"name\":\"garden\"}]}",
            "c2", "file", "{\"name\":\"home\",\"children\":[{\"name\":\"kitchen\",\"children\":[{\"name\":7}]}]}"), text("ok"));
        RunResult done = agent(tool).run("go", client);
        assertEquals("completed", done.status());
        assertEquals("mugs", seen.get(0).children().get(0).children().get(0).name());
        List<Map<String, Object>> messages = toolMessages(client.requests.get(1));
        assertEquals("[\"kitchen\",\"garden\"]", messages.get(0).get("content"));
        assertTrue(error(messages.get(1)).startsWith("Invalid tool input: /children/0/children/0/name: "));
    }

    @Test
    void aDeclaredResultClassChecksTheResult() {
        Tool tool = Tool.fromClass("refund", Refund.class, Receipt.class, (refund, ctx) -> new Receipt(null, 1, 1));
        RecordingClient client = new RecordingClient(calls("c1", "refund", ARGS), text("ok"));
        AgentException e = assertThrows(AgentException.class, () -> agent(tool).run("go", client));
        assertEquals("tool_output_invalid", e.code());
        assertTrue(e.getMessage().contains("order_id"), e.getMessage());
    }

    @Test
    void typedPlainAndManualToolsMix() {
        Tool plain = new Tool("deploy", (input, ctx) -> Map.of("deployed", ((Map<?, ?>) input).get("env")), "Deploys",
            Map.of("type", "object"), null);
        Tool typed = Tool.fromClass("file", Category.class, (c, ctx) -> c.name().toUpperCase());
        Tool manual = Tool.fromClass("ask", Category.class, null).withDescription("Asks a person");
        AgentSdk.Agent agent = agent(plain, typed, manual);
        RecordingClient client = new RecordingClient(calls("a", "deploy", "{\"env\":\"prod\"}", "b", "file", "{\"name\":\"mugs\"}",
            "c", "ask", "{\"name\":\"cups\"}"), text("ok"));
        RunResult paused = agent.run("go", client);
        assertEquals("waiting_for_human", paused.status());
        RunResult done = agent.continueRun(new ContinueOptions(paused, client).output("c", "noted"));
        assertEquals("completed", done.status());
        List<Object> contents = toolMessages(client.requests.get(1)).stream().map(m -> m.get("content")).toList();
        assertEquals(List.of("{\"deployed\":\"prod\"}", "MUGS", "noted"), contents);
    }

    @Test
    void aClassWithoutAnObjectFormIsADefinitionError() {
        AgentException e = assertThrows(AgentException.class, () -> Tool.fromClass("x", String.class, (s, ctx) -> s));
        assertEquals("definition_invalid", e.code());
        assertTrue(e.getMessage().contains("String is not an object type"), e.getMessage());
    }
}
