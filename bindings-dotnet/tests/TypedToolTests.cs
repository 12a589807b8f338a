using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using PhaseoAgentSdk.Tests.Typed;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>Tools from .NET types (docs/behaviour.md §20).</summary>
    [TestFixture]
    public class TypedToolTests
    {
        const string RefundArgs = "{\"order_id\":\"A-17\",\"amount\":25,\"reason\":\"damaged\"," +
            "\"lines\":[{\"sku\":\"MUG-1\",\"quantity\":2},{\"sku\":\"CUP-9\",\"quantity\":1}],\"customer\":{\"email\":\"ana@example.com\"}}";

        static Agent Agent(params Tool[] tools) => AgentSdk.CreateAgent(new AgentDefinition { Id = "desk", Tools = tools });

        static string Fixture(string name)
        {
            var repo = Environment.GetEnvironmentVariable("PHASEO_REPO");
            Assert.IsNotNull(repo, "PHASEO_REPO is not set (make csharp-tests sets it)");
            return File.ReadAllText(Path.Combine(repo, "tests", "typed-tools", name));
        }

        /// <summary>JSON text with every object's keys sorted, to compare schemas.</summary>
        static string Canonical(object value) => Json.Write(Sorted(value is string s ? Json.Parse(s) : Json.Parse(Json.Write(value))));

        static object Sorted(object v)
        {
            if (v is Dictionary<string, object> m)
            {
                var o = new Dictionary<string, object>();
                foreach (var k in m.Keys.OrderBy(k => k, StringComparer.Ordinal)) o[k] = Sorted(m[k]);
                return o;
            }
            if (v is List<object> l) return l.Select(Sorted).ToList();
            return v;
        }

        static string ToolError(Message m) => (string)((Dictionary<string, object>)Json.Parse(m.Content))["error"];

        [Test]
        public void GeneratedSchemaMatchesTheCheckedInFile()
        {
            Assert.AreEqual(Canonical(Fixture("refund_schema.json")), Canonical(ToolSchema.For<Refund>()));
            Assert.AreEqual(Canonical(Fixture("category_schema.json")), Canonical(ToolSchema.For<Category>()));
        }

        [Test]
        public async Task ModelGetsTheSchemaAndExecuteGetsTheDecodedTypeAfterApproval()
        {
            var executions = new List<Refund>();
            using (var agent = Agent(RefundTool.Create(executions)))
            {
                var client = new RecordingClient(Calls("c1", "refund", RefundArgs), Text("Refunded."));
                var paused = await agent.Run(new RunOptions("refund A-17", client));
                Assert.AreEqual("waiting_for_human", paused.Status);
                Assert.AreEqual(0, executions.Count);
                var sent = client.Requests[0].Tools.Single(t => t.Id == "refund");
                Assert.AreEqual(Canonical(Fixture("refund_schema.json")), Canonical(sent.Parameters));
                Assert.IsFalse(sent.Strict);

                var done = await agent.ContinueRun(new ContinueOptions(RunResult.FromJson(paused.ToJson()), client)
                {
                    Approvals = new ToolDecision[] { "c1" },
                });
                Assert.AreEqual("completed", done.Status);
                var refund = executions.Single();
                Assert.AreEqual("A-17", refund.OrderId);
                Assert.AreEqual(25.0, refund.Amount);
                Assert.AreEqual(RefundReason.Damaged, refund.Reason);
                Assert.AreEqual(new[] { "MUG-1", "CUP-9" }, refund.Lines.Select(l => l.Sku).ToArray());
                Assert.AreEqual("ana@example.com", refund.Customer.Email);
                Assert.IsFalse(refund.Customer.Vip);
                Assert.IsNull(refund.Note);
                var content = done.Messages.Single(m => m.Role == "tool").Content;
                Assert.AreEqual("{\"lines\":3,\"order_id\":\"A-17\",\"refunded\":25}", Canonical(content));
            }
        }

        [Test]
        public async Task WrongTypesGoBackToTheModelWhichRetries()
        {
            var executions = new List<Refund>();
            var tool = Tool.FromType<Refund>("refund", (r, rt) => { lock (executions) executions.Add(r); return Task.FromResult<object>("ok"); },
                "Refunds");
            tool.OnError = "return-to-model";
            using (var agent = Agent(tool))
            {
                var client = new RecordingClient(
                    Calls("c1", "refund", RefundArgs.Replace("\"quantity\":2", "\"quantity\":\"two\"")),
                    Calls("c2", "refund", RefundArgs.Replace("damaged", "broken")),
                    Calls("c3", "refund", RefundArgs),
                    Text("Refunded."));
                var done = await agent.Run(new RunOptions("refund", client));
                Assert.AreEqual("completed", done.Status);
                var first = client.Requests[1].Messages.Where(m => m.Role == "tool").Select(ToolError).ToList();
                Assert.AreEqual(new[] { "Invalid tool input: /lines/0/quantity: \"two\" is not of type \"integer\"" }, first.ToArray());
                StringAssert.StartsWith("Invalid tool input: /reason: ", ToolError(client.Requests[2].Messages.Last(m => m.Role == "tool")));
                Assert.AreEqual(1, executions.Count, "only the valid call ran");
            }
        }

        [Test]
        public async Task ValueOutOfRangeForTheHostTypeIsAToolInputError()
        {
            var tool = Tool.FromType<Refund>("refund", (r, rt) => Task.FromResult<object>("ok"), "Refunds");
            tool.OnError = "return-to-model";
            using (var agent = Agent(tool))
            {
                var client = new RecordingClient(Calls("c1", "refund", RefundArgs.Replace("\"quantity\":2", "\"quantity\":9999999999")), Text("ok"));
                var done = await agent.Run(new RunOptions("refund", client));
                Assert.AreEqual("Invalid tool input: /lines/0/quantity: 9999999999 is out of range for Int32",
                    ToolError(done.Messages.Single(m => m.Role == "tool")));
            }
        }

        [Test]
        public void DecodeNamesThePointerOfWhatDoesNotFit()
        {
            var e = Assert.Throws<ArgumentException>(() => ToolSchema.Decode<Refund>(Json.Parse("{\"order_id\":1}")));
            Assert.AreEqual("/order_id: expected a string, got an integer", e.Message);
            e = Assert.Throws<ArgumentException>(() => ToolSchema.Decode<Refund>(Json.Parse("{\"amount\":1}")));
            Assert.AreEqual("/: missing required property \"order_id\"", e.Message);
            e = Assert.Throws<ArgumentException>(() => ToolSchema.Decode<Refund>(Json.Parse(RefundArgs.Replace("damaged", "bored"))));
            Assert.AreEqual("/reason: \"bored\" is not one of [\"damaged\",\"late\",\"other\"]", e.Message);
            e = Assert.Throws<ArgumentException>(() => ToolSchema.Decode<Category>(Json.Parse("{\"name\":\"a\",\"children\":[{\"name\":\"b\",\"children\":[7]}]}")));
            Assert.AreEqual("/children/0/children/0: expected an object, got an integer", e.Message);
        }

        [Test]
        public async Task StrictAsksTheCoreForTheStrictForm()
        {
            var executions = new List<Refund>();
            var tool = Tool.FromType<Refund>("refund", (r, rt) => { lock (executions) executions.Add(r); return Task.FromResult<object>("ok"); },
                "Refunds", strict: true);
            Assert.AreEqual(false, tool.Parameters["additionalProperties"]);
            Assert.AreEqual(new object[] { "order_id", "amount", "reason", "lines", "customer", "note" },
                ((List<object>)tool.Parameters["required"]).ToArray());
            using (var agent = Agent(tool))
            {
                var args = "{\"order_id\":\"A-1\",\"amount\":1.5,\"reason\":\"late\",\"lines\":null,\"customer\":{\"email\":\"b@x\",\"vip\":null},\"note\":null}";
                var client = new RecordingClient(Calls("c1", "refund", args), Text("ok"));
                var done = await agent.Run(new RunOptions("go", client));
                Assert.AreEqual("completed", done.Status);
                Assert.IsTrue(client.Requests[0].Tools[0].Strict);
                Assert.IsNull(executions[0].Lines);
                Assert.IsFalse(executions[0].Customer.Vip);
                Assert.AreEqual(1.5, executions[0].Amount);
            }
        }

        [Test]
        public async Task RecursiveTypeIsReferencedAndDecodedAtEveryDepth()
        {
            var seen = new List<Category>();
            var tool = Tool.FromType<Category>("file", (c, rt) => { lock (seen) seen.Add(c); return Task.FromResult<object>(c.Children.Select(x => x.Name)); },
                "Files a tree");
            tool.OnError = "return-to-model";
            using (var agent = Agent(tool))
            {
                var client = new RecordingClient(Calls(
                    "c1", "file", "{\"name\":\"home\",\"children\":[{\"name\":\"kitchen\",\"children\":[{\"name\":\"mugs\"}]},{\"name\":\"garden\"}]}",
                    "c2", "file", "{\"name\":\"home\",\"children\":[{\"name\":\"kitchen\",\"children\":[{\"name\":7}]}]}"), Text("ok"));
                var done = await agent.Run(new RunOptions("go", client));
                Assert.AreEqual("completed", done.Status);
                Assert.AreEqual("mugs", seen.Single().Children[0].Children[0].Name);
                var tools = done.Messages.Where(m => m.Role == "tool").ToList();
                Assert.AreEqual("[\"kitchen\",\"garden\"]", tools[0].Content);
                StringAssert.StartsWith("Invalid tool input: /children/0/children/0/name: ", ToolError(tools[1]));
            }
        }

        [Test]
        public void DeclaredResultTypeChecksTheResult()
        {
            var tool = Tool.FromType<Refund, Receipt>("refund", (r, rt) => Task.FromResult(new Receipt { OrderId = null }), "Refunds");
            using (var agent = Agent(tool))
            {
                var client = new RecordingClient(Calls("c1", "refund", RefundArgs), Text("ok"));
                var e = Assert.Throws<AgentException>(() => agent.Run(new RunOptions("go", client)).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.ToolOutputInvalid, e.Code);
                StringAssert.Contains("order_id", e.Message);
            }
        }

        [Test]
        public async Task TypedPlainAndManualToolsMix()
        {
            var plain = new Tool("deploy", (input, rt) => Task.FromResult<object>(O("deployed", ((Dictionary<string, object>)input)["env"])),
                "Deploys", Schema("env"));
            var typed = Tool.FromType<Category>("file", (c, rt) => Task.FromResult<object>(c.Name.ToUpperInvariant()), "Files");
            var manual = Tool.FromType<Category>("ask", null, "Asks a person");
            using (var agent = Agent(plain, typed, manual))
            {
                var client = new RecordingClient(Calls("a", "deploy", "{\"env\":\"prod\"}", "b", "file", "{\"name\":\"mugs\"}", "c", "ask", "{\"name\":\"cups\"}"),
                    Text("ok"));
                var paused = await agent.Run(new RunOptions("go", client));
                Assert.AreEqual("waiting_for_human", paused.Status);
                Assert.AreEqual(new[] { "deploy", "file", "ask" }, client.Requests[0].Tools.Select(t => t.Id).ToArray());
                var done = await agent.ContinueRun(new ContinueOptions(paused, client) { ToolOutputs = new[] { new ToolOutput("c", "noted") } });
                var contents = done.Messages.Where(m => m.Role == "tool").Select(m => m.Content).ToArray();
                Assert.AreEqual(new[] { "{\"deployed\":\"prod\"}", "MUGS", "noted" }, contents);
            }
        }

        sealed class WithDate { public DateTime When { get; set; } }
        sealed class NoDefaultConstructor { public NoDefaultConstructor(int x) { X = x; } public int X { get; set; } }

        [Test]
        public void DefinitionErrorsAreClear()
        {
            var e = Assert.Throws<AgentException>(() => ToolSchema.For<WithDate>());
            Assert.AreEqual(ErrorCodes.DefinitionInvalid, e.Code);
            StringAssert.Contains("WithDate.When: the type DateTime has no JSON Schema form", e.Message);
            e = Assert.Throws<AgentException>(() => ToolSchema.For<string>());
            StringAssert.Contains("must be a class or struct with properties, got String", e.Message);
            e = Assert.Throws<AgentException>(() => ToolSchema.Decode<NoDefaultConstructor>(O("X", 1L)));
            StringAssert.Contains("NoDefaultConstructor needs a public parameterless constructor", e.Message);
        }
    }
}
