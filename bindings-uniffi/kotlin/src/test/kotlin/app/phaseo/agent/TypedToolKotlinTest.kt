package app.phaseo.agent

import com.fasterxml.jackson.annotation.JsonClassDescription
import com.fasterxml.jackson.annotation.JsonProperty
import com.fasterxml.jackson.annotation.JsonPropertyDescription
import java.io.File
import java.util.Collections
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Why a customer asks for a refund. */
enum class KtRefundReason { @JsonProperty("damaged") DAMAGED, @JsonProperty("late") LATE, @JsonProperty("other") OTHER }

@JsonClassDescription("One line of the order")
data class KtOrderLine(
    @field:JsonProperty(required = true) @field:JsonPropertyDescription("Stock keeping unit") val sku: String,
    @field:JsonProperty(required = true) @field:JsonPropertyDescription("How many were bought") val quantity: Int,
)

@JsonClassDescription("Who is refunded")
data class KtCustomer(
    @field:JsonProperty(required = true) @field:JsonPropertyDescription("Where the receipt goes") val email: String,
    @field:JsonProperty(defaultValue = "false") val vip: Boolean = false,
)

/** The refund of every binding's typed-tool tests (tests/typed-tools/refund_schema.json). */
@JsonClassDescription("A refund for an order")
data class KtRefund(
    @field:JsonProperty("order_id", required = true) @field:JsonPropertyDescription("The order to refund")
    @param:JsonProperty("order_id") val orderId: String,
    @field:JsonProperty(required = true) @field:JsonPropertyDescription("Amount in euros") val amount: Double,
    @field:JsonProperty(required = true) @field:JsonPropertyDescription("Why the customer asks") val reason: KtRefundReason,
    @field:JsonPropertyDescription("The lines refunded (all when left out)") val lines: List<KtOrderLine>? = null,
    val customer: KtCustomer? = null,
    @field:JsonPropertyDescription("A note for the ledger") val note: String? = null,
)

data class KtReceipt(
    @field:JsonProperty("order_id", required = true) @param:JsonProperty("order_id") val orderId: String,
    @field:JsonProperty(required = true) val refunded: Double,
)

/** A category tree: a recursive type. */
data class KtCategory(
    @field:JsonProperty(required = true) @field:JsonPropertyDescription("Category name") val name: String,
    @field:JsonPropertyDescription("Sub-categories") val children: List<KtCategory>? = null,
)

/** Tools from Kotlin classes (docs/behaviour.md §20). */
class TypedToolKotlinTest {
    private val args = """{"order_id":"A-17","amount":25,"reason":"damaged","lines":[{"sku":"MUG-1","quantity":2},""" +
        """{"sku":"CUP-9","quantity":1}],"customer":{"email":"ana@example.com"}}"""

    private fun sorted(value: JsonElement): JsonElement = when (value) {
        is JsonObject -> JsonObject(
            value.entries.sortedBy { it.key }.associate { (k, v) ->
                k to if (k == "required" && v is JsonArray) JsonArray(v.sortedBy { it.jsonPrimitive.content }) else sorted(v)
            },
        )
        is JsonArray -> JsonArray(value.map(::sorted))
        else -> value
    }

    private fun fixture(name: String) = sorted(json(File("../../tests/typed-tools/$name").readText()))

    private fun error(message: JsonObject) = json(message.content).jsonObject["error"]!!.jsonPrimitive.content

    @Test
    fun `the model gets the generated schema and the body gets the decoded data class after approval`() = runBlocking {
        val seen = Collections.synchronizedList(mutableListOf<KtRefund>())
        val refund = defineTypedTool<KtRefund, KtReceipt>("refund", "Refunds an order", requireApproval = true) { r, _ ->
            seen.add(r)
            KtReceipt(r.orderId, r.amount)
        }
        val model = RecordingModel(listOf(callsResponse(call("c1", "refund", args)), textResponse("Refunded.")))
        val agent = createAgent("desk", tools = listOf(refund))
        val paused = agent.run("refund A-17", model.client)
        assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())
        val sent = model.requests[0]["tools"]!!.jsonArray[0].jsonObject
        assertEquals(fixture("refund_schema.json"), sorted(sent["parameters"]!!))
        val done = agent.continueRun(parseState(paused.toJson()), model.client, approvals = listOf(decision("c1")))
        assertEquals(RunStatus.COMPLETED, done.status())
        val r = seen.single()
        assertEquals(KtRefundReason.DAMAGED, r.reason)
        assertEquals(listOf("MUG-1", "CUP-9"), r.lines!!.map { it.sku })
        assertEquals("ana@example.com", r.customer!!.email)
        assertNull(r.note)
        assertEquals(json("""{"order_id":"A-17","refunded":25}"""), json(model.toolMessages(1).single().content))
    }

    @Test
    fun `wrong types go back to the model and a recursive type decodes at every depth`() = runBlocking {
        val refund = defineTypedTool<KtRefund, String>("refund", "Refunds", onError = OnError.RETURN_TO_MODEL) { _, _ -> "ok" }
        val tree = defineTypedTool<KtCategory, String>("file", "Files a tree") { c, _ -> c.children!![0].children!![0].name }
        assertEquals(fixture("category_schema.json"), sorted(toJsonElement(TypedSchemas.schemaOf(KtCategory::class.java))))
        val model = RecordingModel(
            listOf(
                callsResponse(
                    call("c1", "refund", args.replace("\"quantity\":2", "\"quantity\":\"two\"")),
                    call("c2", "file", """{"name":"home","children":[{"name":"kitchen","children":[{"name":"mugs"}]}]}"""),
                ),
                textResponse("ok"),
            ),
        )
        val done = createAgent("desk", tools = listOf(refund, tree)).run("go", model.client)
        assertEquals(RunStatus.COMPLETED, done.status())
        val messages = model.toolMessages(1)
        assertEquals("Invalid tool input: /lines/0/quantity: \"two\" is not of type \"integer\"", error(messages[0]))
        assertEquals("mugs", messages[1].content)
    }

    @Test
    fun `strict sends the core's strict form and null means left out`() = runBlocking {
        val seen = Collections.synchronizedList(mutableListOf<KtRefund>())
        val refund = defineTypedTool<KtRefund, String>("refund", "Refunds", strict = true) { r, _ -> seen.add(r); "ok" }
        val strictArgs = """{"order_id":"A-1","amount":1.5,"reason":"late","lines":null,"customer":null,"note":null}"""
        val model = RecordingModel(listOf(callsResponse(call("c1", "refund", strictArgs)), textResponse("ok")))
        val done = createAgent("desk", tools = listOf(refund)).run("go", model.client)
        assertEquals(RunStatus.COMPLETED, done.status())
        val sent = model.requests[0]["tools"]!!.jsonArray[0].jsonObject
        assertEquals(JsonPrimitive(true), sent["strict"])
        assertTrue(sent["parameters"]!!.jsonObject["required"]!!.jsonArray.size == 6)
        assertNull(seen.single().lines)
    }
}
