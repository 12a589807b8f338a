using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using NUnit.Framework;
using PhaseoAgentSdk;
using static PhaseoAgentSdk.Tests.J;

namespace PhaseoAgentSdk.Tests
{
    [TestFixture]
    public class RecoverTests
    {
        static Process Worker(string mode, string path, string runId = "")
        {
            var exe = Path.Combine(Path.GetDirectoryName(typeof(RecoverTests).Assembly.Location), "Phaseo.AgentSdk.TestWorker.exe");
            Assert.IsTrue(File.Exists(exe), exe + " is missing (make csharp-tests builds it)");
            var info = new ProcessStartInfo("mono", "\"" + exe + "\" " + mode + " \"" + path + "\" " + runId)
            {
                UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardInput = true,
            };
            return Process.Start(info);
        }

        static async Task<string> Line(Process p)
        {
            var read = p.StandardOutput.ReadLineAsync();
            Assert.IsTrue(await Task.WhenAny(read, Task.Delay(60000)) == read, "the worker printed nothing");
            Assert.IsNotNull(read.Result, "the worker ended without output");
            return read.Result;
        }

        /// <summary>A worker pauses a store-backed run; a second worker continues it and is
        /// killed (SIGKILL) inside the approved tool; while its lease holds, Recover elsewhere
        /// is refused (continue_invalid); once the 1 s lease expired, Recover finishes the run
        /// from its last checkpoint, using the claimed approval.</summary>
        [Test]
        public async Task RecoverAfterAKilledWorker()
        {
            var dir = Path.Combine(Path.GetTempPath(), "phaseo-cs-recover-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            var path = Path.Combine(dir, "runs.db");
            try
            {
                string runId;
                using (var pauser = Worker("pause", path))
                {
                    var paused = (System.Collections.Generic.Dictionary<string, object>)Json.Parse(await Line(pauser));
                    Assert.IsTrue(pauser.WaitForExit(30000));
                    Assert.AreEqual(0, pauser.ExitCode);
                    Assert.AreEqual("waiting_for_human", paused["status"]);
                    runId = (string)paused["runId"];
                }
                using (var hung = Worker("hang", path, runId))
                {
                    try { Assert.AreEqual("{\"executing\":true}", await Line(hung)); }
                    finally { hung.Kill(); hung.WaitForExit(10000); }
                }
                using (var store = RunStore.Sqlite(path))
                {
                    var row = await store.Load(runId);
                    Assert.AreEqual("running", row.Status);
                    Assert.IsNotNull(row.LeaseOwner);
                    using (var rescuer = AgentSdk.CreateAgent(new AgentDefinition
                    {
                        Id = "store-worker", Store = store, Lease = new LeaseConfig(TimeSpan.FromSeconds(1), TimeSpan.FromMilliseconds(250)),
                        Tools = new[] { new Tool("deploy", (input, rt) => Task.FromResult<object>("deployed")) { RequireApproval = true } },
                    }))
                    using (var client = new ScriptedClient(new object[] { Text("done") }))
                    {
                        var early = Assert.Throws<AgentException>(() => rescuer.Recover(runId, new ContinueOptions { Client = client }).GetAwaiter().GetResult());
                        Assert.AreEqual(ErrorCodes.ContinueInvalid, early.Code);
                        await Task.Delay(1300); // the dead worker's 1 s lease
                        var done = await rescuer.Recover(runId, new ContinueOptions { Client = client });
                        Assert.AreEqual("completed", done.Status);
                        Assert.AreEqual("done", done.Output);
                        var tool = done.Messages.First(m => m.Role == "tool" && m.ToolCallId == "c1");
                        StringAssert.Contains("deployed", tool.Content);
                        Assert.AreEqual("completed", (await store.Load(runId)).Status);
                    }
                }
            }
            finally { Directory.Delete(dir, true); }
        }
    }
}
