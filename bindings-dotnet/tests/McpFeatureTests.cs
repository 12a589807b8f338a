using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    [TestFixture]
    public class McpFeatureTests
    {
        static string Everything()
        {
            var repo = Environment.GetEnvironmentVariable("PHASEO_REPO");
            Assert.IsNotNull(repo, "PHASEO_REPO is not set (make csharp-tests sets it)");
            var bin = Path.Combine(repo, "tests/mcp/node_modules/.bin/mcp-server-everything");
            Assert.IsTrue(File.Exists(bin), "the MCP reference server is not installed: run `make mcp-servers`");
            return bin;
        }

        /// <summary>An MCP server's DeferLoading defers all its tools: only tool_search is
        /// offered until it finds one, which then runs on the server (docs/behaviour.md §17).</summary>
        [Test]
        public async Task DeferredServerToolsLoadThroughToolSearch()
        {
            var server = McpServer.Stdio("everything", Everything(), "stdio");
            server.ToolPrefix = "ev";
            server.AllowTools = new[] { "echo", "get-sum" };
            server.DeferLoading = true;
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "everything", McpServers = new[] { server } }))
            {
                var client = new RecordingClient(
                    Calls("c1", "tool_search", "{\"query\":\"echo\"}"), Calls("c2", "ev_echo", "{\"message\":\"hi\"}"), Text("echoed"));
                var done = await agent.Run(new RunOptions("echo", client));
                Assert.AreEqual("echoed", done.Output);
                Assert.AreEqual("Echo: hi", done.Messages.Single(m => m.ToolCallId == "c2").Content);
                Assert.AreEqual(new[] { "tool_search" }, DeferredToolsTests.Offered(client.Requests[0]));
                Assert.AreEqual(new[] { "tool_search", "ev_echo" }, DeferredToolsTests.Offered(client.Requests[1]));
                Assert.AreEqual(new[] { "ev_echo" }, done.Run.LoadedTools.ToArray());
            }
        }

        static string[] ToolContents(RunResult r) => r.Messages.Where(m => m.Role == "tool").Select(m => m.Content).ToArray();

        /// <summary>Filter sees each listed tool (with annotations) and decides what is
        /// offered; the reference server's elicitation request reaches OnElicitation and its
        /// answer reaches the tool's result; a throwing filter fails the listing.</summary>
        [Test]
        public async Task FilterAndElicitation()
        {
            var seen = new List<McpToolInfo>();
            var asked = new List<ElicitationRequest>();
            var server = McpServer.Stdio("everything", Everything(), "stdio");
            server.Filter = tool =>
            {
                lock (seen) seen.Add(tool);
                return tool.Name == "echo" || tool.Name.Contains("elicitation");
            };
            server.OnElicitation = (req, token) =>
            {
                lock (asked) asked.Add(req);
                return Task.FromResult(new ElicitationResult("accept", new Dictionary<string, object> { { "name", "Ada Lovelace" } }));
            };
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "eli", McpServers = new[] { server } }))
            {
                var client = new RecordingClient(Calls("c1", "trigger-elicitation-request", "{}"), Text("ok"));
                var r = await agent.Run(new RunOptions("go", client));
                Assert.AreEqual("completed", r.Status);
                Assert.AreEqual(new[] { "echo", "trigger-elicitation-request" }, client.Requests[0].Tools.Select(t => t.Id).ToArray());
                Assert.GreaterOrEqual(seen.Count, 3);
                Assert.IsTrue(seen.Any(t => t.Annotations != null), "the filter saw no annotations");
                Assert.AreEqual(1, asked.Count);
                Assert.AreEqual("everything", asked[0].Server);
                Assert.AreEqual("Please provide inputs for the following fields:", asked[0].Message);
                Assert.AreEqual("object", asked[0].RequestedSchema["type"]);
                StringAssert.Contains("Ada Lovelace", ToolContents(r)[0]);
            }
            server.Filter = tool => throw new InvalidOperationException("no listing today");
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "eli2", McpServers = new[] { server } }))
            {
                var e = Assert.Throws<AgentException>(() => agent.Run(new RunOptions("go", new RecordingClient(Text("x")))).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.McpFailed, e.Code);
                StringAssert.Contains("no listing today", e.Message);
            }
        }

        /// <summary>The reference server over Streamable HTTP: its tools are offered with a
        /// prefix and called through the core's HTTP client.</summary>
        [Test]
        public async Task EverythingOverStreamableHttp()
        {
            var probe = new TcpListener(IPAddress.Loopback, 0);
            probe.Start();
            int port = ((IPEndPoint)probe.LocalEndpoint).Port;
            probe.Stop();
            var info = new ProcessStartInfo(Everything(), "streamableHttp")
            {
                UseShellExecute = false, RedirectStandardError = true, RedirectStandardOutput = true, RedirectStandardInput = true,
            };
            info.EnvironmentVariables["PORT"] = port.ToString();
            using (var proc = Process.Start(info))
            {
                try
                {
                    var listening = new TaskCompletionSource<bool>();
                    proc.ErrorDataReceived += (s, e) => { if (e.Data != null && e.Data.Contains("listening on port")) listening.TrySetResult(true); };
                    proc.OutputDataReceived += (s, e) => { if (e.Data != null && e.Data.Contains("listening on port")) listening.TrySetResult(true); };
                    proc.BeginErrorReadLine();
                    proc.BeginOutputReadLine();
                    Assert.IsTrue(await Task.WhenAny(listening.Task, Task.Delay(30000)) == listening.Task, "server-everything did not start listening");
                    var server = McpServer.Http("everything", "http://127.0.0.1:" + port + "/mcp");
                    server.Headers = new Dictionary<string, string> { { "X-Test", "1" } };
                    server.Bearer = "not-checked";
                    server.ToolPrefix = "ev";
                    using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "everything", McpServers = new[] { server } }))
                    {
                        var client = new RecordingClient(Calls("c1", "ev_echo", "{\"message\":\"hi\"}", "c2", "ev_get-sum", "{\"a\":2,\"b\":3}"), Text("done"));
                        var r = await agent.Run(new RunOptions("go", client));
                        Assert.AreEqual("completed", r.Status);
                        CollectionAssert.Contains(client.Requests[0].Tools.Select(t => t.Id).ToList(), "ev_echo");
                        var contents = ToolContents(r);
                        StringAssert.Contains("Echo: hi", contents[0]);
                        StringAssert.Contains("The sum of 2 and 3 is 5.", contents[1]);
                    }
                }
                finally
                {
                    if (!proc.HasExited) proc.Kill();
                    proc.WaitForExit(5000);
                }
            }
        }
    }
}
