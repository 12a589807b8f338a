using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>A C# model client answering from a script and recording every request.</summary>
    sealed class RecordingClient : IModelClient
    {
        readonly Queue<Dictionary<string, object>> script;
        public readonly List<ModelRequest> Requests = new List<ModelRequest>();
        public RecordingClient(params Dictionary<string, object>[] responses) { script = new Queue<Dictionary<string, object>>(responses); }
        public Task<ModelResponse> Generate(ModelRequest request)
        {
            lock (Requests) Requests.Add(request);
            lock (script) return Task.FromResult(ModelResponse.FromValue(script.Dequeue()));
        }
    }

    sealed class EmptyMessageException : Exception
    {
        public override string Message => "";
    }

    [TestFixture]
    public class ToolsPageTests
    {
        static Agent Agent(params Tool[] tools) => AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = tools });

        [Test]
        public async Task SchemasValidateInputOutputAndProgress()
        {
            var progress = new List<object>();
            var tool = AgentSdk.DefineTool(new Tool("lookup", async (input, rt) =>
            {
                await rt.EmitProgress(O("percent", 50L));
                return O("id", ((Dictionary<string, object>)input)["id"], "upper", true);
            }, "Look up an order", Schema("id"), TimeSpan.FromSeconds(5))
            {
                InputSchema = v => { var m = (Dictionary<string, object>)v; m["id"] = ((string)m["id"]).ToUpperInvariant(); return m; },
                OutputSchema = AgentSdk.JsonSchema(O("type", "object", "required", L("id"))),
                EventSchema = AgentSdk.JsonSchema(O("type", "object", "properties", O("percent", O("type", "integer")))),
            });
            using (var agent = Agent(tool))
            {
                var client = new RecordingClient(Calls("c1", "lookup", "{\"id\":\"a-1\"}"), Text("done"));
                var result = await agent.Run(new RunOptions("look", client)
                {
                    OnEvent = e => { if (e.Type == "tool.preliminary_result") progress.Add(e.Details["result"]); },
                });
                Assert.AreEqual("completed", result.Status);
                Assert.AreEqual("{\"id\":\"A-1\",\"upper\":true}", client.Requests[1].Messages.Last().Content);
                Assert.AreEqual(1, progress.Count);
                Assert.AreEqual(50L, ((Dictionary<string, object>)progress[0])["percent"]);

                // A value the output schema refuses fails the run with the core's message.
                var bad = AgentSdk.DefineTool(new Tool("bad", (i, rt) => Task.FromResult<object>(O("nope", 1L)))
                { OutputSchema = AgentSdk.JsonSchema(O("type", "object", "required", L("id"))) });
                using (var agent2 = Agent(bad))
                {
                    var e = Assert.Throws<AgentException>(() => agent2.Run(new RunOptions("x", new RecordingClient(Calls("c1", "bad", "{}")))).GetAwaiter().GetResult());
                    Assert.AreEqual(ErrorCodes.ToolOutputInvalid, e.Code);
                    StringAssert.Contains("id", e.Message);
                    Assert.AreEqual("failed", e.State.Status);
                }
            }
        }

        [Test]
        public async Task ApprovalPredicateAndAgentLevelApproval()
        {
            var tool = new Tool("refund", (i, rt) => Task.FromResult<object>("refunded"), "Refund", Schema("amount"))
            {
                Approval = async (input, rt) => { await Task.Yield(); return (string)((Dictionary<string, object>)input)["amount"] != "1"; },
            };
            using (var agent = Agent(tool))
            {
                var client = new ScriptedClient(new object[] { Calls("s", "refund", "{\"amount\":\"1\"}", "b", "refund", "{\"amount\":\"900\"}"), Text("ok") });
                var paused = await agent.Run(new RunOptions("refund", client));
                Assert.AreEqual("waiting_for_human", paused.Status);
                Assert.AreEqual(new[] { "b" }, paused.Run.Pause.PendingToolCalls.Select(p => p.Call.Id).ToArray());
                Assert.AreEqual("approval", paused.Run.Pause.PendingToolCalls[0].Kind);
                var rejected = await agent.ContinueRun(new ContinueOptions(paused, client) { Rejections = new[] { new ToolDecision("b", "too much") } });
                Assert.AreEqual("completed", rejected.Status);
            }
            var agentLevel = AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "ops",
                Tools = new[] { new Tool("echo", (i, rt) => Task.FromResult(i)), new Tool("wipe", (i, rt) => Task.FromResult<object>("wiped")) },
                RequireApproval = (call, rt) => Task.FromResult(call.Name == "wipe"),
            });
            using (agentLevel)
            {
                var client = new ScriptedClient(new object[] { Calls("e", "echo", "{}", "w", "wipe", "{}"), Text("ok") });
                var paused = await agentLevel.Run(new RunOptions("go", client));
                Assert.AreEqual(new[] { "w" }, paused.Run.Pause.PendingToolCalls.Select(p => p.Call.Id).ToArray());
            }
        }

        [Test]
        public async Task ManualAndInteractiveToolsTakeOutputsOnContinue()
        {
            var manual = new Tool("ask_human", null, "Ask a person");
            var interactive = new Tool("confirm", (i, rt) => Task.FromResult<object>("never"))
            {
                OnToolCalled = (input, rt) => Task.FromResult(ValueTuple.Create(false, (object)null)),
                OnResponseReceived = (output, rt) => Task.FromResult<object>(O("wrapped", output)),
            };
            using (var agent = Agent(manual, interactive))
            {
                var client = new RecordingClient(Calls("m", "ask_human", "{}", "h", "confirm", "{}"), Text("thanks"));
                var paused = await agent.Run(new RunOptions("ask", client));
                Assert.AreEqual(new[] { "manual", "hitl" }, paused.Run.Pause.PendingToolCalls.Select(p => p.Kind).ToArray());
                var done = await agent.ContinueRun(new ContinueOptions
                {
                    StateJson = paused.ToJson(), Client = client,
                    ToolOutputs = new[] { new ToolOutput("m", "blue"), new ToolOutput("h", "yes") },
                });
                Assert.AreEqual("completed", done.Status);
                var tools = client.Requests[1].Messages.Where(m => m.Role == "tool").Select(m => m.Content).ToArray();
                Assert.AreEqual(new[] { "blue", "{\"wrapped\":\"yes\"}" }, tools);
            }
        }

        [Test]
        public async Task AnInteractiveHookThatCompletesWithNullGivesANullResult()
        {
            bool completed = true;
            var tool = new Tool("confirm", (i, rt) => Task.FromResult<object>("never"))
            {
                OnToolCalled = (input, rt) => Task.FromResult(ValueTuple.Create(completed, (object)null)),
            };
            using (var agent = Agent(tool))
            {
                var client = new RecordingClient(Calls("h", "confirm", "{}"), Text("ok"));
                var done = await agent.Run(new RunOptions("go", client));
                Assert.AreEqual("completed", done.Status);
                var tools = client.Requests[1].Messages.Where(m => m.Role == "tool").Select(m => m.Content).ToArray();
                Assert.AreEqual(new[] { "null" }, tools);
                completed = false;
                var paused = await agent.Run(new RunOptions("go", new ScriptedClient(new object[] { Calls("h", "confirm", "{}") })));
                Assert.AreEqual(new[] { "hitl" }, paused.Run.Pause.PendingToolCalls.Select(p => p.Kind).ToArray());
            }
        }

        [Test]
        public async Task NextTurnParamsReachTheNextRequestOnly()
        {
            var tool = new Tool("tune", (i, rt) => Task.FromResult<object>("ok"))
            { NextTurnParams = new NextTurnParams(Model: "big-model", Temperature: 0.1) };
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Model = "small", Tools = new[] { tool } }))
            {
                var client = new RecordingClient(Calls("c1", "tune", "{}"), Calls("c2", "tune", "{}"), Text("done"));
                await agent.Run(new RunOptions("go", client));
                Assert.AreEqual(new[] { "small", "big-model", "big-model" }, client.Requests.Select(r => r.Model).ToArray());
                Assert.AreEqual(0.1, client.Requests[1].Temperature);
                Assert.IsNull(client.Requests[0].Temperature);
            }
        }

        [Test]
        public async Task RuntimeFieldsAndSetContext()
        {
            RuntimeContext seen = null;
            var tool = new Tool("ctx", (i, rt) => { seen = rt; rt.SetContext(O("user", "ana", "visits", 2L)); return Task.FromResult<object>(rt.Context); });
            using (var agent = Agent(tool))
            {
                var client = new RecordingClient(Calls("c1", "ctx", "{}"), Text("ok"));
                var r = await agent.Run(new RunOptions("go", client) { Context = O("user", "ana") });
                Assert.IsNotEmpty(seen.RunId);
                Assert.AreEqual("ops", seen.AgentId);
                Assert.AreEqual(0, seen.StepIndex);
                Assert.AreEqual("c1", seen.ToolCall.Id);
                Assert.AreEqual("ctx", seen.ToolCall.Name);
                Assert.AreEqual("{\"user\":\"ana\",\"visits\":2}", Json.Write(r.Run.Context));
                Assert.AreEqual("{\"user\":\"ana\",\"visits\":2}", Json.Write(client.Requests[1].Context));
            }
        }

        [Test]
        public async Task TimeoutCancelsTheTokenAndFailsOnTime()
        {
            var cancelled = new TaskCompletionSource<bool>();
            var tool = new Tool("slow", async (i, rt) =>
            {
                rt.CancellationToken.Register(() => cancelled.TrySetResult(true));
                await Task.Delay(TimeSpan.FromSeconds(30), rt.CancellationToken);
                return "late";
            }, Timeout: TimeSpan.FromMilliseconds(1000)); // past a loaded machine's start-up: the tool has registered by then
            using (var agent = Agent(tool))
            {
                var sw = Stopwatch.StartNew();
                var e = Assert.Throws<AgentException>(() => agent.Run(new RunOptions("go", new RecordingClient(Calls("c1", "slow", "{}")))).GetAwaiter().GetResult());
                Assert.Less(sw.ElapsedMilliseconds, 5000);
                Assert.AreEqual(ErrorCodes.ToolTimeout, e.Code);
                Assert.AreEqual("failed", e.State.Status);
                Assert.IsTrue(await Task.WhenAny(cancelled.Task, Task.Delay(5000)) == cancelled.Task, "token not cancelled");
            }
        }

        [Test]
        public async Task CancellingTheRunCancelsTheToolAndReturnsCancelled()
        {
            var cancelled = new TaskCompletionSource<bool>();
            var started = new TaskCompletionSource<bool>();
            var tool = new Tool("slow", async (i, rt) =>
            {
                started.TrySetResult(true);
                try { await Task.Delay(TimeSpan.FromSeconds(30), rt.CancellationToken); }
                catch (OperationCanceledException) { cancelled.TrySetResult(true); throw; }
                return "late";
            });
            using (var agent = Agent(tool))
            using (var cts = new CancellationTokenSource())
            {
                var run = agent.Run(new RunOptions("go", new RecordingClient(Calls("c1", "slow", "{}"))) { CancellationToken = cts.Token });
                // Cancelled once the tool runs (however late a loaded machine starts it), so that
                // it has a token to see cancelled.
                Assert.IsTrue(await Task.WhenAny(started.Task, Task.Delay(10000)) == started.Task, "the tool did not begin");
                cts.Cancel();
                var r = await run;
                Assert.AreEqual("cancelled", r.Status);
                Assert.IsTrue(await Task.WhenAny(cancelled.Task, Task.Delay(5000)) == cancelled.Task, "token not cancelled");
            }
        }

        [Test]
        public async Task TwoHundredConcurrentTools()
        {
            int active = 0, max = 0;
            // A barrier, not a timed sleep: each tool waits (up to 10 s) until all 200 are in
            // flight, so a loaded machine starting them slowly cannot lower the peak; capped
            // concurrency would keep it below 200.
            var all = new TaskCompletionSource<bool>();
            var tool = new Tool("wait", async (i, rt) =>
            {
                int now = Interlocked.Increment(ref active);
                lock (this) max = Math.Max(max, now);
                if (now == 200) all.TrySetResult(true);
                await Task.WhenAny(all.Task, Task.Delay(10000));
                Interlocked.Decrement(ref active);
                return rt.ToolCall.Id;
            });
            var calls = new List<string>();
            for (int i = 0; i < 200; i++) { calls.Add("c" + i); calls.Add("wait"); calls.Add("{}"); }
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { tool } }))
            {
                var client = new RecordingClient(Calls(calls.ToArray()), Text("done"));
                var sw = Stopwatch.StartNew();
                var r = await agent.Run(new RunOptions("fan out", client) { ToolExecution = new ToolExecutionConfig(Concurrency: 200) });
                Assert.AreEqual("completed", r.Status);
                Assert.Less(sw.ElapsedMilliseconds, 9000);
                Assert.AreEqual(200, max);
                var order = client.Requests[1].Messages.Where(m => m.Role == "tool").Select(m => m.ToolCallId).ToArray();
                Assert.AreEqual(Enumerable.Range(0, 200).Select(n => "c" + n).ToArray(), order);
            }
        }

        [Test]
        public async Task ConcurrencyDefaultsToOneAndIsSetOnTheAgent()
        {
            int active = 0, max = 0;
            Func<object, RuntimeContext, Task<object>> body = async (i, rt) =>
            {
                int now = Interlocked.Increment(ref active);
                lock (this) max = Math.Max(max, now);
                await Task.Delay(50);
                Interlocked.Decrement(ref active);
                return "ok";
            };
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { new Tool("w", body) } }))
                await agent.Run(new RunOptions("go", new RecordingClient(Calls("a", "w", "{}", "b", "w", "{}", "c", "w", "{}"), Text("ok"))));
            Assert.AreEqual(1, max);
            max = 0;
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { new Tool("w", body) }, ToolExecution = new ToolExecutionConfig(Concurrency: 4) }))
                await agent.Run(new RunOptions("go", new RecordingClient(Calls("a", "w", "{}", "b", "w", "{}", "c", "w", "{}"), Text("ok"))));
            Assert.AreEqual(3, max);
        }

        [Test]
        public async Task ExceptionsOfAnyTypeAreTheCallsError()
        {
            var tools = new[]
            {
                new Tool("arg", (i, rt) => throw new ArgumentException("bad argument")),
                new Tool("nullref", async (i, rt) => { await Task.Yield(); string s = null; return s.Length; }),
                new Tool("empty", (i, rt) => throw new EmptyMessageException()),
                new Tool("notask", (i, rt) => null),
                new Tool("faulted", (i, rt) => Task.FromException<object>(new AggregateException(new TimeoutException("inner timeout")))),
                new Tool("nojson", (i, rt) => Task.FromResult<object>(new Func<int>(() => 1))),
            };
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "ops", Tools = tools.Take(5).ToList(), ToolExecution = new ToolExecutionConfig(OnError: "return-to-model"),
            }))
            {
                var client = new RecordingClient(Calls("a", "arg", "{}", "b", "nullref", "{}", "c", "empty", "{}", "d", "notask", "{}", "e", "faulted", "{}"), Text("ok"));
                var r = await agent.Run(new RunOptions("go", client));
                Assert.AreEqual("completed", r.Status);
                var msgs = client.Requests[1].Messages.Where(m => m.Role == "tool").ToList();
                Assert.IsTrue(msgs.All(m => m.IsError));
                StringAssert.Contains("bad argument", msgs[0].Content);
                StringAssert.Contains("Object reference", msgs[1].Content);
                StringAssert.Contains("EmptyMessageException", msgs[2].Content);
                StringAssert.Contains("no Task", msgs[3].Content);
                StringAssert.Contains("inner timeout", msgs[4].Content);
            }
            using (var agent = Agent(tools[0]))
            {
                var e = Assert.Throws<AgentException>(() => agent.Run(new RunOptions("go", new RecordingClient(Calls("a", "arg", "{}")))).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.ToolFailed, e.Code);
                Assert.AreEqual("failed", e.State.Status);
                Assert.IsInstanceOf<InvalidOperationException>(e);
            }
            using (var agent = Agent(tools[5]))
            {
                var e = Assert.Throws<AgentException>(() => agent.Run(new RunOptions("go", new RecordingClient(Calls("a", "nojson", "{}")))).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.ToolOutputInvalid, e.Code);
                StringAssert.Contains("System.Func", e.Message);
            }
        }

        [Test]
        public async Task RefusedContinueLosesNothing()
        {
            var tool = new Tool("deploy", (i, rt) => Task.FromResult<object>("deployed")) { RequireApproval = true };
            using (var agent = Agent(tool))
            using (var client = new ScriptedClient(new object[] { Calls("c1", "deploy", "{}"), Text("Deployed.") }))
            {
                var paused = await agent.Run(new RunOptions("go", client));
                var stored = paused.ToJson();
                var missing = Assert.Throws<AgentException>(() => agent.ContinueRun(new ContinueOptions { StateJson = stored, Client = client }).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.ContinueInvalid, missing.Code);
                Assert.IsNull(missing.State);
                var unknown = Assert.Throws<AgentException>(() => agent.ContinueRun(new ContinueOptions { StateJson = stored, Client = client, Approvals = new ToolDecision[] { "c9" } }).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.ContinueInvalid, unknown.Code);
                var garbage = Assert.Throws<AgentException>(() => agent.ContinueRun(new ContinueOptions { StateJson = "{\"version\":99}", Client = client, Approvals = new ToolDecision[] { "c1" } }).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.StateInvalid, garbage.Code);
                // A fresh agent (another process, in effect) continues the untouched state.
                using (var again = Agent(tool))
                {
                    var done = await again.ContinueRun(new ContinueOptions { StateJson = stored, Client = client, Approvals = new ToolDecision[] { "c1" } });
                    Assert.AreEqual("Deployed.", done.Output);
                }
            }
        }

        [Test]
        public void DefinitionErrorsNameTheProblem()
        {
            var e = Assert.Throws<AgentException>(() => AgentSdk.CreateAgent(new AgentDefinition
            { Id = "ops", Tools = new[] { new Tool("x", (i, rt) => Task.FromResult(i)), new Tool("x", (i, rt) => Task.FromResult(i)) } }));
            Assert.AreEqual(ErrorCodes.DefinitionInvalid, e.Code);
            var schema = Assert.Throws<AgentException>(() => AgentSdk.JsonSchema(O("type", 12L)));
            Assert.AreEqual(ErrorCodes.DefinitionInvalid, schema.Code);
        }

        [Test]
        public async Task StopConditionsBuiltinAndCSharp()
        {
            var tool = new Tool("echo", (i, rt) => Task.FromResult(i));
            Func<StopState, ValueTuple<bool, string>> twoCalls = s => ValueTuple.Create(s.StepCount >= 2, "two steps");
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { tool }, StopWhen = new StopCondition[] { twoCalls } }))
            {
                var r = await agent.Run(new RunOptions("go", new RecordingClient(Calls("a", "echo", "{}"), Calls("b", "echo", "{}"), Calls("c", "echo", "{}"))));
                Assert.AreEqual("stopped", r.Status);
                Assert.AreEqual("two steps", r.Run.StopReason);
            }
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { tool }, StopWhen = new[] { AgentSdk.HasToolCall("echo") } }))
            {
                var r = await agent.Run(new RunOptions("go", new RecordingClient(Calls("a", "echo", "{}"), Text("never"))));
                Assert.AreEqual("stopped", r.Status);
            }
        }

        [Test]
        public async Task StreamsEventsAndText()
        {
            var tool = new Tool("echo", (i, rt) => Task.FromResult(i));
            using (var agent = Agent(tool))
            using (var client = new ScriptedClient(new object[] { Calls("a", "echo", "{}"), Text("All done.") }))
            using (var stream = agent.Stream(new RunOptions("go", client)))
            {
                var types = new List<string>();
                var cursor = stream.FullStream().GetAsyncEnumerator();
                while (await cursor.MoveNextAsync()) types.Add(cursor.Current.Type);
                var result = await stream.GetResult();
                Assert.AreEqual("completed", result.Status);
                Assert.AreEqual("run.started", types.First());
                Assert.AreEqual("run.completed", types.Last(t => !t.StartsWith("response.")));
                CollectionAssert.Contains(types, "tool.completed");
                Assert.AreEqual("All done.", string.Concat(stream.TextStream()));
                // Replayed from the first event.
                Assert.AreEqual(types, stream.FullStream().Select(e => e.Type).ToList());
            }
        }
    }
}
