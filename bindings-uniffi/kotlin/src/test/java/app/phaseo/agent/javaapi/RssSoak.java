package app.phaseo.agent.javaapi;

import app.phaseo.agent.AgentSdk;
import app.phaseo.agent.AgentSdk.AgentDefinition;
import app.phaseo.agent.AgentSdk.RunOptions;
import app.phaseo.agent.AgentSdk.Tool;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A long run of runs, to tell a native leak from allocator or collector growth: every
 * {@code every} runs it prints the process's RSS, the heap in use after a full collection
 * and the live threads. Each run calls a tool that returns a hostile value (refused or not),
 * emits progress, and is answered by a host model client.
 *
 * <pre>java -Xmx64m -cp … app.phaseo.agent.javaapi.RssSoak 100000 10000</pre>
 * (with {@code MALLOC_ARENA_MAX=2} in the environment to compare glibc's arenas).
 */
public final class RssSoak {
    private RssSoak() {}

    public static void main(String[] args) throws Exception {
        int runs = Integer.parseInt(args[0]);
        int every = Integer.parseInt(args[1]);
        Random r = new Random(27270331L);
        Tool tool = new Tool("t", (in, c) -> {
            c.emitProgress().receive(Map.of("p", 1), c);
            return Hostile.value(r, 0);
        });
        AgentSdk.ModelClient client = request -> ((List<?>) request.get("messages")).size() < 2
            ? Map.of("toolCalls", List.of(Map.of("id", "c1", "name", "t", "arguments", "{}"))) : Map.of("text", "done");
        try (AgentSdk.Agent agent = AgentSdk.createAgent(new AgentDefinition("soak", List.of(tool)))) {
            for (int i = 1; i <= runs; i++) {
                try {
                    agent.run(new RunOptions("go", client).withOnEvent(e -> { }));
                } catch (AgentSdk.AgentException refused) {
                    // a hostile value refused: a result like any other here
                }
                if (i % every == 0) {
                    System.gc();
                    long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
                    System.out.printf("runs %d rss_kb %d heap_kb %d threads %d%n", i, rssKb(), heap / 1024, Thread.activeCount());
                }
            }
        }
        System.exit(0);
    }

    private static long rssKb() throws java.io.IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }
}
