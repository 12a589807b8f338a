using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>A model client that waits until its request is cancelled.</summary>
    sealed class HangingClient : IModelClient
    {
        public readonly TaskCompletionSource<bool> Cancelled = new TaskCompletionSource<bool>();
        public async Task<ModelResponse> Generate(ModelRequest request)
        {
            try { await Task.Delay(TimeSpan.FromSeconds(30), request.CancellationToken); }
            catch (OperationCanceledException) { Cancelled.TrySetResult(true); throw; }
            return new ModelResponse("late");
        }
    }

    [TestFixture]
    public class LoopTests
    {
        [Test]
        public async Task AResultReadsItsStateWhenAsked()
        {
            var definition = new AgentDefinition
            {
                Id = "adder",
                Tools = new[] { new Tool("add", (i, rt) => Task.FromResult<object>(3L)) },
            };
            using (var agent = AgentSdk.CreateAgent(definition))
            {
                var script = new object[] { Calls("c1", "add", "{}"), Calls("c2", "add", "{}"), O("text", "sum \"quoted\"") };
                var result = await agent.Run(new RunOptions("go", new ScriptedClient(script)));
                // Status and output first (found in the text), then the rest (read whole).
                Assert.AreEqual("completed", result.Status);
                Assert.AreEqual("sum \"quoted\"", result.Output);
                Assert.AreEqual(6, result.Messages.Count);
                Assert.AreEqual("3", result.Messages[2].Content);
                Assert.AreEqual("completed", result.Run.Status);
                Assert.AreEqual("sum \"quoted\"", result.Output);
                Assert.AreEqual(3, result.Steps.Count);
                var again = RunResult.FromJson(result.ToJson());
                Assert.AreEqual(result.Run.Id, again.Run.Id);
                Assert.AreEqual(again.Output, result.Output);
                Assert.AreEqual(result.Value.Count, again.Value.Count);
                // A structured output is found in the text as well.
                var structured = await agent.Run(new RunOptions("go", new ScriptedClient(new object[] { O("text", "{\"n\": [1, {\"k\": \"}\"}]}") })));
                Assert.AreEqual("{\"n\": [1, {\"k\": \"}\"}]}", structured.Output);
            }
        }

        [Test]
        public async Task AResultsTextIsWrittenOnceWhicheverThreadAsksFirst()
        {
            var definition = new AgentDefinition
            {
                Id = "adder",
                Tools = new[] { new Tool("add", (i, rt) => Task.FromResult<object>(3L)) },
            };
            using (var agent = AgentSdk.CreateAgent(definition))
            {
                var script = new object[] { Calls("c1", "add", "{}"), Calls("c2", "add", "{}"), O("text", "done") };
                var result = await agent.Run(new RunOptions("go", new ScriptedClient(script)));
                // Status, output and usage come before the text exists.
                Assert.AreEqual("completed", result.Status);
                Assert.AreEqual("done", result.Output);
                var texts = new string[8];
                using (var start = new Barrier(texts.Length))
                {
                    var threads = Enumerable.Range(0, texts.Length).Select(i => new Thread(() =>
                    {
                        start.SignalAndWait();
                        texts[i] = i % 2 == 0 ? result.ToJson() : result.ToString();
                    })).ToList();
                    threads.ForEach(t => t.Start());
                    threads.ForEach(t => t.Join());
                }
                Assert.IsTrue(texts.All(t => ReferenceEquals(t, texts[0])), "one text for every reader");
                StringAssert.Contains("\"toolCallId\":\"c2\"", texts[0]);
                Assert.AreEqual(6, result.Messages.Count);
                Assert.AreEqual(result.ToJson(), RunResult.FromJson(texts[0]).ToJson());
            }
        }

        [Test]
        public async Task PerTurnFunctionsAndHumanReview()
        {
            var definition = new AgentDefinition
            {
                Id = "writer",
                Tools = new[] { new Tool("draft", (i, rt) => Task.FromResult<object>("draft v1")) },
                DynamicInstructions = turn => "turn " + turn.NumberOfTurns,
                Temperature = turn => turn.NumberOfTurns == 1 ? 0.7 : (double?)null,
                HumanReview = async ctx =>
                {
                    await Task.Yield();
                    return ctx.IsFinal && ctx.Messages.Count(m => m.Role == "user") == 1
                        ? new HumanReviewRequest("check the answer", O("words", 2L)) : null;
                },
            };
            using (var agent = AgentSdk.CreateAgent(definition))
            {
                var client = new RecordingClient(Calls("c1", "draft", "{}"), Text("First answer."), Text("Second answer."));
                var paused = await agent.Run(new RunOptions("write", client));
                Assert.AreEqual("waiting_for_human", paused.Status);
                Assert.AreEqual("human_review", paused.Run.Pause.Kind);
                Assert.AreEqual("check the answer", paused.Run.Pause.Reason);
                Assert.AreEqual(2L, ((Dictionary<string, object>)paused.Run.Pause.Payload)["words"]);
                var done = await agent.ContinueRun(new ContinueOptions(paused, client) { HumanInput = "shorter please" });
                Assert.AreEqual("completed", done.Status);
                Assert.AreEqual("Second answer.", done.Output);
                Assert.AreEqual(new[] { "turn 1", "turn 2", "turn 3" }, client.Requests.Select(r => r.Instructions).ToArray());
                Assert.AreEqual(0.7, client.Requests[0].Temperature);
                Assert.IsNull(client.Requests[1].Temperature);
                Assert.AreEqual("shorter please", client.Requests[2].Messages.Last(m => m.Role == "user").Content);
            }
        }

        [Test]
        public async Task CancellingARunCancelsTheModelRequest()
        {
            var client = new HangingClient();
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops" }))
            using (var cts = new CancellationTokenSource(200))
            {
                var r = await agent.Run(new RunOptions("hello", client) { CancellationToken = cts.Token });
                Assert.AreEqual("cancelled", r.Status);
                Assert.IsTrue(await Task.WhenAny(client.Cancelled.Task, Task.Delay(5000)) == client.Cancelled.Task, "request token not cancelled");
            }
        }

        [Test]
        public async Task OutputSchemaAndEventsInOrder()
        {
            var events = new List<string>();
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "ops",
                OutputSchema = v => { if (!(v is string s) || s.Length > 5) throw new FormatException("too long"); return v; },
            }))
            {
                var ok = await agent.Run(new RunOptions("hi", new RecordingClient(Text("Short"))) { OnEvent = e => events.Add(e.Type) });
                Assert.AreEqual("Short", ok.Output);
                Assert.AreEqual("run.started", events.First());
                Assert.AreEqual("run.completed", events.Last());
                var e2 = Assert.Throws<AgentException>(() => agent.Run(new RunOptions("hi", new RecordingClient(Text("Far too long")))).GetAwaiter().GetResult());
                Assert.AreEqual(ErrorCodes.AgentOutputInvalid, e2.Code);
                StringAssert.Contains("too long", e2.Message);
            }
        }

        [Test]
        public async Task StreamCancelDoesNotWaitForABlockedReader()
        {
            var tool = new Tool("slow", async (i, rt) => { await Task.Delay(TimeSpan.FromSeconds(30), rt.CancellationToken); return "late"; });
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ops", Tools = new[] { tool } }))
            using (var stream = agent.Stream(new RunOptions("go", new RecordingClient(Calls("c1", "slow", "{}")))))
            {
                var reader = Task.Run(() => stream.FullStream().Select(e => e.Type).ToList());
                await Task.Delay(300);                       // the reader now waits inside the core
                var cancel = Task.Run(() => stream.Cancel());
                Assert.IsTrue(await Task.WhenAny(cancel, Task.Delay(3000)) == cancel, "Cancel blocked");
                var result = await stream.GetResult();
                Assert.AreEqual("cancelled", result.Status);
                Assert.IsTrue(await Task.WhenAny(reader, Task.Delay(3000)) == reader, "the reader did not end");
                Assert.AreEqual("run.cancelled", reader.Result.Last(t => !t.StartsWith("response.")));
            }
        }

        [Test]
        public void JsonKeepsKeyOrderAndExactIntegers()
        {
            var text = "{\"z\":1,\"a\":[true,null,-9223372036854775808,18446744073709551615,1.5,\"\\u00e9\\n\"],\"m\":{}}";
            Assert.AreEqual(text.Replace("\\u00e9", "é"), Json.Write(Json.Parse(text)));
            Assert.Throws<ArgumentException>(() => Json.Write(double.NaN));
            var cycle = new List<object>();
            cycle.Add(cycle);
            Assert.Throws<ArgumentException>(() => Json.Write(cycle));
            Assert.Throws<FormatException>(() => Json.Parse("{\"a\":}"));
        }
    }
}
