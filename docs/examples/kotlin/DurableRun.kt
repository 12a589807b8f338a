package docs.examples

import app.phaseo.agent.*
import java.nio.file.Files
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.*

val refund = defineTool(
    "refund",
    description = "Refund an order",
    requireApproval = true,
    parameters = parseJson(
        """{"type": "object", "properties": {"order": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order", "amount"]}""",
    ),
) { input, _ -> buildJsonObject { put("refunded", input.jsonObject["amount"]!!) } }

/** Every worker builds the same agent over the same store (another process, another day). */
fun supportDesk(store: RunStore) = createAgent("support-desk", tools = listOf(refund), store = store)

fun main() = runBlocking {
    val client = scriptedClient(
        parseJson("""{"toolCalls": [{"id": "c1", "name": "refund", "arguments": "{\"order\": \"A-17\", \"amount\": 42}"}]}"""),
        parseJson("""{"text": "Refunded 42 on order A-17."}"""),
    )
    val path = Files.createTempDirectory("phaseo-").resolve("runs.db").toString()

    // The chat worker: the run pauses on the refund; its state is saved in the store.
    val paused = supportDesk(sqliteStore(path)).run("Refund order A-17", client)
    println("run status: ${paused.status().name.lowercase()}")

    // The approval desk, later: its inbox lists the waiting runs; it continues one by run id.
    val store = sqliteStore(path)
    for (run in store.listRuns(listOf("waiting_for_human")).runs) {
        for (pending in run.pending) {
            val call = pending["call"]!!.jsonObject
            val input = call["input"]!!.jsonObject
            println("inbox: ${call["name"]!!.jsonPrimitive.content} ${input["order"]!!.jsonPrimitive.content} ${input["amount"]}")
        }
        val done = supportDesk(store).continueRun(runId = run.runId, client = client, approvals = listOf(decision("c1")))
        println(done.output.jsonPrimitive.content)
        println("stored status: ${store.loadRun(run.runId)!!.status}")
        // Any other continue of that pause, by any worker, is refused: the refund ran once.
        try {
            supportDesk(store).continueRun(runId = run.runId, client = client, approvals = listOf(decision("c1")))
        } catch (e: AgentException) {
            println("again: ${e.code}")
        }
    }
}
