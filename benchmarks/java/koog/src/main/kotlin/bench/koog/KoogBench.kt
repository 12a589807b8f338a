package bench.koog

import ai.koog.agents.core.agent.AIAgent
import ai.koog.agents.core.agent.config.AIAgentConfig
import ai.koog.agents.core.agent.entity.AIAgentGraphStrategy
import ai.koog.agents.core.dsl.builder.strategy
import ai.koog.agents.core.dsl.extension.nodeExecuteTools
import ai.koog.agents.core.dsl.extension.nodeLLMRequest
import ai.koog.agents.core.dsl.extension.nodeLLMSendToolResults
import ai.koog.agents.core.dsl.extension.onTextMessage
import ai.koog.agents.core.dsl.extension.onToolCalls
import ai.koog.agents.core.tools.SimpleTool
import ai.koog.agents.core.tools.ToolDescriptor
import ai.koog.agents.core.tools.ToolRegistry
import ai.koog.prompt.Prompt
import ai.koog.prompt.dsl.ModerationResult
import ai.koog.prompt.dsl.prompt
import ai.koog.prompt.executor.model.PromptExecutor
import ai.koog.prompt.llm.LLMCapability
import ai.koog.prompt.llm.LLMProvider
import ai.koog.prompt.llm.LLModel
import ai.koog.prompt.message.Message
import ai.koog.prompt.message.MessagePart
import ai.koog.prompt.message.ResponseMetaInfo
import ai.koog.prompt.streaming.StreamFrame
import ai.koog.serialization.typeToken
import bench.Bench
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.Serializable
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Clock

/** `add`'s arguments, decoded by Koog from the call's JSON text. */
@Serializable
data class AddArgs(val a: Int, val b: Int)

/** `nap`'s arguments. */
@Serializable
data class NapArgs(val i: Int)

/** `add(a, b)` as a Koog tool (its schema generated from [AddArgs]). */
object AddTool : SimpleTool<AddArgs>(typeToken<AddArgs>(), "add", "Add two integers.") {
    override suspend fun execute(args: AddArgs): String = Bench.add(args.a, args.b).toString()
}

/** `nap(i)`: suspends 50 ms with `delay` (a Kotlin body, as ours-kotlin's), returns i. */
object NapTool : SimpleTool<NapArgs>(typeToken<NapArgs>(), "nap", "Sleep 50 ms, return i.") {
    override suspend fun execute(args: NapArgs): String {
        delay(Bench.SLEEP_MS.toLong())
        Bench.CALLS.incrementAndGet()
        return args.i.toString()
    }
}

/** Answers every request with the next scripted response. */
class ScriptedExecutor(private val turns: List<Message.Assistant>) : PromptExecutor() {
    private val next = AtomicInteger()

    override suspend fun execute(prompt: Prompt, model: LLModel, tools: List<ToolDescriptor>): Message.Assistant =
        turns[next.getAndIncrement()]

    override fun executeStreaming(prompt: Prompt, model: LLModel, tools: List<ToolDescriptor>): Flow<StreamFrame> =
        throw UnsupportedOperationException("the benchmark does not stream")

    override suspend fun moderate(prompt: Prompt, model: LLModel): ModerationResult =
        throw UnsupportedOperationException("the benchmark does not moderate")

    override fun close() {}
}

/**
 * Koog 1.1.1: a graph agent running Koog's single-run strategy (request, tools, send the
 * results, until a text answer) with the tool node set to run a turn's calls concurrently
 * (`nodeExecuteTools(parallel = true)`; `singleRunStrategy(parallelTools = true)` builds the
 * same graph but runs the calls one after the other in this version), `SimpleTool` tools
 * whose arguments Koog decodes with kotlinx.serialization, and a scripted `PromptExecutor`.
 * Each run is awaited by `runBlocking`, as ours-kotlin's.
 */
class KoogBench : Bench.Sdk {
    private val model = LLModel(
        LLMProvider("scripted", "Scripted"),
        "scripted",
        listOf(LLMCapability.Tools, LLMCapability.Completion),
    )

    private val strategy: AIAgentGraphStrategy<String, String> = strategy("single_run_parallel") {
        val nodeCallLLM by nodeLLMRequest()
        val nodeExecuteTool by nodeExecuteTools(parallel = true)
        val nodeSendToolResult by nodeLLMSendToolResults()
        edge(nodeStart forwardTo nodeCallLLM)
        edge(nodeCallLLM forwardTo nodeExecuteTool onToolCalls { true })
        edge(nodeCallLLM forwardTo nodeFinish onTextMessage { true })
        edge(nodeExecuteTool forwardTo nodeSendToolResult)
        edge(nodeSendToolResult forwardTo nodeFinish onTextMessage { true })
        edge(nodeSendToolResult forwardTo nodeExecuteTool onToolCalls { true })
    }

    override fun name() = "koog"

    override fun versions(): Map<String, String> = mapOf(
        "koog" to "${AIAgent::class.java.`package`.implementationVersion}",
        "koog (pinned)" to "1.1.1",
    )

    override fun prepare(w: Bench.Workload): Bench.Run {
        val meta = ResponseMetaInfo(Clock.System.now(), 2, 1, 1)
        val turns = w.turns().map { turn ->
            Message.Assistant(turn.map { c -> MessagePart.Tool.Call(c.id(), c.name(), c.arguments()) }, meta)
        } + Message.Assistant(listOf(MessagePart.Text("done")), meta)
        val tools = ToolRegistry.builder()
        when (w.tool()) {
            "add" -> tools.tool(AddTool)
            "nap" -> tools.tool(NapTool)
        }
        // One model request per turn plus the final one, each a few graph steps.
        val config = AIAgentConfig(prompt("bench") { system("bench") }, model, maxAgentIterations = 4 * w.maxSteps() + 10)
        val agent = AIAgent(ScriptedExecutor(turns), config, strategy, tools.build())
        return Bench.Run { runBlocking { agent.run("go") } }
    }
}

/** Runs the workloads (see [Bench]). */
fun main() {
    Bench.main(KoogBench())
}
