package bench.ourskotlin

import app.phaseo.agent.Agent
import app.phaseo.agent.RunStatus
import app.phaseo.agent.Tool
import app.phaseo.agent.createAgent
import app.phaseo.agent.defineTool
import app.phaseo.agent.output
import app.phaseo.agent.parseJson
import app.phaseo.agent.run
import app.phaseo.agent.scriptedClient
import app.phaseo.agent.toolExecution
import bench.Bench
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * Ours in Kotlin: the Kotlin API with suspend tool bodies (`defineTool { input, ctx -> }`)
 * and the built-in scripted client, each run awaited by `runBlocking` (as a blocking caller
 * awaits a coroutine). `nap` suspends with `delay` (what a Kotlin body does; the Java
 * SDKs' bodies block their thread in `Thread.sleep`). Tools declare the same JSON Schema
 * `parameters` as the Java API's, which the core validates on every call;
 * `toolConcurrency` 1000.
 */
class OursKotlinBench : Bench.Sdk {
    private val ints = parseJson(
        """{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}""",
    )
    private val i = parseJson("""{"type":"object","properties":{"i":{"type":"integer"}},"required":["i"]}""")

    private val tools: Map<String, Tool> = mapOf(
        "add" to defineTool("add", "Add two integers.", parameters = ints) { input, _ ->
            val o = input.jsonObject
            JsonPrimitive(Bench.add(o.getValue("a").jsonPrimitive.int, o.getValue("b").jsonPrimitive.int))
        },
        "nap" to defineTool("nap", "Sleep 50 ms, return i.", parameters = i) { input, _ ->
            delay(Bench.SLEEP_MS.toLong())
            Bench.CALLS.incrementAndGet()
            input.jsonObject.getValue("i")
        },
    )

    override fun name() = "ours-kotlin"

    override fun versions(): Map<String, String> = mapOf(
        "phaseo-agent" to "${Agent::class.java.`package`.implementationVersion}",
        "native" to "${System.getProperty("jna.library.path")}/libphaseo_agent_uniffi.so",
    )

    override fun prepare(w: Bench.Workload): Bench.Run {
        val turns = w.turns().map { turn ->
            JsonObject(
                mapOf(
                    "toolCalls" to JsonArray(
                        turn.map { c ->
                            JsonObject(mapOf("id" to JsonPrimitive(c.id()), "name" to JsonPrimitive(c.name()), "arguments" to JsonPrimitive(c.arguments())))
                        },
                    ),
                ),
            )
        } + JsonObject(mapOf("text" to JsonPrimitive("done")))
        val agent = createAgent(
            "bench",
            tools = listOfNotNull(w.tool()?.let(tools::getValue)),
            instructions = "bench",
            maxSteps = w.maxSteps(),
            toolExecution = toolExecution(toolConcurrency = 1000),
        )
        val client = scriptedClient(turns)
        return Bench.Run {
            val result = runBlocking { agent.run("go", client) }
            check(result.status() == RunStatus.COMPLETED) { "status ${result.status()}" }
            result.output.let { (it as? JsonPrimitive)?.content ?: it.toString() }
        }
    }
}

/** Runs the workloads (see [Bench]). */
fun main() {
    Bench.main(OursKotlinBench())
}
