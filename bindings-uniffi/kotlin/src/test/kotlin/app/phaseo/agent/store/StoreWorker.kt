// A worker process of the Kotlin run-store tests (and of tests/store-handoff): pauses a
// run, continues one by id, or recovers one, against the store named on the command line,
// and prints one JSON line. The same agent as bindings-python/tests/store_worker.py and
// bindings-node/test-fixtures/store-worker.mjs.
//
//   java -cp … app.phaseo.agent.store.StoreWorkerKt STORE pause
//   java -cp … app.phaseo.agent.store.StoreWorkerKt STORE continue RUN_ID [--hang | --slow]
//   java -cp … app.phaseo.agent.store.StoreWorkerKt STORE recover RUN_ID
//
// STORE is `sqlite:<path>` or a PostgreSQL URL. Every execution of the `deploy` tool
// appends a line to the file $PHASEO_EXEC_LOG; with --hang the tool then never returns
// (the test SIGKILLs the worker after its claim); with --slow it returns after 2 s (the
// test freezes the worker meanwhile, so that its lease is taken over).
package app.phaseo.agent.store

import app.phaseo.agent.AgentException
import app.phaseo.agent.RunStore
import app.phaseo.agent.call
import app.phaseo.agent.callsResponse
import app.phaseo.agent.continueRun
import app.phaseo.agent.createAgent
import app.phaseo.agent.decision
import app.phaseo.agent.defineTool
import app.phaseo.agent.lease
import app.phaseo.agent.parseJson
import app.phaseo.agent.postgresStore
import app.phaseo.agent.recover
import app.phaseo.agent.run
import app.phaseo.agent.scriptedClient
import app.phaseo.agent.sqliteStore
import app.phaseo.agent.textResponse
import java.io.File
import kotlin.system.exitProcess
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

suspend fun openStore(spec: String): RunStore =
    if (spec.startsWith("sqlite:")) sqliteStore(spec.removePrefix("sqlite:")) else postgresStore(spec)

private fun say(line: String) {
    println(line)
    System.out.flush()
}

fun main(args: Array<String>) {
    val spec = args[0]
    val mode = args[1]
    val hang = "--hang" in args
    val slow = "--slow" in args
    val answer = runBlocking {
        val deploy = defineTool("deploy", "Deploy", requireApproval = true) { _, _ ->
            File(System.getenv("PHASEO_EXEC_LOG")).appendText("${ProcessHandle.current().pid()}\n")
            if (hang) {
                say("""{"executing":true}""")
                awaitCancellation()
            }
            if (slow) {
                say("""{"executing":true}""")
                delay(2_000)
            }
            JsonPrimitive("deployed")
        }
        try {
            val agent = createAgent("store-worker", tools = listOf(deploy), store = openStore(spec), lease = lease(durationMs = 1_000, renewEveryMs = 250))
            val result = when (mode) {
                "pause" -> agent.run("deploy please", scriptedClient(callsResponse(call("c1", "deploy"))))
                "continue" -> agent.continueRun(runId = args[2], client = scriptedClient(textResponse("done")), approvals = listOf(decision("c1")))
                "recover" -> agent.recover(args[2], scriptedClient(textResponse("done")))
                else -> error("unknown mode $mode")
            }
            buildJsonObject {
                put("run_id", result.runId())
                put("status", result.status().name.lowercase())
                put("output", parseJson(result.outputJson()))
            }
        } catch (e: AgentException) {
            buildJsonObject {
                put("error", e.code)
                put("message", e.message)
            }
        }
    }
    say(answer.toString())
    // The native library's threads would keep the JVM alive.
    exitProcess(0)
}
