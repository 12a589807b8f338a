using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>A streaming client writing a call's input in pieces: its first attempt fails
    /// after part of a call; the second streams call c2, holding the rest of it until the
    /// consumer saw the first fragment; the third answers.</summary>
    sealed class InputWriter : IStreamingModelClient
    {
        public static readonly string[] Pieces = { "{\"a\":", "2,\"b\"", ":3}" };
        public readonly ManualResetEventSlim Seen = new ManualResetEventSlim();
        public bool Live;
        int attempts;

        public Task<ModelResponse> Generate(ModelRequest request) => throw new InvalidOperationException("a streamed run uses Stream");

        public Task Stream(ModelRequest request, Action<ModelStreamEvent> emit) => Task.Run(() =>
        {
            switch (Interlocked.Increment(ref attempts))
            {
                case 1:
                    emit(new ModelStreamEvent("tool-input-start", ToolCallId: "lost", ToolName: "add"));
                    emit(ModelStreamEvent.ToolInputDelta("lost", "{\"a\":"));
                    throw new InvalidOperationException("connection reset");
                case 2:
                    emit(ModelStreamEvent.ToolInputStart("c2", "add"));
                    emit(ModelStreamEvent.ToolInputDelta("c2", Pieces[0]));
                    Live = Seen.Wait(TimeSpan.FromSeconds(60));
                    foreach (var p in Pieces.Skip(1)) emit(ModelStreamEvent.ToolInputDelta("c2", p));
                    emit(ModelStreamEvent.Completed(new ModelResponse(null, new[] { new ModelToolCall("c2", "add", string.Concat(Pieces)) })));
                    break;
                default:
                    emit(ModelStreamEvent.Completed(new ModelResponse("5")));
                    break;
            }
        });
    }

    [TestFixture]
    public class ToolInputTests
    {
        static Tool Add() => new Tool("add", (i, rt) =>
        {
            var m = (Dictionary<string, object>)i;
            return Task.FromResult<object>(Convert.ToInt64(m["a"]) + Convert.ToInt64(m["b"]));
        });

        static string[] Deltas(IEnumerable<AgentEvent> events, string id) => events
            .Where(e => e.Type == "tool.input_delta" && (string)e.Details["toolCallId"] == id)
            .Select(e => (string)e.Details["delta"]).ToArray();

        /// <summary>Tool input reaches the stream live, in order, before model.completed
        /// (docs/behaviour.md §16); a failed attempt's input stays and only the retried call
        /// runs.</summary>
        [Test]
        public async Task StreamingClientInputArrivesLive()
        {
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition
            {
                Id = "calc", Tools = new[] { Add() }, ModelRetry = new ModelRetryConfig(1, TimeSpan.FromMilliseconds(1)),
            }))
            {
                var client = new InputWriter();
                using (var s = agent.Stream(new RunOptions("2+3?", client)))
                {
                    var events = new List<AgentEvent>();
                    foreach (var e in s.FullStream())
                    {
                        if (e.Type == "tool.input_delta" && (string)e.Details["toolCallId"] == "c2" && !client.Seen.IsSet)
                        {
                            Assert.IsFalse(events.Any(x => x.Type == "model.completed"));
                            client.Seen.Set();
                        }
                        events.Add(e);
                    }
                    Assert.AreEqual(5L, Convert.ToInt64((await s.GetResult()).Output));
                    Assert.IsTrue(client.Live, "the first fragment reached the consumer while the client was writing");
                    Assert.AreEqual(new[] { "{\"a\":" }, Deltas(events, "lost"));
                    Assert.AreEqual(InputWriter.Pieces, Deltas(events, "c2"));
                    Assert.AreEqual(new[] { "c2" }, events.Where(e => e.Type == "tool.started").Select(e => (string)e.Details["toolCallId"]).ToArray());
                    var types = events.Select(e => e.Type).ToList();
                    Assert.Less(types.LastIndexOf("tool.input_delta"), types.IndexOf("model.completed"));
                    var started = events.First(e => e.Type == "tool.input_started" && (string)e.Details["toolCallId"] == "c2");
                    Assert.AreEqual("add", started.Details["toolName"]);
                    Assert.AreEqual(0, started.StepIndex);
                }
            }
        }

        /// <summary>The scripted client streams each call's input in pieces; a run that is not
        /// streamed reports none.</summary>
        [Test]
        public async Task ScriptedClientInput()
        {
            var args = string.Concat(InputWriter.Pieces);
            Func<ScriptedClient> script = () => new ScriptedClient(new object[]
                { new ModelResponse(null, new[] { new ModelToolCall("c1", "add", args) }), new ModelResponse("5") });
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "calc", Tools = new[] { Add() } }))
            {
                using (var s = agent.Stream(new RunOptions("2+3?", script())))
                {
                    await s.GetResult();
                    var deltas = Deltas(s.FullStream(), "c1");
                    Assert.Greater(deltas.Length, 1);
                    Assert.AreEqual(args, string.Concat(deltas));
                }
                var seen = new List<string>();
                var r = await agent.Run(new RunOptions("2+3?", script()) { OnEvent = e => { lock (seen) seen.Add(e.Type); } });
                Assert.AreEqual(5L, Convert.ToInt64(r.Output));
                CollectionAssert.Contains(seen, "tool.completed");
                Assert.IsFalse(seen.Any(t => t.StartsWith("tool.input_")));
            }
        }

        /// <summary>A tool's runtime names its run, agent, step, attempt, idempotency key and
        /// call; the call's input is a copy of its own (changing the tool's input leaves it as
        /// the model wrote it).</summary>
        [Test]
        public void TheRuntimeNamesTheCallWithACopyOfItsInput()
        {
            RuntimeContext seen = null;
            object input = null;
            var tool = new Tool("t", (i, rt) =>
            {
                seen = rt;
                input = i;
                ((Dictionary<string, object>)i)["a"] = 99L;
                return Task.FromResult<object>("ok");
            });
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ag", Tools = new[] { tool } }))
            {
                var client = new RecordingClient(J.Calls("c9", "t", "{\"a\":1,\"b\":[true,\"x\\\"y\"]}"), J.Text("done"));
                var r = agent.Run(new RunOptions("go", client)).Result;
                Assert.AreEqual("completed", r.Status);
                Assert.AreEqual("ag", seen.AgentId);
                Assert.AreEqual(r.Run.Id, seen.RunId);
                Assert.AreEqual(0, seen.StepIndex);
                Assert.AreEqual(1, seen.Attempt);
                Assert.AreEqual(r.Run.Id + ":c9", seen.IdempotencyKey);
                Assert.AreEqual("c9", seen.ToolCall.Id);
                Assert.AreEqual("t", seen.ToolCall.Name);
                var callInput = (Dictionary<string, object>)seen.ToolCall.Input;
                Assert.AreNotSame(input, callInput);
                Assert.AreEqual(1L, callInput["a"]);
                CollectionAssert.AreEqual(new object[] { true, "x\"y" }, (List<object>)callInput["b"]);
                Assert.AreSame(callInput, seen.ToolCall.Input, "read once");
            }
        }

        /// <summary>A runtime kept past its call: its values still read (from many threads at
        /// once, the same), and its token, first asked for after the answer, is one that is
        /// never cancelled (the SDK no longer waits for the call, whose native half is gone).</summary>
        [Test]
        public void ARuntimeKeptPastItsCallStillReadsAndItsLateTokenIsNeverCancelled()
        {
            RuntimeContext kept = null;
            var tool = new Tool("t", (i, rt) => { kept = rt; return Task.FromResult<object>("ok"); });
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "ag", Tools = new[] { tool } }))
            {
                var r = agent.Run(new RunOptions("go", new RecordingClient(J.Calls("c1", "t", "{}"), J.Text("done")))).Result;
                Assert.AreEqual("completed", r.Status);
                var ids = new string[8];
                var calls = new ToolCall[8];
                Parallel.For(0, 8, k => { ids[k] = kept.RunId; calls[k] = kept.ToolCall; });
                foreach (var id in ids) Assert.AreEqual(r.Run.Id, id);
                foreach (var c in calls) Assert.AreSame(calls[0], c, "one ToolCall for every reader");
                var token = kept.CancellationToken;
                Assert.IsFalse(token.IsCancellationRequested);
                Assert.AreEqual(token, kept.CancellationToken, "the same token when asked again");
                Assert.Throws<InvalidOperationException>(() => kept.EmitProgress(1).Wait());
            }
        }
    }
}
