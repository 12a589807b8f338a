using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>A local HTTP server answering POSTs with canned JSON bodies, recording what
    /// it received (path, headers, body).</summary>
    sealed class LocalServer : IDisposable
    {
        readonly HttpListener listener = new HttpListener();
        readonly Queue<string> answers;
        public readonly List<(string Path, string Authorization, Dictionary<string, object> Body)> Received =
            new List<(string, string, Dictionary<string, object>)>();
        public string BaseUrl { get; }

        public LocalServer(params string[] answers)
        {
            this.answers = new Queue<string>(answers);
            var probe = new TcpListener(IPAddress.Loopback, 0);
            probe.Start();
            int port = ((IPEndPoint)probe.LocalEndpoint).Port;
            probe.Stop();
            BaseUrl = "http://127.0.0.1:" + port + "/v1";
            listener.Prefixes.Add("http://127.0.0.1:" + port + "/");
            listener.Start();
            Task.Run(Serve);
        }

        async Task Serve()
        {
            while (listener.IsListening)
            {
                HttpListenerContext ctx;
                try { ctx = await listener.GetContextAsync(); } catch (Exception) { return; }
                string body;
                using (var r = new StreamReader(ctx.Request.InputStream, Encoding.UTF8)) body = r.ReadToEnd();
                string answer;
                lock (Received)
                {
                    Received.Add((ctx.Request.Url.AbsolutePath, ctx.Request.Headers["Authorization"], (Dictionary<string, object>)Json.Parse(body)));
                    answer = answers.Count > 0 ? answers.Dequeue() : "{\"error\":{\"message\":\"no more answers\"}}";
                }
                var bytes = Encoding.UTF8.GetBytes(answer);
                ctx.Response.ContentType = "application/json";
                ctx.Response.ContentLength64 = bytes.Length;
                ctx.Response.OutputStream.Write(bytes, 0, bytes.Length);
                ctx.Response.Close();
            }
        }

        public void Dispose() { try { listener.Stop(); listener.Close(); } catch (Exception) { } }
    }

    [TestFixture]
    public class ServerTests
    {
        static Tool Echo() => new Tool("echo", (i, rt) => Task.FromResult(i), "Echo", Schema("text"));

        [Test]
        public async Task OpenAICompatibleClientAgainstALocalServer()
        {
            var call = "{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"echo\",\"arguments\":\"{\\\"text\\\":\\\"hi\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":3}}";
            var text = "{\"choices\":[{\"message\":{\"content\":\"Echoed.\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":2}}";
            using (var server = new LocalServer(call, text))
            using (var client = AgentSdk.CreateOpenAICompatibleClient(new HttpClientOptions { BaseUrl = server.BaseUrl, ApiKey = "sk-local", Model = "local-model" }))
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { Echo() } }))
            {
                var r = await agent.Run(new RunOptions("say hi", client));
                Assert.AreEqual("completed", r.Status);
                Assert.AreEqual("Echoed.", r.Output);
                Assert.AreEqual(30, r.Usage.InputTokens);
                Assert.AreEqual(2, server.Received.Count);
                Assert.AreEqual("/v1/chat/completions", server.Received[0].Path);
                Assert.AreEqual("Bearer sk-local", server.Received[0].Authorization);
                Assert.AreEqual("local-model", server.Received[0].Body["model"]);
                var tools = (List<object>)server.Received[0].Body["tools"];
                Assert.AreEqual("echo", ((Dictionary<string, object>)((Dictionary<string, object>)tools[0])["function"])["name"]);
            }
        }

        [Test]
        public async Task GatewayClientAgainstALocalServer()
        {
            var answer = "{\"id\":\"resp_1\",\"output\":[{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"From the gateway.\"}]}],\"usage\":{\"input_tokens\":5,\"output_tokens\":4}}";
            using (var server = new LocalServer(answer))
            using (var client = AgentSdk.CreateGatewayAgentClient(new HttpClientOptions { BaseUrl = server.BaseUrl, ApiKey = "pk-local", Model = "openai/gpt-x" }))
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops" }))
            {
                var r = await agent.Run(new RunOptions("hello", client));
                Assert.AreEqual("From the gateway.", r.Output);
                Assert.AreEqual("/v1/responses", server.Received[0].Path);
                Assert.AreEqual("Bearer pk-local", server.Received[0].Authorization);
                Assert.AreEqual("openai/gpt-x", server.Received[0].Body["model"]);
            }
        }

        [Test]
        public async Task HttpErrorsAreModelFailures()
        {
            using (var client = AgentSdk.CreateOpenAICompatibleClient(new HttpClientOptions { BaseUrl = "http://127.0.0.1:9/v1", ApiKey = "k", Model = "m" }))
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops" }))
            {
                var e = Assert.Throws<AgentException>(() => agent.Run(new RunOptions("hello", client)).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.ModelFailed, e.Code);
                await Task.Yield();
            }
        }

        /// <summary>
        /// The URL of an empty database of the test PostgreSQL server, so that the store's
        /// prune of every completed run sees only this test's runs (a suite's tests may share
        /// the server's one database).
        /// </summary>
        static string DatabaseOfItsOwn()
        {
            Assert.IsNotNull(Environment.GetEnvironmentVariable("PHASEO_TEST_POSTGRES_URL"),
                "PHASEO_TEST_POSTGRES_URL is not set (make csharp-tests starts a throwaway PostgreSQL)");
            var repo = Environment.GetEnvironmentVariable("PHASEO_REPO");
            Assert.IsNotNull(repo, "PHASEO_REPO is not set (make csharp-tests sets it)");
            var start = new ProcessStartInfo("bash", "\"" + Path.Combine(repo, "scripts", "pg-test-server.sh") + "\" database")
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            using (var server = Process.Start(start))
            {
                var stdout = server.StandardOutput.ReadToEndAsync();
                var stderr = server.StandardError.ReadToEnd();
                Assert.IsTrue(server.WaitForExit(60_000), "pg-test-server.sh database did not finish in 60 s");
                Assert.AreEqual(0, server.ExitCode, stderr);
                return stdout.Result.Trim().Split('\n').Last();
            }
        }

        static async Task StoreRoundTrip(RunStore store)
        {
            var deploy = new Tool("deploy", (i, rt) => Task.FromResult<object>("deployed")) { RequireApproval = true };
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "store-agent", Tools = new[] { deploy }, Store = store }))
            using (var client = new ScriptedClient(new object[] { Calls("c1", "deploy", "{}"), Text("Deployed.") }))
            {
                var paused = await agent.Run(new RunOptions("go", client));
                var id = paused.Run.Id;
                var row = await store.Load(id);
                Assert.AreEqual("waiting_for_human", row.Status);
                Assert.AreEqual("store-agent", row.AgentId);
                var listed = await store.List(statuses: new[] { "waiting_for_human" }, agentId: "store-agent", limit: 10);
                CollectionAssert.Contains(listed.Runs.Select(r => r.RunId).ToList(), id);
                Assert.Greater(row.UpdatedAtMs, 0);
                // Continue by id (the store holds the state), at most once.
                var done = await agent.ContinueRun(new ContinueOptions { RunId = id, Client = client, Approvals = new ToolDecision[] { "c1" } });
                Assert.AreEqual("Deployed.", done.Output);
                var again = Assert.Throws<AgentException>(() => agent.ContinueRun(new ContinueOptions { RunId = id, Client = client, Approvals = new ToolDecision[] { "c1" } }).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.ContinueInvalid, again.Code);
                Assert.AreEqual("completed", (await store.Load(id)).Status);
                // Pruning: too recent, an unknown status, then every completed run (the store
                // is this test's own: exactly this one).
                Assert.AreEqual(0, await store.Prune(new[] { "completed" }, TimeSpan.FromHours(1)));
                var unknown = Assert.Throws<AgentException>(() => store.Prune(new[] { "done" }, TimeSpan.Zero).GetAwaiter().GetResult());
                StringAssert.Contains("unknown run status 'done'", unknown.Message);
                Assert.AreEqual(1, await store.Prune(new[] { "completed" }, TimeSpan.FromMinutes(-1)));
                Assert.IsNull(await store.Load(id));
                Assert.IsFalse(await store.Delete(id));
            }
        }

        [Test]
        public async Task SqliteStore()
        {
            var path = Path.Combine(Path.GetTempPath(), "phaseo-cs-" + Guid.NewGuid().ToString("N") + ".db");
            try
            {
                using (var store = RunStore.Sqlite(path)) await StoreRoundTrip(store);
            }
            finally { File.Delete(path); }
        }

        [Test]
        public async Task MemoryStore()
        {
            using (var store = RunStore.Memory()) await StoreRoundTrip(store);
        }

        [Test]
        public async Task PostgresStore()
        {
            using (var store = await RunStore.Postgres(DatabaseOfItsOwn())) await StoreRoundTrip(store);
        }

        [Test]
        public async Task McpStdioServerToolsWithApproval()
        {
            var repo = Environment.GetEnvironmentVariable("PHASEO_REPO");
            Assert.IsNotNull(repo, "PHASEO_REPO is not set (make csharp-tests sets it)");
            var python = Environment.GetEnvironmentVariable("PHASEO_PYTHON") ?? Path.Combine(repo, ".venvs/py/bin/python");
            var server = McpServer.Stdio("files", python, Path.Combine(repo, "tests/mcp/test_server.py"));
            server.ToolPrefix = "files";
            server.RequireApproval = "destructive";
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", McpServers = new[] { server } }))
            {
                var client = new RecordingClient(
                    Calls("e", "files_echo", "{\"text\":\"hi\"}", "d", "files_delete_file", "{\"path\":\"/tmp/x\"}"), Text("done"));
                var paused = await agent.Run(new RunOptions("clean up", client));
                Assert.AreEqual("waiting_for_human", paused.Status);
                Assert.AreEqual(new[] { "d" }, paused.Run.Pause.PendingToolCalls.Select(p => p.Call.Id).ToArray());
                CollectionAssert.IsSubsetOf(new[] { "files_echo", "files_delete_file" }, client.Requests[0].Tools.Select(t => t.Id).ToList());
                var done = await agent.ContinueRun(new ContinueOptions(paused, client) { Approvals = new ToolDecision[] { "d" } });
                Assert.AreEqual("completed", done.Status);
                var contents = client.Requests[1].Messages.Where(m => m.Role == "tool").Select(m => m.Content).ToArray();
                StringAssert.Contains("hi", contents[0]);
            }
        }
    }
}
