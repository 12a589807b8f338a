using System;
using System.Collections;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>An object one of whose getters throws.</summary>
    public sealed class ThrowingGetter
    {
        public int Fine => 1;
        public int Broken => throw new InvalidOperationException("getter broke");
    }

    /// <summary>Hostile values of every sort, from a seeded <see cref="Random"/>.</summary>
    static class Hostile
    {
        static readonly string[] Words = { "", "a", "key", "ünï", "\u0000", "\t\n\"\\", "\ud800", "\udfff", "a\ud800b", "\ud83d\ude00", "$callback", "__proto__" };

        internal static string Text(Random r)
        {
            switch (r.Next(6))
            {
                case 0: return Words[r.Next(Words.Length)];
                case 1: return new string('x', r.Next(1, 5000));
                default:
                    {
                        var sb = new StringBuilder();
                        int n = r.Next(0, 12);
                        for (int i = 0; i < n; i++)
                        {
                            switch (r.Next(4))
                            {
                                case 0: sb.Append((char)r.Next(0, 0x80)); break;
                                case 1: sb.Append((char)r.Next(0xD800, 0xE000)); break; // a lone surrogate, likely
                                case 2: sb.Append((char)r.Next(0x80, 0xFFFF)); break;
                                default: sb.Append(Words[r.Next(Words.Length)]); break;
                            }
                        }
                        return sb.ToString();
                    }
            }
        }

        static Node Chain(int n)
        {
            Node head = null;
            for (int i = 0; i < n; i++) head = new Node { Name = "n" + i, Next = head };
            return head;
        }

        internal static object Value(Random r, int depth)
        {
            int pick = r.Next(depth >= 4 ? 20 : 26);
            switch (pick)
            {
                case 0: return null;
                case 1: return r.Next(2) == 0;
                case 2:
                    {
                        var ints = new object[] { 0, -1, int.MaxValue, int.MinValue, long.MaxValue, long.MinValue, ulong.MaxValue, (byte)7, (short)-3, uint.MaxValue, (ushort)5, (sbyte)-8, r.Next() };
                        return ints[r.Next(ints.Length)];
                    }
                case 3:
                    {
                        var ds = new object[] { double.NaN, double.PositiveInfinity, double.NegativeInfinity, 1e308, -1e-308, double.Epsilon, -0.0, 0.1, r.NextDouble() * 1e6, 1e15, 123456789012345678.0, float.NaN, 0.1f, float.MaxValue, 2.5 };
                        return ds[r.Next(ds.Length)];
                    }
                case 4:
                    {
                        var ms = new object[] { decimal.MaxValue, decimal.MinValue, 0.1m, 12.50m, 1e-28m, (decimal)r.Next(), -0.0m };
                        return ms[r.Next(ms.Length)];
                    }
                case 5: case 6: return Text(r);
                case 7: return r.Next(2) == 0 ? (char)r.Next(0xD800, 0xE000) : (char)r.Next(0x20, 0x7F);
                case 8:
                    {
                        var es = new object[] { Priority.High, (Priority)7, DayOfWeek.Friday, FileAccess.ReadWrite, (FileAccess)0 };
                        return es[r.Next(es.Length)];
                    }
                case 9:
                    {
                        var xs = new object[] { new DateTime(2024, 2, 29, 23, 59, 59, DateTimeKind.Utc), DateTimeOffset.MinValue, Guid.NewGuid(), TimeSpan.FromMilliseconds(-1500), new Uri("https://example.invalid/a?b"), new Version(1, 2, 3), DBNull.Value };
                        return xs[r.Next(xs.Length)];
                    }
                case 10:
                    {
                        var raws = new[] { "{}", "[1,2]", "\"s\"", "{", "", "nul", "1e999", "99999999999999999999", "[[[[]]]]", "{\"a\":}" };
                        return new RawJson(raws[r.Next(raws.Length)]);
                    }
                case 11: return new[] { 1, 0 }.Select(x => 10 / x);
                case 12: return new ThrowingGetter();
                case 13:
                    {
                        var nos = new object[] { new Func<int>(() => 1), typeof(string), Task.FromResult(1), IntPtr.Zero, typeof(FuzzTests).GetMethod("Values") };
                        return nos[r.Next(nos.Length)];
                    }
                case 14:
                    {
                        var ns = new[] { 1, 60, 63, 64, 65, 72, 73, 500, 20000 };
                        return Chain(ns[r.Next(ns.Length)]);
                    }
                case 15:
                    switch (r.Next(3))
                    {
                        case 0: { var l = new List<object> { 1 }; l.Add(new object[] { l }); return l; }
                        case 1: { var d = new Dictionary<string, object>(); d["me"] = d; return d; }
                        default: { var n = new Node { Name = "x" }; n.Next = new Node { Name = "y", Next = n }; return n; }
                    }
                case 16: return new { a = Value(r, depth + 1), b = Text(r) };
                case 17:
                    return new Order
                    {
                        Id = Text(r), Priority = (Priority)r.Next(3), Total = (decimal)r.NextDouble(),
                        Lines = { new OrderLine { Sku = Text(r), Quantity = r.Next() } }, Note = null,
                    };
                case 18: return new Dictionary<int, object> { { 1, "one" } };
                case 19: return new Scores();
                case 20: case 21:
                    {
                        var l = new List<object>();
                        int n = r.Next(0, 4);
                        for (int i = 0; i < n; i++) l.Add(Value(r, depth + 1));
                        return r.Next(2) == 0 ? (object)l : l.ToArray();
                    }
                default:
                    {
                        var d = new Dictionary<string, object>();
                        int n = r.Next(0, 4);
                        for (int i = 0; i < n; i++) d[Text(r)] = Value(r, depth + 1);
                        return d;
                    }
            }
        }

        /// <summary>What the value reads as, for a failure message.</summary>
        internal static string Describe(object v)
        {
            try { return Safe(Json.Write(v), 300); }
            catch (Exception e) { return (v?.GetType().FullName ?? "null") + " (" + Safe(e.Message, 300) + ")"; }
        }

        /// <summary>Printable ASCII, the rest escaped: NUnit's XML report cannot hold a lone
        /// surrogate (nor would a terminal show it).</summary>
        internal static string Safe(string s, int max = int.MaxValue)
        {
            if (s == null) return "null";
            var sb = new StringBuilder();
            foreach (var c in s)
            {
                if (sb.Length >= max) { sb.Append("..."); break; }
                if (c >= 0x20 && c < 0x7F) sb.Append(c);
                else sb.Append("\\u").Append(((int)c).ToString("x4"));
            }
            return sb.ToString();
        }
    }

    /// <summary>What the SDK must do with a value: take it (and give back this canonical
    /// form), refuse it, or either (the core's own checks decide).</summary>
    sealed class Expectation
    {
        internal bool MustRefuse, MustAccept;
        internal string Canonical;

        /// <summary>The expectation for <paramref name="v"/> where it enters the SDK inside a
        /// document that nests it <paramref name="nesting"/> levels down (the core reads run
        /// options, and a hook's answer, as one text with the 64-level limit, so an input or a
        /// review's payload has 63 levels left).</summary>
        internal static Expectation Of(object v, int nesting = 0)
        {
            string text;
            try { text = Json.Write(v); }
            catch (Exception) { return new Expectation { MustRefuse = true }; }
            // Lone surrogates become U+FFFD on their way into the SDK (UTF-8).
            var scrubbed = Encoding.UTF8.GetString(Encoding.UTF8.GetBytes(text));
            object parsed;
            try { parsed = Json.Parse(scrubbed); }
            catch (FormatException) { return new Expectation(); } // RawJson: the core decides
            bool plain = Depth(parsed) + nesting <= 64 && !HasHugeNumber(parsed);
            return new Expectation { MustAccept = plain, Canonical = plain ? Canon(parsed) : null };
        }

        static int Depth(object v)
        {
            if (v is Dictionary<string, object> d) return 1 + (d.Count == 0 ? 0 : d.Values.Max(Depth));
            if (v is List<object> l) return 1 + (l.Count == 0 ? 0 : l.Max(Depth));
            return 0;
        }

        // An integer past 64 bits reads as a double here; the core refuses it.
        static bool HasHugeNumber(object v)
        {
            if (v is double d) return Math.Abs(d) >= 9e18 && d == Math.Floor(d);
            if (v is Dictionary<string, object> m) return m.Values.Any(HasHugeNumber);
            if (v is List<object> l) return l.Any(HasHugeNumber);
            return false;
        }

        /// <summary>JSON text with sorted keys (key order is not what is checked here).</summary>
        internal static string Canon(object v)
        {
            if (v is Dictionary<string, object> d)
                return "{" + string.Join(",", d.Keys.OrderBy(k => k, StringComparer.Ordinal).Select(k => Json.Write(k) + ":" + Canon(d[k]))) + "}";
            if (v is List<object> l) return "[" + string.Join(",", l.Select(Canon)) + "]";
            // A number is compared by value: 1E+15 and 1000000000000000 are one number.
            if (v is double n && n == Math.Floor(n) && Math.Abs(n) < 9e18) return ((long)n).ToString(CultureInfo.InvariantCulture);
            return Json.Write(v);
        }
    }

    /// <summary>Seeded fuzzing, as the Python (hypothesis) and Node (fast-check) suites do:
    /// hostile host values through every kind of callback, and mutated paused states through
    /// continue. <c>PHASEO_FUZZ_SEED</c> replays a run (the seed is in every failure),
    /// <c>PHASEO_FUZZ_RUNS</c> sets the inputs per property (default 3000; <c>make
    /// fuzz-csharp</c> runs 20000).</summary>
    [TestFixture]
    public class FuzzTests
    {
        static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

        static int Seed
        {
            get
            {
                var s = Environment.GetEnvironmentVariable("PHASEO_FUZZ_SEED");
                return string.IsNullOrEmpty(s) ? 20240611 : int.Parse(s, CultureInfo.InvariantCulture);
            }
        }

        static int Runs
        {
            get
            {
                var s = Environment.GetEnvironmentVariable("PHASEO_FUZZ_RUNS");
                return string.IsNullOrEmpty(s) ? 3000 : int.Parse(s, CultureInfo.InvariantCulture);
            }
        }

        static readonly HashSet<string> Documented = new HashSet<string>(
            typeof(ErrorCodes).GetFields().Where(f => f.IsLiteral).Select(f => (string)f.GetRawConstantValue()));

        /// <summary>Answers a tool call first (its arguments given), then text: the model side
        /// of every fuzzed run.</summary>
        sealed class FuzzClient : IModelClient
        {
            internal Func<ModelRequest, ModelResponse> First;
            internal readonly List<ModelRequest> Requests = new List<ModelRequest>();
            public Task<ModelResponse> Generate(ModelRequest request)
            {
                int n;
                lock (Requests) { Requests.Add(request); n = Requests.Count; }
                if (n == 1 && First != null) return Task.FromResult(First(request));
                return Task.FromResult(new ModelResponse("done"));
            }
        }

        static bool WritesNull(object v)
        {
            try { return Json.Write(v) == "null"; }
            catch (Exception) { return false; }
        }

        static ModelResponse CallT(ModelRequest _) => new ModelResponse(null, new[] { new ModelToolCall("c1", "t", "{}") });

        /// <summary>Runs one fuzzed run to its end (a synchronous refusal counts as its end).</summary>
        static (RunResult Result, Exception Error) Outcome(Func<Task<RunResult>> start, string what)
        {
            Task<RunResult> t;
            try { t = start(); }
            catch (Exception e) { return (null, e); }
            if (!((IAsyncResult)t).AsyncWaitHandle.WaitOne(Bound)) Assert.Fail(what + ": the run did not end within " + Bound.TotalSeconds + " s");
            if (t.IsFaulted) return (null, t.Exception.InnerException);
            return (t.Result, null);
        }

        static void Refusal(Exception e, string what, params Type[] alsoAllowed)
        {
            if (e is AgentException ae)
            {
                Assert.IsTrue(Documented.Contains(ae.Code), what + ": undocumented code " + ae.Code + ": " + Hostile.Safe(ae.Message));
                return;
            }
            Assert.IsTrue(e != null && alsoAllowed.Any(t => t.IsInstanceOfType(e)), what + ": unexpected " + Hostile.Safe(e?.ToString()));
        }

        [Test]
        public void Values()
        {
            int seed = Seed, runs = Runs;
            var r = new Random(seed);
            var sw = Stopwatch.StartNew();
            object current = null;
            object received = null;
            // Each input's tool reports into the box of its input: a tool whose run ended (its
            // progress was refused) may still be finishing while the next input runs.
            var thrown = new StrongBox<Exception>();
            var events = new List<object>();

            var resultTool = new Tool("t", (i, rt) => Task.FromResult(current)) { OutputSchema = v => { received = v; return v; } };
            var progressTool = new Tool("t", async (i, rt) =>
            {
                var box = thrown;
                try { await rt.EmitProgress(current); }
                catch (Exception e) { box.Value = e; }
                return "ok";
            });
            var contextTool = new Tool("t", (i, rt) =>
            {
                var box = thrown;
                try { rt.SetContext(current); }
                catch (Exception e) { box.Value = e; }
                return Task.FromResult<object>("ok");
            });
            var validatorTool = new Tool("t", (i, rt) => { received = i; return Task.FromResult<object>("ok"); }) { InputSchema = v => current };
            var plainTool = new Tool("t", (i, rt) => Task.FromResult<object>("ok"));
            var calledTool = new Tool("t")
            {
                OnToolCalled = (i, rt) => Task.FromResult((true, current)),
                OutputSchema = v => { received = v; return v; },
            };

            var agents = new[]
            {
                AgentSdk.CreateAgent(new AgentDefinition { Id = "result", Tools = new[] { resultTool } }),
                AgentSdk.CreateAgent(new AgentDefinition { Id = "progress", Tools = new[] { progressTool } }),
                AgentSdk.CreateAgent(new AgentDefinition { Id = "context", Tools = new[] { contextTool } }),
                AgentSdk.CreateAgent(new AgentDefinition { Id = "validator", Tools = new[] { validatorTool } }),
                AgentSdk.CreateAgent(new AgentDefinition
                {
                    Id = "review", Tools = new[] { plainTool },
                    HumanReview = ctx => Task.FromResult(ctx.StepIndex == 0 ? new HumanReviewRequest("check", current) : null),
                }),
                AgentSdk.CreateAgent(new AgentDefinition { Id = "called", Tools = new[] { calledTool } }),
                AgentSdk.CreateAgent(new AgentDefinition { Id = "model", Tools = new[] { plainTool } }),
                AgentSdk.CreateAgent(new AgentDefinition { Id = "input", Tools = new[] { plainTool } }),
            };
            var counts = new int[agents.Length];
            try
            {
                for (int i = 0; i < runs; i++)
                {
                    int kind = r.Next(agents.Length);
                    counts[kind]++;
                    current = Hostile.Value(r, 0);
                    // The core's JSON hosts read a null answer of onToolCalled as "not completed"
                    // (the call waits for a person), so (true, null) is not fuzzed there.
                    if (agents[kind].Id == "called" && WritesNull(current)) current = "null";
                    received = null;
                    thrown = new StrongBox<Exception>();
                    lock (events) events.Clear();
                    var expect = Expectation.Of(current);
                    var client = new FuzzClient { First = CallT };
                    var agent = agents[kind];
                    string what = "seed " + seed + ", input " + i + ", " + agent.Id + ": " + Hostile.Describe(current);
                    var opts = new RunOptions("go", client);
                    string modelText = null;
                    switch (agent.Id)
                    {
                        case "progress":
                            opts.OnEvent = e => { if (e.Type == "tool.preliminary_result") lock (events) events.Add(e.Details["result"]); };
                            break;
                        case "model":
                            {
                                modelText = Hostile.Text(r);
                                var usage = new Dictionary<string, object> { { "inputTokens", current } };
                                var args = r.Next(3) == 0 ? Hostile.Text(r) : "{}";
                                int answer = r.Next(8);
                                client.First = req =>
                                {
                                    switch (answer)
                                    {
                                        case 0: return null;
                                        case 1: return new ModelResponse(modelText, new ModelToolCall[] { null });
                                        case 2: return new ModelResponse(null, new[] { new ModelToolCall(null, null, null) });
                                        case 3: return new ModelResponse(modelText) { Usage = usage, Cost = double.NaN };
                                        case 4: case 5: return new ModelResponse(modelText) { Usage = usage };
                                        default: return new ModelResponse(null, new[] { new ModelToolCall("c1", "t", args) }) { Usage = usage };
                                    }
                                };
                                if (answer < 4) expect = new Expectation();
                                expect = Expectation.Of(usage);
                                break;
                            }
                        case "review":
                            // The hook's answer is {reason, payload}: the payload has 63 levels left.
                            expect = Expectation.Of(current, 1);
                            break;
                        case "input":
                            opts.Input = current;
                            opts.Context = current;
                            client.First = null;
                            expect = Expectation.Of(current, 1);
                            break;
                    }
                    var (result, error) = Outcome(() => agent.Run(opts), what);
                    Exception thrownInTool;
                    switch (agent.Id)
                    {
                        case "result":
                        case "validator":
                            if (error != null) { Assert.IsFalse(expect.MustAccept, what + ": refused: " + Hostile.Safe(error.ToString(), 2000)); Refusal(error, what); break; }
                            Assert.IsFalse(expect.MustRefuse, what + ": accepted");
                            Assert.AreEqual("completed", result.Status, what);
                            if (expect.MustAccept) Assert.AreEqual(Hostile.Safe(expect.Canonical), Hostile.Safe(Expectation.Canon(received)), what);
                            break;
                        case "progress":
                            if (error != null) { Assert.IsFalse(expect.MustAccept, what + ": refused: " + Hostile.Safe(error.ToString(), 2000)); Refusal(error, what); break; }
                            Assert.AreEqual("completed", result.Status, what);
                            thrownInTool = thrown.Value;
                            if (thrownInTool != null)
                            {
                                Assert.IsFalse(expect.MustAccept, what + ": refused: " + Hostile.Safe(thrownInTool.ToString(), 2000));
                                Refusal(thrownInTool, what, typeof(ArgumentException));
                            }
                            else
                            {
                                Assert.IsFalse(expect.MustRefuse, what + ": accepted");
                                lock (events)
                                {
                                    Assert.AreEqual(1, events.Count, what);
                                    if (expect.MustAccept) Assert.AreEqual(Hostile.Safe(expect.Canonical), Hostile.Safe(Expectation.Canon(events[0])), what);
                                }
                            }
                            break;
                        case "context":
                            if (error != null) { Assert.IsFalse(expect.MustAccept, what + ": refused: " + Hostile.Safe(error.ToString(), 2000)); Refusal(error, what); break; }
                            Assert.AreEqual("completed", result.Status, what);
                            thrownInTool = thrown.Value;
                            if (thrownInTool != null)
                            {
                                Assert.IsFalse(expect.MustAccept, what + ": refused: " + Hostile.Safe(thrownInTool.ToString(), 2000));
                                Refusal(thrownInTool, what, typeof(ArgumentException));
                            }
                            else
                            {
                                Assert.IsFalse(expect.MustRefuse, what + ": accepted");
                                if (expect.MustAccept) Assert.AreEqual(Hostile.Safe(expect.Canonical), Hostile.Safe(Expectation.Canon(client.Requests[1].Context)), what);
                            }
                            break;
                        case "review":
                            if (error != null) { Assert.IsFalse(expect.MustAccept, what + ": refused: " + Hostile.Safe(error.ToString(), 2000)); Refusal(error, what); break; }
                            Assert.IsFalse(expect.MustRefuse, what + ": accepted");
                            Assert.AreEqual("waiting_for_human", result.Status, what);
                            if (expect.MustAccept) Assert.AreEqual(Hostile.Safe(expect.Canonical), Hostile.Safe(Expectation.Canon(result.Run.Pause.Payload)), what);
                            break;
                        case "called":
                            if (error != null) { Assert.IsFalse(expect.MustAccept, what + ": refused: " + Hostile.Safe(error.ToString(), 2000)); Refusal(error, what); break; }
                            Assert.IsFalse(expect.MustRefuse, what + ": accepted");
                            Assert.AreEqual("completed", result.Status, what);
                            if (expect.MustAccept) Assert.AreEqual(Hostile.Safe(expect.Canonical), Hostile.Safe(Expectation.Canon(received)), what);
                            break;
                        case "model":
                            if (error != null) { Refusal(error, what); break; }
                            Assert.IsFalse(expect.MustRefuse, what + ": accepted");
                            Assert.AreEqual("completed", result.Status, what);
                            break;
                        case "input":
                            if (error != null) { Assert.IsFalse(expect.MustAccept, what + ": refused: " + Hostile.Safe(error.ToString(), 2000)); Refusal(error, what); break; }
                            Assert.IsFalse(expect.MustRefuse, what + ": accepted");
                            Assert.AreEqual("completed", result.Status, what);
                            if (expect.MustAccept)
                            {
                                Assert.AreEqual(Hostile.Safe(expect.Canonical), Hostile.Safe(Expectation.Canon(client.Requests[0].Context)), what);
                                Assert.AreEqual(Hostile.Safe(expect.Canonical), Hostile.Safe(Expectation.Canon(result.Run.Input)), what);
                            }
                            break;
                    }
                }
            }
            finally { foreach (var a in agents) a.Dispose(); }
            Console.WriteLine("fuzz values: seed " + seed + ", " + runs + " inputs (" + string.Join(", ", agents.Select((a, k) => a.Id + " " + counts[k])) + ") in " + sw.Elapsed.TotalSeconds.ToString("0.0", CultureInfo.InvariantCulture) + " s");
        }

        static readonly string[] Tokens =
        {
            "\"", "{", "}", "[", "]", ",", ":", "null", "true", "-1", "0", "1e999", "99999999999999999999", "\"\ud800\"",
            "\\u0000", "\\ud800", "\"waiting_for_human\"", "\"completed\"", "\"c1\"", "\"c2\"", "\"manual\"", "\"approval\"", "{\"a\":[]}",
        };

        static readonly string[][] Swaps =
        {
            new[] { "\"c1\"", "\"c2\"" }, new[] { "\"approval\"", "\"manual\"" }, new[] { "\"waiting_for_human\"", "\"running\"" },
            new[] { "\"waiting_for_human\"", "\"completed\"" }, new[] { "\"version\":1", "\"version\":2" }, new[] { "\"stepCount\":1", "\"stepCount\":99" },
            new[] { "\"deploy\"", "\"nope\"" }, new[] { "\"tool_approval\"", "\"human_review\"" }, new[] { "\"role\":\"assistant\"", "\"role\":\"tool\"" },
        };

        static string Mutate(Random r, string s)
        {
            int ops = r.Next(1, 4);
            for (int k = 0; k < ops && s.Length > 0; k++)
            {
                int at = r.Next(s.Length);
                switch (r.Next(7))
                {
                    case 0: s = s.Remove(at, Math.Min(s.Length - at, r.Next(1, 9))); break;
                    case 1: s = s.Insert(at, Tokens[r.Next(Tokens.Length)]); break;
                    case 2: s = s.Substring(0, at) + (char)r.Next(0x20, 0x7F) + s.Substring(at + 1); break;
                    case 3: { int n = Math.Min(s.Length - at, r.Next(1, 40)); s = s.Insert(at, s.Substring(at, n)); break; }
                    case 4: s = s.Substring(0, at); break;
                    case 5: s = s.Substring(0, at) + (char)r.Next(0xD800, 0xE000) + s.Substring(at + 1); break;
                    default:
                        {
                            var sw = Swaps[r.Next(Swaps.Length)];
                            int i = s.IndexOf(sw[0], StringComparison.Ordinal);
                            if (i >= 0) s = s.Substring(0, i) + sw[1] + s.Substring(i + sw[0].Length);
                            break;
                        }
                }
            }
            return s;
        }

        [Test]
        public void MutatedStates()
        {
            int seed = Seed, runs = Runs;
            var r = new Random(seed ^ 0x5eed);
            var sw = Stopwatch.StartNew();
            var tool = new Tool("deploy", (i, rt) => Task.FromResult<object>("deployed")) { RequireApproval = true };
            int refused = 0, ran = 0, failedRuns = 0;
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "fz", Tools = new[] { tool } }))
            {
                var paused = agent.Run(new RunOptions("deploy", new FuzzClient { First = _ => new ModelResponse(null, new[] { new ModelToolCall("c1", "deploy", "{}") }) })).Result;
                Assert.AreEqual("waiting_for_human", paused.Status);
                var original = paused.ToJson();
                for (int i = 0; i < runs; i++)
                {
                    var mutated = Mutate(r, original);
                    string what = "seed " + seed + ", state " + i + ": " + Hostile.Safe(mutated, 400);
                    var error = Outcome(() => agent.ContinueRun(new ContinueOptions
                    {
                        StateJson = mutated, Client = new FuzzClient(), Approvals = new ToolDecision[] { "c1" },
                    }), what).Error;
                    if (error == null) { ran++; continue; }
                    Assert.IsInstanceOf<AgentException>(error, what);
                    var ae = (AgentException)error;
                    Assert.IsTrue(Documented.Contains(ae.Code), what + ": undocumented code " + ae.Code + ": " + Hostile.Safe(ae.Message));
                    if (ae.State != null) { failedRuns++; continue; } // it ran, and failed: a result
                    Assert.That(ae.Code, Is.EqualTo(ErrorCodes.StateInvalid).Or.EqualTo(ErrorCodes.ContinueInvalid), what + ": " + Hostile.Safe(ae.Message));
                    refused++;
                    // Nothing ran: the original state still continues.
                    var (again, againError) = Outcome(() => agent.ContinueRun(new ContinueOptions
                    {
                        StateJson = original, Client = new FuzzClient(), Approvals = new ToolDecision[] { "c1" },
                    }), what + " (the original, after the refusal)");
                    Assert.IsNull(againError, what + ": the original no longer continues: " + Hostile.Safe(againError?.ToString()));
                    Assert.AreEqual("completed", again.Status, what);
                }
            }
            Console.WriteLine("fuzz states: seed " + seed + ", " + runs + " mutations (" + refused + " refused, " + ran + " ran, " + failedRuns + " ran and failed) in " + sw.Elapsed.TotalSeconds.ToString("0.0", CultureInfo.InvariantCulture) + " s");
        }
    }
}
