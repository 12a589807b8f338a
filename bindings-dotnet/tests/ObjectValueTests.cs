using System;
using System.Collections;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    public enum Priority { Low, High }

    public class OrderLine
    {
        public string Sku { get; set; }
        public int Quantity;
    }

    public class Order
    {
        public string Id { get; set; }
        public Priority Priority { get; set; }
        public decimal Total { get; set; }
        public List<OrderLine> Lines { get; set; } = new List<OrderLine>();
        public Dictionary<string, int> Counts { get; set; }
        public string Note;
        public static string Ignored => "static";
        string Hidden { get; set; } = "private";
        public string WriteOnly { set { Hidden = value; } }
    }

    /// <summary>A node that may point at itself (a cycle) or form a long chain.</summary>
    public class Node
    {
        public string Name { get; set; }
        public Node Next { get; set; }
    }

    /// <summary>A read-only dictionary that is not an <see cref="IDictionary"/>.</summary>
    sealed class Scores : IReadOnlyDictionary<string, int>
    {
        readonly Dictionary<string, int> inner = new Dictionary<string, int> { { "a", 1 }, { "b", 2 } };
        public int this[string key] => inner[key];
        public IEnumerable<string> Keys => inner.Keys;
        public IEnumerable<int> Values => inner.Values;
        public int Count => inner.Count;
        public bool ContainsKey(string key) => inner.ContainsKey(key);
        public bool TryGetValue(string key, out int value) => inner.TryGetValue(key, out value);
        public IEnumerator<KeyValuePair<string, int>> GetEnumerator() => inner.GetEnumerator();
        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }

    /// <summary>Objects of any type as values (their public properties, then fields), enums
    /// by name, cycles and excessive depth refused with a clear error; a negative step limit
    /// refused up front; a timed-out call's error is also a TimeoutException.</summary>
    [TestFixture]
    public class ObjectValueTests
    {
        static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

        static Node Chain(int n)
        {
            Node head = null;
            for (int i = 0; i < n; i++) head = new Node { Name = "n" + i, Next = head };
            return head;
        }

        [Test]
        public void ObjectsAreWrittenByTheirPublicPropertiesThenFields()
        {
            var order = new Order
            {
                Id = "o1", Priority = Priority.High, Total = 12.50m,
                Lines = { new OrderLine { Sku = "s1", Quantity = 2 } },
                Counts = new Dictionary<string, int> { { "x", 1 } },
                Note = "n",
            };
            Assert.AreEqual(
                "{\"Id\":\"o1\",\"Priority\":\"High\",\"Total\":12.50,\"Lines\":[{\"Sku\":\"s1\",\"Quantity\":2}],\"Counts\":{\"x\":1},\"Note\":\"n\"}",
                Json.Write(order));
            Assert.AreEqual("{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}", Json.Write(new { type = "string", @enum = new[] { "a", "b" } }));
            Assert.AreEqual("{\"a\":1,\"b\":2}", Json.Write(new Scores()));
            Assert.AreEqual("[\"Low\",[\"High\"]]", Json.Write(new object[] { Priority.Low, new List<Priority> { Priority.High } }));
            Assert.AreEqual("{}", Json.Write(new object()));
            Assert.AreEqual("\"2024-05-06T07:08:09.0000000Z\"", Json.Write(new DateTime(2024, 5, 6, 7, 8, 9, DateTimeKind.Utc)));
            Assert.AreEqual("\"00000000-0000-0000-0000-000000000000\"", Json.Write(Guid.Empty));
            // Decimals: as written, unless whole and past 64 bits (then the float they round to).
            Assert.AreEqual("[12.50,-3,18446744073709551615]", Json.Write(new object[] { 12.50m, -3m, (decimal)ulong.MaxValue }));
            var max = Json.Write(decimal.MaxValue);
            StringAssert.Contains("E+28", max);
            Assert.AreEqual((double)decimal.MaxValue, double.Parse(max, System.Globalization.CultureInfo.InvariantCulture));
        }

        [Test]
        public void CyclesAndExcessiveDepthAreClearErrorsNotAStackOverflow()
        {
            var loop = new Node { Name = "a" };
            loop.Next = new Node { Name = "b", Next = loop };
            StringAssert.Contains("cycle", Assert.Throws<ArgumentException>(() => Json.Write(loop)).Message);
            var dict = new Dictionary<string, object>();
            dict["self"] = new[] { dict };
            StringAssert.Contains("cycle", Assert.Throws<ArgumentException>(() => Json.Write(dict)).Message);
            // The same object twice, side by side, is no cycle.
            var shared = new OrderLine { Sku = "s" };
            Assert.AreEqual("[{\"Sku\":\"s\",\"Quantity\":0},{\"Sku\":\"s\",\"Quantity\":0}]", Json.Write(new[] { shared, shared }));

            // The writer leaves room for a document around a value (a state holds its values a
            // few levels down); the SDK checks a value's own 64 levels where it enters.
            Assert.DoesNotThrow(() => Json.Write(Chain(104)));
            StringAssert.Contains("nested more than 64 levels", Assert.Throws<ArgumentException>(() => Json.Write(Chain(105))).Message);
            StringAssert.Contains("nested more than 64 levels", Assert.Throws<ArgumentException>(() => Json.Write(Chain(100000))).Message);
            Assert.Throws<ArgumentException>(() => Json.Write(new Func<int>(() => 1)));
            Assert.Throws<ArgumentException>(() => Json.Write(typeof(string)));
            Assert.Throws<ArgumentException>(() => Json.Write(Task.FromResult(1)));
        }

        /// <summary>An anonymous-type schema inside Parameters, a POCO result, progress and
        /// context as anonymous objects: all reach the run as JSON.</summary>
        [Test]
        public async Task ObjectsWorkInParametersResultsProgressAndContext()
        {
            var progress = new List<object>();
            var tool = new Tool("lookup", async (input, rt) =>
            {
                await rt.EmitProgress(new { stage = "indexing" });
                rt.SetContext(new { user = "ann", priority = Priority.Low });
                return new Order { Id = "o1", Priority = Priority.High, Total = 3m };
            })
            {
                Parameters = new Dictionary<string, object>
                {
                    { "type", "object" },
                    { "properties", new { city = new { type = "string" } } },
                    { "required", new[] { "city" } },
                },
            };
            var client = new RecordingClient(Calls("c1", "lookup", "{\"city\":\"Oslo\"}"), Text("done"));
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { tool } }))
            {
                var r = await agent.Run(new RunOptions("go", client)
                {
                    Context = new { user = "bob" },
                    OnEvent = e => { if (e.Type == "tool.preliminary_result") lock (progress) progress.Add(e.Details["result"]); },
                });
                Assert.AreEqual("completed", r.Status);
                var schema = (Dictionary<string, object>)client.Requests[0].Tools[0].Parameters;
                Assert.AreEqual("{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}", Json.Write(schema));
                Assert.AreEqual("{\"user\":\"bob\"}", Json.Write(client.Requests[0].Context));
                Assert.AreEqual("{\"user\":\"ann\",\"priority\":\"Low\"}", Json.Write(client.Requests[1].Context));
                var toolMessage = r.Messages.First(m => m.Role == "tool");
                StringAssert.Contains("\"Priority\":\"High\"", toolMessage.Content);
                lock (progress) Assert.AreEqual("{\"stage\":\"indexing\"}", Json.Write(progress.Single()));
            }
        }

        [Test]
        public void ACyclicResultIsAnInvalidOutputNotACrash()
        {
            var loop = new Node { Name = "a" };
            loop.Next = loop;
            var tool = new Tool("t", (i, rt) => Task.FromResult<object>(loop));
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { tool } }))
            {
                var run = agent.Run(new RunOptions("go", new RecordingClient(Calls("c1", "t", "{}"), Text("done"))));
                Assert.IsTrue(run.ContinueWith(_ => { }).Wait(Bound), "the run did not end");
                var e = run.Exception?.InnerException as AgentException;
                Assert.IsNotNull(e, "expected the run to fail: " + run.Exception);
                Assert.AreEqual(ErrorCodes.ToolOutputInvalid, e.Code);
                StringAssert.Contains("cycle", e.Message);
            }
        }

        [Test]
        public void AResultNestedPast64LevelsIsAnInvalidOutput()
        {
            var tool = new Tool("t", (i, rt) => Task.FromResult<object>(Chain(65)));
            var fine = new Tool("u", (i, rt) => Task.FromResult<object>(Chain(64)));
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { tool, fine } }))
            {
                var ok = agent.Run(new RunOptions("go", new RecordingClient(Calls("c1", "u", "{}"), Text("done"))));
                Assert.IsTrue(ok.ContinueWith(_ => { }).Wait(Bound), "the run did not end");
                Assert.AreEqual("completed", ok.Result.Status);
                var run = agent.Run(new RunOptions("go", new RecordingClient(Calls("c1", "t", "{}"), Text("done"))));
                Assert.IsTrue(run.ContinueWith(_ => { }).Wait(Bound), "the run did not end");
                var e = run.Exception?.InnerException as AgentException;
                Assert.IsNotNull(e, "expected the run to fail: " + run.Exception);
                Assert.AreEqual(ErrorCodes.ToolOutputInvalid, e.Code);
                StringAssert.Contains("nested more than 64 levels", e.Message);
            }
        }

        [Test]
        public void ADeepProgressValueIsRefusedToTheTool()
        {
            // The refused value fails the call (tool_event_invalid) as it is refused, so the
            // run may end before the tool's catch runs: wait for the catch itself.
            var caught = new TaskCompletionSource<Exception>();
            var tool = new Tool("t", async (i, rt) =>
            {
                try { await rt.EmitProgress(Chain(200000)); caught.TrySetResult(null); }
                catch (Exception e) { caught.TrySetResult(e); }
                return "ok";
            });
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { tool } }))
            {
                var run = agent.Run(new RunOptions("go", new RecordingClient(Calls("c1", "t", "{}"), Text("done"))));
                Assert.IsTrue(run.ContinueWith(_ => { }).Wait(Bound), "the run did not end");
                Assert.IsTrue(caught.Task.Wait(Bound), "the tool did not come back from EmitProgress");
                var thrown = caught.Task.Result;
                Assert.IsInstanceOf<ArgumentException>(thrown);
                StringAssert.Contains("nested more than 64 levels", thrown.Message);
                var failed = run.Exception?.InnerException as AgentException;
                Assert.IsNotNull(failed, "the run did not fail");
                Assert.AreEqual("tool_event_invalid", failed.Code);
            }
        }

        static AgentException Refusal(Func<Task> start)
        {
            try
            {
                var t = start();
                Assert.IsTrue(t.ContinueWith(_ => { }).Wait(Bound), "no answer");
                return t.Exception?.InnerException as AgentException;
            }
            catch (AgentException e) { return e; }
        }

        [Test]
        public void ANegativeMaxStepsIsRefusedUpFront()
        {
            var e = Assert.Throws<AgentException>(() => AgentSdk.CreateAgent(new AgentDefinition { Id = "a", MaxSteps = -1 }));
            Assert.AreEqual(ErrorCodes.DefinitionInvalid, e.Code);
            StringAssert.Contains("maxSteps", e.Message);
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a" }))
            {
                var r = Refusal(() => agent.Run(new RunOptions("go", new RecordingClient(Text("hi"))) { MaxSteps = -1 }));
                Assert.IsNotNull(r, "a negative maxSteps was accepted");
                Assert.AreEqual(ErrorCodes.DefinitionInvalid, r.Code);
                StringAssert.Contains("maxSteps", r.Message);
                Assert.IsNull(r.State);
            }
        }

        [Test]
        public void ATimedOutCallIsAlsoATimeoutException()
        {
            var started = new TaskCompletionSource<bool>();
            var tool = new Tool("slow", async (i, rt) =>
            {
                started.TrySetResult(true);
                await Task.Delay(TimeSpan.FromSeconds(30), rt.CancellationToken);
                return "late";
            }, Timeout: TimeSpan.FromMilliseconds(300));
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { tool } }))
            {
                var e = Refusal(() => agent.Run(new RunOptions("go", new RecordingClient(Calls("c1", "slow", "{}")))));
                Assert.IsNotNull(e);
                Assert.AreEqual(ErrorCodes.ToolTimeout, e.Code);
                Assert.IsInstanceOf<TimeoutException>(e.InnerException);
                Assert.AreEqual(e.Message, e.InnerException.Message);
                Assert.IsNotNull(e.State);
            }
        }
    }
}
