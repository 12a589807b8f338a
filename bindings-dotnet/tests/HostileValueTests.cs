using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>A model client whose answer carries a usage value that throws when read.</summary>
    sealed class ThrowingUsageClient : IModelClient
    {
        public Task<ModelResponse> Generate(ModelRequest request) => Task.FromResult(new ModelResponse("hi")
        {
            Usage = new Dictionary<string, object> { { "inputTokens", new[] { 1, 0 }.Select(x => 10 / x) } },
        });
    }

    /// <summary>Host values that throw while the SDK reads them, and definitions with holes:
    /// each gets a clear error, never a hang or a crash.</summary>
    [TestFixture]
    public class HostileValueTests
    {
        static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

        [Test]
        public void AResultWhoseEnumerationThrowsIsAnInvalidOutputNotAHang()
        {
            var tool = new Tool("t", (i, rt) => Task.FromResult<object>(new[] { 1, 0 }.Select(x => 10 / x)));
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { tool } }))
            {
                var run = agent.Run(new RunOptions("go", new RecordingClient(Calls("c1", "t", "{}"), Text("done"))));
                Assert.IsTrue(run.ContinueWith(_ => { }).Wait(Bound), "the run did not end");
                var e = run.Exception?.InnerException as AgentException;
                Assert.IsNotNull(e, "expected the run to fail: " + run.Exception);
                Assert.AreEqual(ErrorCodes.ToolOutputInvalid, e.Code);
                StringAssert.Contains("value cannot be read", e.Message);
                StringAssert.Contains("divide by zero", e.Message.ToLowerInvariant());
            }
        }

        [Test]
        public void AModelAnswerWhoseUsageThrowsFailsTheRunNotHangsIt()
        {
            using (var agent = AgentSdk.CreateAgent(new AgentDefinition { Id = "a" }))
            {
                var run = agent.Run(new RunOptions("go", new ThrowingUsageClient()));
                Assert.IsTrue(run.ContinueWith(_ => { }).Wait(Bound), "the run did not end");
                var e = run.Exception?.InnerException as AgentException;
                Assert.IsNotNull(e, "expected the run to fail: " + run.Exception);
                StringAssert.Contains("value cannot be read", e.Message);
            }
        }

        [Test]
        public void ANullToolIsADefinitionErrorNamingItsPlace()
        {
            var ok = new Tool("ok", (i, rt) => Task.FromResult<object>("fine"));
            var e = Assert.Throws<AgentException>(() => AgentSdk.CreateAgent(new AgentDefinition { Id = "a", Tools = new[] { ok, null } }));
            Assert.AreEqual(ErrorCodes.DefinitionInvalid, e.Code);
            Assert.AreEqual("Invalid agent definition: tools[1] is null", e.Message);
        }
    }
}
