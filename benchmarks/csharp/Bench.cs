// The C# binding against the host's floor: no installable .NET agent SDK runs a
// tool-calling loop offline here (no NuGet), so the same workloads also run on bare Tasks
// doing the same trivial work (parse the call's JSON arguments, add, write the answer's
// JSON, with the binding's Json reader and writer), the least any SDK on .NET's thread pool
// can cost. Workloads as in benchmarks/go/harness/workload.go:
//
//   empty       one model turn that returns the final text (wall ms)
//   fanout      one turn of FANOUT_N (1000) add(a, b) calls, then the final turn (µs per call)
//   sequential  SEQ_N (200) turns of one add call each, then the final turn (µs per turn)
//   sleepy      one turn of SLEEPY_N (100) calls of a tool awaiting Task.Delay(50) (wall ms)
//
// Setting up a run (the scripted client, the agent) is untimed; the whole run is timed.
// WARMUP (3) warm-up runs, then RUNS (5) timed runs, GC before each, median reported.
// Prints a table, then one JSON document (`figures[sdk][workload]`, as the Go and JVM drivers).
//
//   benchmarks/csharp/run.sh      (builds the C ABI library in release and this program)
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using PhaseoAgentSdk;

static class Bench
{
    const int SleepMs = 50;
    static readonly int Runs = EnvInt("RUNS", 5), Warmup = EnvInt("WARMUP", 3);
    static readonly int FanoutN = EnvInt("FANOUT_N", 1000), SeqN = EnvInt("SEQ_N", 200), SleepyN = EnvInt("SLEEPY_N", 100);
    static readonly Dictionary<string, string> Units = new Dictionary<string, string>
    {
        { "empty", "ms wall" }, { "fanout", "µs/call" }, { "sequential", "µs/turn" }, { "sleepy", "ms wall" },
    };

    // The tool invocations of the current run (every variant's tools count here).
    static int calls;

    static int EnvInt(string name, int fallback)
    {
        var v = Environment.GetEnvironmentVariable(name);
        return string.IsNullOrEmpty(v) ? fallback : int.Parse(v, CultureInfo.InvariantCulture);
    }

    static Dictionary<string, object> O(params object[] kv)
    {
        var m = new Dictionary<string, object>();
        for (int i = 0; i < kv.Length; i += 2) m[(string)kv[i]] = kv[i + 1];
        return m;
    }

    static Dictionary<string, object> Call(string id, string name, object args) =>
        O("id", id, "name", name, "arguments", Json.Write(args));

    // The scripted turns of a workload: each a list of calls (the final "done" turn not listed).
    static List<List<Dictionary<string, object>>> Turns(string workload)
    {
        var turns = new List<List<Dictionary<string, object>>>();
        switch (workload)
        {
            case "fanout":
                turns.Add(Enumerable.Range(0, FanoutN).Select(i => Call("c" + i, "add", O("a", (long)i, "b", 1L))).ToList());
                break;
            case "sequential":
                for (int i = 0; i < SeqN; i++) turns.Add(new List<Dictionary<string, object>> { Call("s" + i, "add", O("a", (long)i, "b", 1L)) });
                break;
            case "sleepy":
                turns.Add(Enumerable.Range(0, SleepyN).Select(i => Call("n" + i, "nap", O("i", (long)i))).ToList());
                break;
        }
        return turns;
    }

    static object AddBody(object input)
    {
        Interlocked.Increment(ref calls);
        var m = (Dictionary<string, object>)input;
        return Convert.ToInt64(m["a"]) + Convert.ToInt64(m["b"]);
    }

    static async Task<object> NapBody(object input)
    {
        Interlocked.Increment(ref calls);
        await Task.Delay(SleepMs).ConfigureAwait(false);
        return ((Dictionary<string, object>)input)["i"];
    }

    static readonly object IntSchema = O("type", "integer");
    static readonly Tool Add = AgentSdk.DefineTool(new Tool("add", (input, runtime) => Task.FromResult(AddBody(input)),
        "Adds two integers.", O("type", "object", "properties", O("a", IntSchema, "b", IntSchema), "required", new[] { "a", "b" })));
    static readonly Tool Nap = AgentSdk.DefineTool(new Tool("nap", (input, runtime) => NapBody(input),
        "Sleeps 50 ms, returns i.", O("type", "object", "properties", O("i", IntSchema), "required", new[] { "i" })));

    // Ours: the agent and its scripted client (untimed); returns the timed run.
    static Func<Task> Ours(string workload)
    {
        var turns = Turns(workload);
        var responses = turns.Select(t => (object)O("toolCalls", t.Cast<object>().ToList())).ToList();
        responses.Add(O("text", "done"));
        var client = new ScriptedClient(responses);
        var agent = AgentSdk.CreateAgent(new AgentDefinition
        {
            Id = "bench", Tools = new[] { Add, Nap }, MaxSteps = turns.Count + 5,
            ToolExecution = new ToolExecutionConfig(Concurrency: 1000),
        });
        return async () =>
        {
            var result = await agent.Run(new RunOptions("go", client)).ConfigureAwait(false);
            if (result.Status != "completed" || !"done".Equals(result.Output))
                throw new Exception("ours " + workload + ": status " + result.Status);
            agent.Dispose();
        };
    }

    // The floor: each turn's calls as Tasks on the thread pool (all started, then awaited),
    // each parsing its arguments, running the tool's body and writing the answer's JSON.
    static Func<Task> Floor(string workload)
    {
        var turns = Turns(workload);
        return async () =>
        {
            int answers = 0;
            foreach (var turn in turns)
            {
                var tasks = turn.Select(c => Task.Run(async () =>
                {
                    var input = Json.Parse((string)c["arguments"]);
                    var output = (string)c["name"] == "add" ? AddBody(input) : await NapBody(input).ConfigureAwait(false);
                    return Json.Write(output);
                })).ToArray();
                answers += (await Task.WhenAll(tasks).ConfigureAwait(false)).Length;
            }
            if (answers != turns.Sum(t => t.Count)) throw new Exception("floor " + workload + ": " + answers + " answers");
        };
    }

    static double Median(List<double> xs)
    {
        var s = xs.OrderBy(x => x).ToList();
        return s.Count % 2 == 1 ? s[s.Count / 2] : (s[s.Count / 2 - 1] + s[s.Count / 2]) / 2;
    }

    static double[] Measure(string workload, Func<string, Func<Task>> make)
    {
        int want = Turns(workload).Sum(t => t.Count);
        var samples = new List<double>();
        for (int i = 0; i < Warmup + Runs; i++)
        {
            var run = make(workload);
            calls = 0;
            GC.Collect();
            GC.WaitForPendingFinalizers();
            var sw = Stopwatch.StartNew();
            run().GetAwaiter().GetResult();
            double ms = sw.Elapsed.TotalMilliseconds;
            if (calls != want) throw new Exception(workload + ": " + calls + " tool calls, expected " + want);
            if (i >= Warmup) samples.Add(ms);
        }
        int perUnit = workload == "fanout" ? FanoutN : workload == "sequential" ? SeqN : 0;
        double scale = perUnit > 0 ? 1000.0 / perUnit : 1.0;
        return new[] { Median(samples) * scale, samples.Min() * scale };
    }

    static double[] Load() =>
        File.ReadAllText("/proc/loadavg").Split(' ').Take(3).Select(x => double.Parse(x, CultureInfo.InvariantCulture)).ToArray();

    static string Fmt(double v) =>
        v >= 100 ? v.ToString("N0", CultureInfo.InvariantCulture) : v.ToString(v >= 10 ? "0.0" : "0.00", CultureInfo.InvariantCulture);

    static int Main()
    {
        var workloads = (Environment.GetEnvironmentVariable("WORKLOADS") ?? "empty,fanout,sequential,sleepy")
            .Split(',').Select(w => w.Trim()).Where(w => w.Length > 0).ToList();
        var loadBefore = Load();
        var variants = new Dictionary<string, Func<string, Func<Task>>> { { "ours", Ours }, { "floor", Floor } };
        var figures = variants.Keys.ToDictionary(k => k, k => new Dictionary<string, object>());
        var fastest = variants.Keys.ToDictionary(k => k, k => new Dictionary<string, object>());
        foreach (var w in workloads)
            foreach (var v in variants)
            {
                var r = Measure(w, v.Value);
                figures[v.Key][w] = r[0];
                fastest[v.Key][w] = r[1];
            }
        var loadAfter = Load();

        Console.WriteLine();
        Console.WriteLine("Phaseo Agent SDK (C#) vs the floor (bare Tasks): median of " + Runs + " runs after " + Warmup +
            " warm-up; Mono " + Environment.Version + "; load before " + string.Join(" ", loadBefore.Select(x => x.ToString(CultureInfo.InvariantCulture))) +
            ", after " + string.Join(" ", loadAfter.Select(x => x.ToString(CultureInfo.InvariantCulture))));
        var rows = new List<string[]> { new[] { "workload", "unit", "ours", "floor", "ours ÷ floor", "ours (fastest run)" } };
        foreach (var w in workloads)
        {
            double o = (double)figures["ours"][w], f = (double)figures["floor"][w];
            rows.Add(new[] { w, Units[w], Fmt(o), Fmt(f), Fmt(o / f) + "×", Fmt((double)fastest["ours"][w]) });
        }
        var widths = Enumerable.Range(0, rows[0].Length).Select(i => rows.Max(r => r[i].Length)).ToArray();
        for (int j = 0; j < rows.Count; j++)
        {
            Console.WriteLine(string.Join("  ", rows[j].Select((c, i) => i < 2 ? c.PadRight(widths[i]) : c.PadLeft(widths[i]))));
            if (j == 0) Console.WriteLine(string.Join("  ", widths.Select(n => new string('-', n))));
        }
        Console.WriteLine();
        Console.WriteLine("JSON:");
        Console.WriteLine(Json.Write(O("load_before", loadBefore, "load_after", loadAfter, "runs", (long)Runs, "warmup", (long)Warmup,
            "versions", O("mono", Environment.Version.ToString()), "figures", figures, "fastest", fastest)));
        return 0;
    }
}
