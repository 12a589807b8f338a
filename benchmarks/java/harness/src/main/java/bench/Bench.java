package bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The workloads and their timing, the same for every SDK (the workloads of
 * benchmarks/node/bench.mjs and benchmarks/python/bench.py):
 *
 * <ul>
 *   <li>{@code empty}: one model turn that returns the final text (the run loop's floor);
 *   <li>{@code fanout}: one turn with {@code FANOUT_N} (1000) calls of {@code add(a, b)}, then
 *       the final turn (µs per call);
 *   <li>{@code sequential}: {@code SEQ_N} (200) turns of one {@code add} call each, then the
 *       final turn (µs per turn);
 *   <li>{@code sleepy}: one turn with {@code SLEEPY_N} (100) calls of {@code nap(i)}, a tool that
 *       sleeps 50 ms (wall ms).
 * </ul>
 *
 * Arguments are JSON text and call ids unique, as from a real provider. Setting up a run (the
 * scripted model, the agent) is untimed; the whole run call is timed. First untimed runs
 * until both {@code WARMUP} (3) runs and {@code WARMUP_SECONDS} (3) of them have gone by: the
 * JIT compiles an SDK's hot code over hundreds of runs, and an application serves many runs,
 * so the figure is the steady state's, for every SDK alike (the peers' code is Java, most of
 * ours is native and gains far less). Then {@code RUNS} (5) timed runs, {@code System.gc()}
 * before each (no run pays for the garbage of the one before, and each starts with cold
 * caches), or none with {@code GC_BEFORE_RUN=0} (runs back to back, as in a busy service; use
 * more {@code RUNS}); the median and the fastest are reported, with the heap bytes the JVM's
 * threads allocated during a timed run (a count that a busy machine does not change). Every
 * run checks the final text, every timed run the number of tool invocations too. Each process
 * prints one {@code RESULT {json}} line per workload.
 */
public final class Bench {
    private Bench() {}

    /** How long {@code nap} sleeps. */
    public static final int SLEEP_MS = 50;

    /** Tool invocations of the current run (every SDK's tools count here). */
    public static final AtomicInteger CALLS = new AtomicInteger();

    /** One tool call of a scripted turn: id, tool name, arguments as JSON text. */
    public record Call(String id, String name, String arguments) {}

    /**
     * A workload: the scripted turns (each a list of calls; the final text turn "done" is not
     * listed), the tool it uses, how many invocations a run makes, and the unit count the
     * per-unit figure divides by (0: the figure is the wall time).
     */
    public record Workload(String name, String tool, List<List<Call>> turns, int expected, int perUnit, String unit) {
        /** The step limit to give an SDK: every turn plus slack. */
        public int maxSteps() {
            return turns.size() + 5;
        }
    }

    /** The integer arguments of {@code add}. */
    public static String addArgs(int i) {
        return "{\"a\":" + i + ",\"b\":1}";
    }

    /** {@code add}'s body: the sum, counted. */
    public static int add(int a, int b) {
        CALLS.incrementAndGet();
        return a + b;
    }

    /** {@code nap}'s body: sleeps {@link #SLEEP_MS}, returns {@code i}, counted. */
    public static int nap(int i) {
        CALLS.incrementAndGet();
        try {
            Thread.sleep(SLEEP_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        return i;
    }

    private static int env(String name, int dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : Integer.parseInt(v.trim());
    }

    private static double envDouble(String name, double dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : Double.parseDouble(v.trim());
    }

    /** The workloads selected by {@code WORKLOADS} (comma list; default all). */
    public static List<Workload> workloads() {
        int fanout = env("FANOUT_N", 1000);
        int seq = env("SEQ_N", 200);
        int sleepy = env("SLEEPY_N", 100);
        List<Workload> all = new ArrayList<>();
        all.add(new Workload("empty", null, List.of(), 0, 0, "ms wall"));
        List<Call> fan = new ArrayList<>();
        for (int i = 0; i < fanout; i++) fan.add(new Call("c" + i, "add", addArgs(i)));
        all.add(new Workload("fanout", "add", List.of(fan), fanout, fanout, "µs/call"));
        List<List<Call>> turns = new ArrayList<>();
        for (int i = 0; i < seq; i++) turns.add(List.of(new Call("c" + i, "add", addArgs(i))));
        all.add(new Workload("sequential", "add", turns, seq, seq, "µs/turn"));
        List<Call> naps = new ArrayList<>();
        for (int i = 0; i < sleepy; i++) naps.add(new Call("c" + i, "nap", "{\"i\":" + i + "}"));
        all.add(new Workload("sleepy", "nap", List.of(naps), sleepy, 0, "ms wall"));
        String only = System.getenv("WORKLOADS");
        if (only == null || only.isBlank()) return all;
        List<String> names = Arrays.asList(only.split(","));
        return all.stream().filter(w -> names.contains(w.name())).toList();
    }

    /** One SDK under test. */
    public interface Sdk {
        /** Its name in the table. */
        String name();

        /** Versions of what is measured. */
        Map<String, String> versions();

        /** Builds one run of {@code w} (untimed); the returned run is timed. */
        Run prepare(Workload w) throws Exception;
    }

    /** One prepared run: returns the final text. */
    @FunctionalInterface
    public interface Run {
        /** Runs it. */
        String run() throws Exception;
    }

    private static double median(List<Double> xs) {
        double[] s = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int m = s.length / 2;
        return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
    }

    /** Runs every workload for {@code sdk} and prints the RESULT lines. */
    public static void main(Sdk sdk) throws Exception {
        int runs = env("RUNS", 5);
        int warmup = env("WARMUP", 3);
        long warmupNanos = (long) (envDouble("WARMUP_SECONDS", 3) * 1e9);
        boolean gcBeforeRun = env("GC_BEFORE_RUN", 1) != 0;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        for (Workload w : workloads()) {
            List<Double> samples = new ArrayList<>();
            long startedBefore = 0;
            long startedTotal = 0;
            int peakLive = 0;
            long allocated = 0;
            double[] warm = warmUp(sdk, w, warmup, warmupNanos);
            for (int i = 0; i < runs; i++) {
                CALLS.set(0);
                Run run = sdk.prepare(w);
                if (gcBeforeRun) System.gc();
                startedBefore = threads.getTotalStartedThreadCount();
                threads.resetPeakThreadCount();
                Map<Long, Long> allocatedBefore = allocatedBytes(threads);
                long t0 = System.nanoTime();
                String out = run.run();
                double ms = (System.nanoTime() - t0) / 1e6;
                allocated += allocatedSince(threads, allocatedBefore);
                if (!"done".equals(out)) throw new IllegalStateException(sdk.name() + " " + w.name() + ": final text " + out);
                if (CALLS.get() != w.expected()) {
                    throw new IllegalStateException(sdk.name() + " " + w.name() + ": " + CALLS.get() + " calls, expected " + w.expected());
                }
                samples.add(ms);
                startedTotal += threads.getTotalStartedThreadCount() - startedBefore;
                peakLive = Math.max(peakLive, threads.getPeakThreadCount());
            }
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("sdk", sdk.name());
            r.put("workload", w.name());
            r.put("median_ms", median(samples));
            r.put("min_ms", samples.stream().mapToDouble(Double::doubleValue).min().orElse(0));
            r.put("per_unit", w.perUnit());
            r.put("runs", runs);
            r.put("warmup", (int) warm[0]);
            // The first run of the workload in this JVM (for the first workload: a fresh JVM's).
            r.put("first_run_ms", warm[1]);
            // JVM threads started during a timed run (average), and the most alive at once.
            r.put("threads_started_per_run", (double) startedTotal / runs);
            r.put("peak_live_threads", peakLive);
            // Heap bytes the JVM's threads allocated during a timed run (average; a thread
            // that ended during the run is not counted): steadier than time on a busy machine.
            r.put("allocated_bytes_per_run", (double) allocated / runs);
            r.put("load1", Load.now()[0]);
            System.out.println("RESULT " + Json.write(r));
            System.out.flush();
        }
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("sdk", sdk.name());
        v.put("versions", sdk.versions());
        v.put("java", System.getProperty("java.version"));
        System.out.println("VERSIONS " + Json.write(v));
    }

    /** The heap bytes each live thread has allocated so far, by thread id. */
    private static Map<Long, Long> allocatedBytes(ThreadMXBean threads) {
        Map<Long, Long> bytes = new HashMap<>();
        if (threads instanceof com.sun.management.ThreadMXBean counting) {
            long[] ids = counting.getAllThreadIds();
            long[] allocated = counting.getThreadAllocatedBytes(ids);
            for (int i = 0; i < ids.length; i++) {
                if (allocated[i] >= 0) bytes.put(ids[i], allocated[i]);
            }
        }
        return bytes;
    }

    /** The heap bytes live threads allocated since {@code before} (a new thread's from 0). */
    private static long allocatedSince(ThreadMXBean threads, Map<Long, Long> before) {
        long total = 0;
        for (Map.Entry<Long, Long> e : allocatedBytes(threads).entrySet()) {
            total += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        return total;
    }

    /**
     * Untimed runs of {@code w} until at least {@code min} ran and {@code nanos} went by (no
     * collection forced between them); returns how many ran and the first one's wall ms.
     */
    private static double[] warmUp(Sdk sdk, Workload w, int min, long nanos) throws Exception {
        long start = System.nanoTime();
        int n = 0;
        double first = 0;
        while (n < min || System.nanoTime() - start < nanos) {
            CALLS.set(0);
            Run run = sdk.prepare(w);
            long t0 = System.nanoTime();
            String out = run.run();
            if (n == 0) first = (System.nanoTime() - t0) / 1e6;
            if (!"done".equals(out)) throw new IllegalStateException(sdk.name() + " " + w.name() + ": final text " + out);
            n++;
        }
        return new double[] {n, first};
    }

    /** A number as the table prints it. */
    public static String fmt(double v) {
        if (Double.isNaN(v)) return "–";
        if (Math.abs(v) >= 100) return String.format(Locale.ROOT, "%,.0f", v);
        if (Math.abs(v) >= 10) return String.format(Locale.ROOT, "%.1f", v);
        return String.format(Locale.ROOT, "%.2f", v);
    }
}
