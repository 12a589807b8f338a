// What the Java conformance runner (src/test/java/.../JavaRunner.java) takes from Kotlin: the
// case's JSON as plain Java values (the Java API's own conversion), nothing else.
package app.phaseo.agent.conformance

import app.phaseo.agent.javaValue
import kotlinx.serialization.json.JsonElement

/** [element] as the Java API's plain values (`Map`, `List`, `String`, `Number`, `Boolean`, `null`). */
fun javaOf(element: JsonElement?): Any? = javaValue(element)
