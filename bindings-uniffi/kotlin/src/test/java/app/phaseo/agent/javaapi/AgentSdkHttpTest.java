package app.phaseo.agent.javaapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.AgentException;
import app.phaseo.agent.AgentSdk.GatewayOptions;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.RunResult;
import app.phaseo.agent.AgentSdk.Tool;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The HTTP model clients through the Java API, against a local server on 127.0.0.1. */
class AgentSdkHttpTest {
    /** Answers each POST with the next scripted (status, body) and records path, auth and body. */
    static final class Server implements AutoCloseable {
        final List<String[]> requests = Collections.synchronizedList(new ArrayList<>());
        private final HttpServer http;
        final String url;

        Server(Object[]... replies) throws IOException {
            List<Object[]> queue = Collections.synchronizedList(new ArrayList<>(Arrays.asList(replies)));
            http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            http.createContext("/", exchange -> {
                String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                requests.add(new String[] {exchange.getRequestURI().getPath(),
                    String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")), body});
                Object[] reply = queue.remove(0);
                byte[] bytes = ((String) reply[1]).getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("content-type", (String) reply[2]);
                exchange.sendResponseHeaders((Integer) reply[0], bytes.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            });
            http.start();
            url = "http://127.0.0.1:" + http.getAddress().getPort() + "/v1";
        }

        @Override
        public void close() {
            http.stop(0);
        }
    }

    private static Object[] json(int status, String body) {
        return new Object[] {status, body, "application/json"};
    }

    private static Object[] responses(String output) {
        return json(200, "{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":" + output
            + ",\"usage\":{\"input_tokens\":3,\"output_tokens\":2,\"total_tokens\":5}}");
    }

    @Test
    void gatewayRoundTripWithRequestOptions() throws Exception {
        String key = "sk-java-secret";
        try (Server server = new Server(
            responses("[{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"lookup\",\"arguments\":\"{\\\"id\\\": 7}\"}]"),
            responses("[{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Found 7.\"}]}]"))) {
            Tool lookup = new Tool("lookup", (input, ctx) -> Map.of("found", ((Map<?, ?>) input).get("id")), "Looks up",
                Map.of("type", "object"), null);
            AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("desk", List.of(lookup)).withInstructions("Be brief."));
            AgentSdk.ModelClient gateway = AgentSdk.createGatewayAgentClient(new GatewayOptions(key, server.url, "phaseo/test", null,
                Map.of("tool_choice", "auto", "metadata", Map.of("team", "java"))));
            RunResult result = agent.run(new RunOptions("find 7", gateway, Map.of("secret_context", "do-not-send")));

            assertEquals("completed", result.status());
            assertEquals("Found 7.", result.output());
            assertEquals(10, result.usage().get("totalTokens"));
            assertEquals(2, server.requests.size());
            assertEquals("/v1/responses", server.requests.get(0)[0]);
            assertEquals("Bearer " + key, server.requests.get(0)[1]);
            String first = server.requests.get(0)[2];
            assertTrue(first.contains("\"model\":\"phaseo/test\""), first);
            assertTrue(first.contains("\"tool_choice\":\"auto\"") && first.contains("\"team\":\"java\""), first);
            assertFalse(first.contains("do-not-send"), first);
            assertTrue(server.requests.get(1)[2].contains("function_call_output"));
            assertFalse(result.toJson().contains(key));
        }
    }

    @Test
    void gatewayErrorsCarryTheirCode() throws Exception {
        try (Server server = new Server(json(401, "{\"error\":{\"message\":\"bad key\",\"type\":\"auth\"}}"))) {
            AgentSdk.ModelClient gateway = AgentSdk.createGatewayAgentClient(new GatewayOptions("sk-wrong", server.url, "m", null, null));
            AgentException e = assertThrows(AgentException.class,
                () -> AgentSdk.createAgent(new AgentDefinition("a", List.of())).run("hi", gateway));
            assertEquals("gateway", e.code());
            assertTrue(e.getMessage().contains("bad key"), e.getMessage());
            assertEquals("failed", e.state().status());
        }
    }

    @Test
    void openAICompatibleStreamingDeliversTheDeltas() throws Exception {
        StringBuilder sse = new StringBuilder();
        for (String c : List.of("Hel", "lo ", "there")) {
            sse.append("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"").append(c).append("\"}}]}\n\n");
        }
        sse.append("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
        try (Server server = new Server(new Object[] {200, sse.toString(), "text/event-stream"})) {
            AgentSdk.ModelClient openai = AgentSdk.openAICompatibleClient(null, server.url, "local-model");
            AgentSdk.StreamResult stream = AgentSdk.createAgent(new AgentDefinition("a", List.of()))
                .stream(new RunOptions("hi", openai));
            assertEquals(List.of("Hel", "lo ", "there"), stream.textStream());
            assertEquals("Hello there", stream.getResult().output());
            assertEquals("/v1/chat/completions", server.requests.get(0)[0]);
            assertTrue(server.requests.get(0)[2].contains("\"model\":\"local-model\""));
        }
    }
}
