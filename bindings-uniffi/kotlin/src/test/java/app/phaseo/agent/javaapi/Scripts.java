package app.phaseo.agent.javaapi;

import app.phaseo.agent.AgentSdk;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Short-form scripted model responses, built as plain Java maps. */
final class Scripts {
    private Scripts() {}

    /** A call of tool {@code name} with id {@code id} and JSON-text {@code arguments}. */
    static Map<String, Object> call(String id, String name, String arguments) {
        return Map.of("id", id, "name", name, "arguments", arguments);
    }

    /** A turn requesting {@code calls}. */
    @SafeVarargs
    static Map<String, Object> calls(Map<String, Object>... calls) {
        return Map.of("toolCalls", List.of(calls));
    }

    /** A final text turn. */
    static Map<String, Object> text(String text) {
        return Map.of("text", text);
    }

    /** The scripted client of these turns. */
    static AgentSdk.ModelClient client(Object... turns) {
        return AgentSdk.scriptedClient(List.of(turns));
    }

    /** The tool results of a finished run's messages: tool call id → content map. */
    static Map<String, Map<String, Object>> toolMessages(AgentSdk.RunResult result) {
        Map<String, Map<String, Object>> byId = new LinkedHashMap<>();
        for (Map<String, Object> m : result.messages()) {
            if ("tool".equals(m.get("role"))) {
                byId.put((String) m.get("toolCallId"), m);
            }
        }
        return byId;
    }

    /** The event types of a list of events. */
    static List<String> types(List<AgentSdk.AgentEvent> events) {
        List<String> out = new ArrayList<>();
        for (AgentSdk.AgentEvent e : events) {
            out.add(e.type());
        }
        return out;
    }
}
