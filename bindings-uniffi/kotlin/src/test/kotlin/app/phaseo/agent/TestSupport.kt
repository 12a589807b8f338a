package app.phaseo.agent

import java.util.Collections
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonArray
import kotlinx.serialization.json.addJsonObject

/** JSON from text (tests only). */
fun json(text: String): JsonElement = parseJson(text)

/** A scripted response calling tools: `call("c1", "add", """{"a":1}""")`. */
fun callsResponse(vararg calls: Triple<String, String, String>): JsonObject = buildJsonObject {
    putJsonArray("toolCalls") {
        for ((id, name, args) in calls) addJsonObject {
            put("id", id)
            put("name", name)
            put("arguments", args)
        }
    }
}

fun call(id: String, name: String, args: String = "{}") = Triple(id, name, args)

fun textResponse(text: String): JsonObject = buildJsonObject { put("text", text) }

/** A Kotlin model client answering with [responses] in order and recording each request. */
class RecordingModel(private val responses: List<JsonElement>) {
    val requests: MutableList<JsonObject> = Collections.synchronizedList(mutableListOf())
    private var next = 0
    val client: Client = modelClient { request ->
        requests.add(request)
        synchronized(this) { responses[next++] }
    }

    /** The trailing tool messages of request [i]. */
    fun toolMessages(i: Int): List<JsonObject> =
        requests[i]["messages"]!!.jsonArray.map { it.jsonObject }.takeLastWhile { it["role"]!!.jsonPrimitive.content == "tool" }
}

val JsonObject.content: String get() = this["content"]!!.jsonPrimitive.content

fun JsonObject.str(key: String): String? = (this[key] as? JsonPrimitive)?.content

fun objectSchema(): JsonObject = buildJsonObject { put("type", "object") }

fun ids(array: JsonArray): List<String> = array.map { it.jsonObject["call"]!!.jsonObject["id"]!!.jsonPrimitive.content }
