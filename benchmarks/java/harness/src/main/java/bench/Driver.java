package bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Starts every SDK in a JVM of its own, {@code ROUNDS} (3) times, the order rotating from
 * round to round (so no SDK always runs first, or always after the same neighbour), collects
 * their RESULT lines and prints one table: per SDK the median of its rounds' medians, and the
 * ratio of each peer to ours (peer ÷ ours (Java API): above 1 we are faster), and with our
 * Kotlin API measured too, the best peer's figure ÷ its. Then one JSON document.
 *
 * <pre>
 *   java -cp harness/target/classes bench.Driver [--check] [--sdks ours,ours-kotlin,langchain4j,spring-ai,koog]
 * </pre>
 *
 * Each SDK's JVM is {@code java -Xmx1g -Xss2m -cp <module>/target/classes:<module>/target/classpath.txt
 * <main>}; ours (both APIs) also gets {@code -Djna.library.path=$PHASEO_NATIVE_DIR} and the class path in
 * {@code target/phaseo-classpath.txt} (our JAR and its runtime dependencies). With {@code --check}
 * the exit status is 1 when either API's fan-out or sequential figure is slower than the best peer's
 * (a ratio below 1), 0 otherwise.
 */
public final class Driver {
    private Driver() {}

    /** An SDK's module folder, main class and label; {@code ours}: one of our APIs. */
    private record Sdk(String name, String module, String main, String label, boolean ours) {}

    private static final List<Sdk> ALL = List.of(
        new Sdk("ours", "ours", "bench.ours.OursBench", "ours (Java API)", true),
        new Sdk("ours-kotlin", "ours-kotlin", "bench.ourskotlin.OursKotlinBenchKt", "ours (Kotlin)", true),
        new Sdk("langchain4j", "langchain4j", "bench.langchain4j.LangChain4jBench", "LangChain4j", false),
        new Sdk("spring-ai", "spring-ai", "bench.springai.SpringAiBench", "Spring AI", false),
        new Sdk("koog", "koog", "bench.koog.KoogBenchKt", "Koog", false));

    private static final List<String> GUARDED = List.of("fanout", "sequential");

    /** Runs the rounds, prints the table; see the class comment for the arguments. */
    public static void main(String[] args) throws Exception {
        boolean check = false;
        List<String> names = new ArrayList<>(ALL.stream().map(Sdk::name).toList());
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--check")) check = true;
            else if (args[i].equals("--sdks")) names = List.of(args[++i].split(","));
            else throw new IllegalArgumentException("unknown argument " + args[i]);
        }
        final List<String> chosen = names;
        List<Sdk> sdks = ALL.stream().filter(s -> chosen.contains(s.name())).toList();
        Path dir = Path.of(System.getProperty("bench.dir", ".")).toAbsolutePath();
        String native_ = System.getenv("PHASEO_NATIVE_DIR");
        int rounds = Integer.parseInt(System.getenv().getOrDefault("ROUNDS", "3"));

        double[] loadBefore = Load.now();
        long t0 = System.currentTimeMillis();
        // sdk -> workload -> the per-round results
        Map<String, Map<String, List<Map<String, Object>>>> results = new LinkedHashMap<>();
        Map<String, Object> versions = new LinkedHashMap<>();
        List<String> workloadOrder = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < sdks.size(); k++) {
                Sdk sdk = sdks.get((k + r) % sdks.size());
                List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g", "-Xss2m"));
                if (sdk.ours()) {
                    if (native_ == null) throw new IllegalStateException("PHASEO_NATIVE_DIR is not set");
                    cmd.add("-Djna.library.path=" + native_);
                }
                Path mod = dir.resolve(sdk.module());
                String cp = mod.resolve("target/classes") + File.pathSeparator
                    + Files.readString(mod.resolve("target/classpath.txt")).trim();
                if (sdk.ours()) {
                    // Our library is a system-scope dependency of the module: run.sh writes
                    // its JAR and runtime class path.
                    cp += File.pathSeparator + Files.readString(dir.resolve("target/phaseo-classpath.txt")).trim();
                }
                cmd.add("-cp");
                cmd.add(cp);
                cmd.add(sdk.main());
                System.err.printf(Locale.ROOT, "== round %d/%d: %s (load %.2f)%n", r + 1, rounds, sdk.label(), Load.now()[0]);
                Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
                try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = in.readLine()) != null) {
                        if (line.startsWith("RESULT ")) {
                            @SuppressWarnings("unchecked")
                            Map<String, Object> res = (Map<String, Object>) Json.read(line.substring(7));
                            String w = (String) res.get("workload");
                            if (!workloadOrder.contains(w)) workloadOrder.add(w);
                            results.computeIfAbsent(sdk.name(), x -> new LinkedHashMap<>())
                                .computeIfAbsent(w, x -> new ArrayList<>()).add(res);
                            // Per call or turn where a run has several, else per run (`empty`
                            // and `sleepy` count no unit: per_unit 0).
                            double units = (Double) res.get("per_unit");
                            System.err.printf(Locale.ROOT, "   %-11s %-12s %10.3f ms (min %.3f; first run %.1f; %.1f threads started per run, %d live at most; %,.0f bytes allocated per %s; load %.2f)%n",
                                w, sdk.name(), (Double) res.get("median_ms"), (Double) res.get("min_ms"), (Double) res.get("first_run_ms"),
                                (Double) res.get("threads_started_per_run"), ((Double) res.get("peak_live_threads")).intValue(),
                                (Double) res.get("allocated_bytes_per_run") / Math.max(units, 1),
                                units > 1 ? ("sequential".equals(w) ? "turn" : "call") : "run",
                                (Double) res.get("load1"));
                        } else if (line.startsWith("VERSIONS ")) {
                            versions.put(sdk.name(), Json.read(line.substring(9)));
                        } else {
                            System.err.println("   " + line);
                        }
                    }
                }
                int rc = p.waitFor();
                if (rc != 0) throw new IllegalStateException(sdk.name() + " exited with status " + rc);
            }
        }
        double[] loadAfter = Load.now();
        double elapsed = (System.currentTimeMillis() - t0) / 1000.0;

        // The figure: per round the median run (per unit where the workload has units), then
        // the median of the rounds.
        Map<String, Map<String, Double>> fig = new LinkedHashMap<>();
        Map<String, Map<String, Double>> best = new LinkedHashMap<>();
        for (Sdk s : sdks) {
            for (String w : workloadOrder) {
                List<Map<String, Object>> rs = results.getOrDefault(s.name(), Map.of()).getOrDefault(w, List.of());
                if (rs.isEmpty()) continue;
                List<Double> meds = new ArrayList<>();
                double min = Double.MAX_VALUE;
                for (Map<String, Object> res : rs) {
                    double unit = ((Double) res.get("per_unit"));
                    double scale = unit > 0 ? 1000.0 / unit : 1.0;
                    meds.add((Double) res.get("median_ms") * scale);
                    min = Math.min(min, (Double) res.get("min_ms") * scale);
                }
                meds.sort(null);
                int m = meds.size() / 2;
                double med = meds.size() % 2 == 1 ? meds.get(m) : (meds.get(m - 1) + meds.get(m)) / 2;
                fig.computeIfAbsent(s.name(), x -> new LinkedHashMap<>()).put(w, med);
                best.computeIfAbsent(s.name(), x -> new LinkedHashMap<>()).put(w, min);
            }
        }

        List<Bench.Workload> defs = Bench.workloads();
        List<String> header = new ArrayList<>(List.of("workload", "unit"));
        for (Sdk s : sdks) header.add(s.label());
        for (Sdk s : sdks) if (!s.ours()) header.add(s.label() + " ÷ ours");
        boolean kotlin = sdks.stream().anyMatch(s -> s.name().equals("ours-kotlin"));
        if (kotlin) header.add("best peer ÷ ours (Kotlin)");
        header.add("ours (fastest run)");
        List<List<String>> rows = new ArrayList<>();
        rows.add(header);
        boolean ok = true;
        List<String> failures = new ArrayList<>();
        for (String w : workloadOrder) {
            String unit = defs.stream().filter(d -> d.name().equals(w)).map(Bench.Workload::unit).findFirst().orElse("");
            List<String> row = new ArrayList<>(List.of(w, unit));
            Double ours = fig.getOrDefault("ours", Map.of()).get(w);
            for (Sdk s : sdks) row.add(Bench.fmt(fig.getOrDefault(s.name(), Map.of()).getOrDefault(w, Double.NaN)));
            double bestPeer = Double.NaN;
            for (Sdk s : sdks) {
                if (s.ours()) continue;
                Double v = fig.getOrDefault(s.name(), Map.of()).get(w);
                row.add(v == null || ours == null ? "–" : Bench.fmt(v / ours) + "×");
                if (v != null && !(v >= bestPeer)) bestPeer = v;
            }
            Double ourKotlin = fig.getOrDefault("ours-kotlin", Map.of()).get(w);
            if (kotlin) row.add(ourKotlin == null || Double.isNaN(bestPeer) ? "–" : Bench.fmt(bestPeer / ourKotlin) + "×");
            row.add(Bench.fmt(best.getOrDefault("ours", Map.of()).getOrDefault(w, Double.NaN)));
            rows.add(row);
            for (Sdk s : sdks) {
                Double mine = fig.getOrDefault(s.name(), Map.of()).get(w);
                if (!s.ours() || !GUARDED.contains(w) || mine == null || Double.isNaN(bestPeer) || bestPeer / mine >= 1.0) continue;
                ok = false;
                failures.add(String.format(Locale.ROOT, "%s, %s: best peer %s ÷ ours %s = %s×", w, s.label(),
                    Bench.fmt(bestPeer), Bench.fmt(mine), Bench.fmt(bestPeer / mine)));
            }
        }
        int[] widths = new int[header.size()];
        for (List<String> row : rows) for (int i = 0; i < row.size(); i++) widths[i] = Math.max(widths[i], row.get(i).length());
        StringBuilder table = new StringBuilder();
        for (int j = 0; j < rows.size(); j++) {
            List<String> row = rows.get(j);
            for (int i = 0; i < row.size(); i++) {
                String c = row.get(i);
                String pad = " ".repeat(widths[i] - c.length());
                table.append(i < 2 ? c + pad : pad + c).append(i + 1 < row.size() ? "  " : "\n");
            }
            if (j == 0) {
                for (int i = 0; i < widths.length; i++) table.append("-".repeat(widths[i])).append(i + 1 < widths.length ? "  " : "\n");
            }
        }

        System.out.println();
        System.out.printf(Locale.ROOT, "Phaseo Agent SDK (Java and Kotlin APIs) vs JVM peers: %d rounds, each SDK in its own JVM per round, "
            + "order rotating; figure = median over rounds of each round's median run (%s); %d CPUs, load before %.2f %.2f %.2f, after %.2f %.2f %.2f; %.0f s%n",
            rounds, "0".equals(System.getenv("GC_BEFORE_RUN")) ? "timed runs back to back" : "a collection before each timed run",
            Runtime.getRuntime().availableProcessors(), loadBefore[0], loadBefore[1], loadBefore[2],
            loadAfter[0], loadAfter[1], loadAfter[2], elapsed);
        System.out.println("java " + System.getProperty("java.version") + "; our native library: " + native_);
        System.out.println("versions: " + Json.write(versions));
        System.out.println();
        System.out.print(table);
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("load_before", List.of(loadBefore[0], loadBefore[1], loadBefore[2]));
        doc.put("load_after", List.of(loadAfter[0], loadAfter[1], loadAfter[2]));
        doc.put("rounds", rounds);
        doc.put("figures", fig);
        doc.put("fastest", best);
        doc.put("results", results);
        doc.put("versions", versions);
        System.out.println();
        System.out.println("JSON:");
        System.out.println(Json.write(doc));
        if (check) {
            if (ok) {
                System.out.println("bench-check (JVM): fan-out and sequential ahead of the best peer");
            } else {
                System.out.println("bench-check (JVM) FAILED: " + String.join("; ", failures));
                System.exit(1);
            }
        }
    }
}
