using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>Tools (and an agent) served over MCP, called by the official MCP Python
    /// client (PyPI <c>mcp</c>, in the dev venv) over stdio and Streamable HTTP. A missing
    /// venv or package fails these tests.</summary>
    [TestFixture]
    public class ServeTests
    {
        static string Root => Path.GetFullPath(Path.Combine(Path.GetDirectoryName(typeof(ServeTests).Assembly.Location), "..", ".."));

        /// <summary>The served tools; <paramref name="deleted"/> counts the runs of delete.</summary>
        public static Tool[] ServedTools(int[] deleted) => new[]
        {
            new Tool("add", (input, rt) =>
            {
                var m = (IDictionary<string, object>)input;
                return Task.FromResult<object>(O("sum", Convert.ToDouble(m["a"]) + Convert.ToDouble(m["b"])));
            }, Description: "Adds two numbers", Parameters: O("type", "object", "required", L("a", "b"),
                "properties", O("a", O("type", "number"), "b", O("type", "number"))))
            {
                Annotations = O("readOnlyHint", true, "title", "Add numbers"),
                OutputSchema = AgentSdk.JsonSchema(O("type", "object", "properties", O("sum", O("type", "number")))),
            },
            new Tool("slow", async (input, rt) =>
            {
                await rt.EmitProgress("started");
                try { await Task.Delay(TimeSpan.FromMinutes(10), rt.CancellationToken); }
                catch (TaskCanceledException)
                {
                    // What the cancellation tests look for: the tool saw its call cancelled.
                    var mark = Environment.GetEnvironmentVariable("CANCEL_MARK");
                    if (!string.IsNullOrEmpty(mark)) File.WriteAllText(mark, "cancelled");
                    throw;
                }
                return "finished";
            }, Description: "Waits until cancelled"),
            new Tool("steps", async (input, rt) =>
            {
                await rt.EmitProgress(O("progress", 1, "total", 2, "message", "half"));
                await rt.EmitProgress("almost");
                return 2;
            }, Description: "Reports progress"),
            new Tool("delete", (input, rt) =>
            {
                Interlocked.Increment(ref deleted[0]);
                return Task.FromResult<object>("deleted " + ((IDictionary<string, object>)input)["path"]);
            }, Description: "Deletes a file") { RequireApproval = true },
            new Tool("sleepy", async (input, rt) =>
            {
                try { await Task.Delay(5000, rt.CancellationToken); } catch (TaskCanceledException) { }
                return "late";
            }, Description: "Too slow") { Timeout = TimeSpan.FromMilliseconds(200) },
        };

        /// <summary>Serves the tools on this process's stdio until the client closes it (the
        /// test worker's <c>serve-stdio</c> mode).</summary>
        public static int ServeStdio()
        {
            using (var server = McpServer.Serve(new ServeMcpOptions { Name = "cs-tools", Tools = ServedTools(new int[1]) }))
                server.WaitAsync().Wait();
            return 0;
        }

        /// <summary>Serves the tools over Streamable HTTP (the test worker's <c>serve-http</c>
        /// mode): the endpoint URL is the first line of stdout; the server stops when stdin
        /// closes.</summary>
        public static int ServeHttp()
        {
            using (var server = McpServer.Serve(new ServeMcpOptions { Name = "cs-tools", Tools = ServedTools(new int[1]), Http = new McpHttpOptions() }))
            {
                Console.WriteLine(server.Url);
                Console.Out.Flush();
                Console.In.ReadToEnd();
            }
            return 0;
        }

        static IDictionary<string, object> Drive(string approve, params string[] target)
        {
            var python = Path.Combine(Root, ".venvs/py/bin/python");
            Assert.IsTrue(File.Exists(python), "the Python venv with the mcp package is missing (make python mcp-servers): " + python);
            var args = new[] { Path.Combine(Root, "tests/mcp/served_client.py"), "tools", approve }.Concat(target);
            var start = new ProcessStartInfo(python, string.Join(" ", args.Select(a => "\"" + a + "\"")))
            {
                UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true,
            };
            using (var p = Process.Start(start))
            {
                var errors = p.StandardError.ReadToEndAsync();
                var output = p.StandardOutput.ReadToEnd();
                Assert.IsTrue(p.WaitForExit(180000), "the MCP client did not finish");
                Assert.AreEqual(0, p.ExitCode, "the MCP client failed: " + errors.Result);
                var last = output.Trim().Split('\n').Last();
                return (IDictionary<string, object>)Json.Parse(last);
            }
        }

        static object At(object v, params string[] path)
        {
            foreach (var p in path) v = v is IDictionary<string, object> d && d.TryGetValue(p, out var x) ? x : null;
            return v;
        }

        static string[] Stdio()
        {
            var worker = Path.Combine(Path.GetDirectoryName(typeof(ServeTests).Assembly.Location), "Phaseo.AgentSdk.TestWorker.exe");
            return new[] { "--", "mono", worker, "serve-stdio" };
        }

        static void CheckCalls(IDictionary<string, object> seen, string where)
        {
            var tools = (IDictionary<string, object>)seen["tools"];
            CollectionAssert.AreEquivalent(new[] { "add", "slow", "steps", "delete", "sleepy" }, tools.Keys, where);
            CollectionAssert.AreEqual(new object[] { "a", "b" }, (IEnumerable<object>)At(tools, "add", "inputSchema", "required"), where);
            Assert.AreEqual(true, At(tools, "add", "annotations", "readOnlyHint"), where);
            Assert.AreEqual("Add numbers", At(tools, "add", "title"), where);
            Assert.AreEqual(true, At(tools, "delete", "annotations", "destructiveHint"), where);
            Assert.AreEqual("number", At(tools, "add", "outputSchema", "properties", "sum", "type"), where);
            Assert.AreEqual(false, At(seen, "add", "isError"), where);
            Assert.AreEqual(5.0, Convert.ToDouble(At(seen, "add", "structured", "sum")), where);
            Assert.AreEqual(true, At(seen, "invalid", "isError"), where);
            StringAssert.StartsWith("Invalid tool input", (string)At(seen, "invalid", "text"), where);
            Assert.AreEqual("Tool sleepy timed out after 200ms", At(seen, "sleepy", "text"), where);
            Assert.AreEqual("2", At(seen, "steps", "text"), where);
        }

        [Test]
        public void ServedToolsAnswerThePythonClientOverHttpAndStdio()
        {
            var deleted = new int[1];
            using (var server = McpServer.Serve(new ServeMcpOptions { Name = "cs-tools", Tools = ServedTools(deleted), Http = new McpHttpOptions() }))
            {
                StringAssert.StartsWith("http://127.0.0.1:", server.Url);
                foreach (var target in new[] { Stdio(), new[] { "--url", server.Url } })
                {
                    var seen = Drive("none", target);
                    CheckCalls(seen, target[0]);
                    Assert.AreEqual(true, At(seen, "delete", "isError"), target[0]);
                    Assert.AreEqual("Tool delete requires approval and this client cannot be asked", At(seen, "delete", "text"), target[0]);
                }
            }
            Assert.AreEqual(0, deleted[0]);
        }

        [Test]
        public void ApprovalIsAskedThroughElicitation()
        {
            var deleted = new int[1];
            using (var server = McpServer.Serve(new ServeMcpOptions { Name = "cs-tools", Tools = ServedTools(deleted), Http = new McpHttpOptions() }))
            {
                foreach (var target in new[] { Stdio(), new[] { "--url", server.Url } })
                {
                    var yes = Drive("yes", target);
                    Assert.AreEqual(false, At(yes, "delete", "isError"), target[0]);
                    Assert.AreEqual("deleted /x", At(yes, "delete", "text"), target[0]);
                    StringAssert.Contains("{\"path\":\"/x\"}", string.Join(" ", (IEnumerable<object>)yes["asked"]));
                    var no = Drive("no", target);
                    Assert.AreEqual(true, At(no, "delete", "isError"), target[0]);
                    Assert.AreEqual("Tool call rejected by human", At(no, "delete", "text"), target[0]);
                }
            }
            Assert.AreEqual(1, deleted[0], "approved once over HTTP (the stdio server counts in its own process)");
        }

        [Test]
        public void BadOptionsAreRefusedAndCancellationCloses()
        {
            var e = Assert.Throws<AgentException>(() => McpServer.Serve(new ServeMcpOptions { Name = "x", Tools = new[] { new Tool("ask", null, Description: "Asks") } }));
            Assert.AreEqual(ErrorCodes.DefinitionInvalid, e.Code);
            Assert.AreEqual("Tool ask has no execute and cannot be served over MCP", e.Message);
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "researcher" }))
            {
                e = Assert.Throws<AgentException>(() => McpServer.Serve(new ServeMcpOptions { Name = "x", Agent = agent }));
                StringAssert.Contains("needs a model client", e.Message);
            }
            var cts = new CancellationTokenSource();
            var server = McpServer.ServeMcpAsync(new ServeMcpOptions { Name = "x", Http = new McpHttpOptions(),
                Tools = new[] { new Tool("hi", (i, rt) => Task.FromResult<object>("hi")) } }, cts.Token).Result;
            Assert.IsFalse(server.WaitAsync().Wait(50));
            cts.Cancel();
            Assert.IsTrue(server.WaitAsync().Wait(60000));
            Assert.IsTrue(server.IsClosed);
            server.Dispose();
        }
    }
}
