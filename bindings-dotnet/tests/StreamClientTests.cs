using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>A C# streaming client: streams its first answer word by word, answers the
    /// rest with Generate; counts both.</summary>
    sealed class WordStreamer : IStreamingModelClient
    {
        readonly Queue<string> answers;
        public int Streamed, Generated;
        public WordStreamer(params string[] answers) { this.answers = new Queue<string>(answers); }
        string Next() { lock (answers) return answers.Dequeue(); }

        public Task<ModelResponse> Generate(ModelRequest request)
        {
            Interlocked.Increment(ref Generated);
            return Task.FromResult(new ModelResponse(Next()));
        }

        public async Task Stream(ModelRequest request, Action<ModelStreamEvent> emit)
        {
            Interlocked.Increment(ref Streamed);
            var text = Next();
            var words = text.Split(' ');
            for (int i = 0; i < words.Length; i++)
            {
                await Task.Yield();
                emit(ModelStreamEvent.TextDelta(i < words.Length - 1 ? words[i] + " " : words[i]));
            }
            emit(ModelStreamEvent.Completed(new ModelResponse(text)));
        }
    }

    sealed class FailingStreamer : IStreamingModelClient
    {
        public bool Bad;
        public Task<ModelResponse> Generate(ModelRequest request) => throw new InvalidOperationException("not used");
        public Task Stream(ModelRequest request, Action<ModelStreamEvent> emit)
        {
            emit(ModelStreamEvent.TextDelta("partial "));
            if (Bad) emit(new ModelStreamEvent("sparkle"));
            throw new InvalidOperationException("upstream broke");
        }
    }

    [TestFixture]
    public class StreamClientTests
    {
        /// <summary>A streamed run hears the client's deltas live; a run that is not streamed
        /// calls Generate; a failing stream and a malformed event fail the request
        /// (model_failed) with their message.</summary>
        [Test]
        public async Task StreamingHostClient()
        {
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "talker" }))
            {
                var client = new WordStreamer("Hello streaming world", "Plain answer");
                using (var s = agent.Stream(new RunOptions("hi", client)))
                {
                    var r = await s.GetResult();
                    Assert.AreEqual("Hello streaming world", r.Output);
                    Assert.AreEqual(new[] { "Hello ", "streaming ", "world" }, s.TextStream().ToArray());
                }
                var plain = await agent.Run(new RunOptions("hi", client));
                Assert.AreEqual("Plain answer", plain.Output);
                Assert.AreEqual(1, client.Streamed);
                Assert.AreEqual(1, client.Generated);

                var failing = new FailingStreamer();
                using (var s = agent.Stream(new RunOptions("hi", failing)))
                {
                    var e = Assert.Throws<AgentException>(() => s.GetResult().GetAwaiter().GetResult());
                    Assert.AreEqual(ErrorCodes.ModelFailed, e.Code);
                    StringAssert.Contains("upstream broke", e.Message);
                }
                failing.Bad = true;
                using (var s = agent.Stream(new RunOptions("hi", failing)))
                {
                    var e = Assert.Throws<AgentException>(() => s.GetResult().GetAwaiter().GetResult());
                    Assert.AreEqual(ErrorCodes.ModelFailed, e.Code);
                    StringAssert.Contains("unknown model stream event type \"sparkle\"", e.Message);
                }
            }
        }
    }
}
