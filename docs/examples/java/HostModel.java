import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.*;
import java.util.List;
import java.util.Map;

public class HostModel {
    public static void main(String[] args) {
        // A model client of your own: a function from the request to a response (here, without
        // a real model). Values are plain Java maps and lists.
        AgentSdk.ModelClient echoModel = request -> {
            List<?> messages = (List<?>) request.get("messages");
            Object question = ((Map<?, ?>) messages.get(messages.size() - 1)).get("content");
            return Map.of("text", request.get("agentId") + " heard: " + question);
        };
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("support", List.of()))) {
            System.out.println(agent.run(new RunOptions("where is order A-7?", echoModel)).output());
        }
    }
}
