using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>A local OTLP/HTTP receiver: keeps every protobuf body POSTed to /v1/traces
    /// with the expected content type and token header, refuses anything else.</summary>
    sealed class OtlpReceiver : IDisposable
    {
        readonly HttpListener listener = new HttpListener();
        readonly List<byte[]> bodies = new List<byte[]>();
        public string Url { get; }

        public OtlpReceiver()
        {
            var probe = new TcpListener(IPAddress.Loopback, 0);
            probe.Start();
            int port = ((IPEndPoint)probe.LocalEndpoint).Port;
            probe.Stop();
            Url = "http://127.0.0.1:" + port;
            listener.Prefixes.Add(Url + "/");
            listener.Start();
            Task.Run(Serve);
        }

        async Task Serve()
        {
            while (listener.IsListening)
            {
                HttpListenerContext ctx;
                try { ctx = await listener.GetContextAsync(); } catch (Exception) { return; }
                var buf = new MemoryStream();
                ctx.Request.InputStream.CopyTo(buf);
                var ok = ctx.Request.Url.AbsolutePath == "/v1/traces" && ctx.Request.ContentType == "application/x-protobuf"
                    && ctx.Request.Headers["X-Token"] == "t0k";
                if (ok) lock (bodies) bodies.Add(buf.ToArray());
                ctx.Response.StatusCode = ok ? 200 : 400;
                ctx.Response.ContentType = "application/x-protobuf";
                ctx.Response.ContentLength64 = 0;
                ctx.Response.Close();
            }
        }

        /// <summary>Everything received so far, concatenated.</summary>
        public byte[] Exported()
        {
            lock (bodies) return bodies.SelectMany(b => b).ToArray();
        }

        public void Dispose() { listener.Stop(); listener.Close(); }
    }

    [TestFixture]
    public class TracingTests
    {
        static int Count(byte[] hay, byte[] needle)
        {
            int n = 0;
            for (int i = 0; i + needle.Length <= hay.Length; i++)
            {
                int j = 0;
                while (j < needle.Length && hay[i + j] == needle[j]) j++;
                if (j == needle.Length) n++;
            }
            return n;
        }

        static Agent DeployAgent() => AgentSdk.CreateAgent(new AgentDefinition
        {
            Id = "ops",
            Tools = new[] { new Tool("deploy", (input, rt) => Task.FromResult<object>("ok"), "Deploy", Schema("env")) { RequireApproval = true } },
        });

        /// <summary>A run records invoke_agent, chat and execute_tool spans exported to a local
        /// OTLP receiver; the paused state carries the run span's traceparent (in the caller's
        /// trace, given by RunOptions.Traceparent) and the continue, in a fresh agent from the
        /// stored JSON, lands in the same trace; bad options are definition_invalid; with
        /// tracing off a state carries no traceparent.</summary>
        [Test]
        public async Task TracingExportsToAnOtlpReceiver()
        {
            using (var receiver = new OtlpReceiver())
            {
                var bad = Assert.Throws<AgentException>(() => AgentSdk.EnableTracing(new TracingOptions { Endpoint = "not a url" }));
                Assert.AreEqual(ErrorCodes.DefinitionInvalid, bad.Code);
                AgentSdk.EnableTracing(new TracingOptions
                {
                    Endpoint = receiver.Url, ServiceName = "csharp-test", Headers = new Dictionary<string, string> { { "X-Token", "t0k" } },
                });
                try
                {
                    Assert.IsTrue(AgentSdk.TracingEnabled);
                    const string parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
                    string stored;
                    using (var client = new ScriptedClient(new object[] { Calls("c1", "deploy", "{\"env\":\"prod\"}"), Text("Deployed.") }))
                    {
                        using (var agent = DeployAgent())
                        {
                            var paused = await agent.Run(new RunOptions
                            {
                                Input = "deploy", Client = client, Traceparent = "00-" + parentTrace + "-00f067aa0ba902b7-01",
                            });
                            Assert.AreEqual("waiting_for_human", paused.Status);
                            var tp = paused.Run.Traceparent.Split('-');
                            Assert.AreEqual(4, tp.Length, paused.Run.Traceparent);
                            Assert.AreEqual(parentTrace, tp[1], "the paused state is not in the caller's trace");
                            stored = paused.ToJson();
                        }
                        using (var agent = DeployAgent())
                        {
                            var done = await agent.ContinueRun(new ContinueOptions
                            {
                                Run = RunResult.FromJson(stored), Client = client, Approvals = new ToolDecision[] { "c1" },
                            });
                            Assert.AreEqual("completed", done.Status);
                        }
                    }
                    await AgentSdk.FlushTracing();
                    var got = receiver.Exported();
                    foreach (var name in new[] { "invoke_agent ops", "execute_tool deploy", "chat", "csharp-test", "gen_ai.operation.name" })
                        Assert.Greater(Count(got, Encoding.UTF8.GetBytes(name)), 0, "the export lacks " + name);
                    // Protobuf holds the trace id as 16 raw bytes: every span of both calls has it.
                    var traceId = Enumerable.Range(0, 16).Select(i => Convert.ToByte(parentTrace.Substring(i * 2, 2), 16)).ToArray();
                    Assert.GreaterOrEqual(Count(got, traceId), 4, "the trace id is not on every span");
                }
                finally
                {
                    await AgentSdk.ShutdownTracing();
                }
                Assert.IsFalse(AgentSdk.TracingEnabled);
                using (var agent = DeployAgent())
                using (var client = new ScriptedClient(new object[] { Text("ok") }))
                {
                    var off = await agent.Run(new RunOptions("x", client));
                    Assert.IsNull(off.Run.Traceparent);
                    StringAssert.DoesNotContain("traceparent", off.ToJson());
                }
            }
        }
    }
}
