// JSON Schemas generated from JVM classes (records, POJOs, Kotlin classes) and JSON values
// decoded into them (docs/behaviour.md §20): the victools generator with its Jackson module
// writes the schema, Jackson reads the values.
package app.phaseo.agent

import com.fasterxml.jackson.annotation.JsonProperty
import com.github.victools.jsonschema.generator.Option
import com.github.victools.jsonschema.generator.OptionPreset
import com.github.victools.jsonschema.generator.SchemaGenerator
import com.github.victools.jsonschema.generator.SchemaGeneratorConfigBuilder
import com.github.victools.jsonschema.generator.SchemaVersion
import com.github.victools.jsonschema.module.jackson.JacksonModule
import com.github.victools.jsonschema.module.jackson.JacksonOption
import tools.jackson.core.JacksonException
import tools.jackson.databind.DeserializationFeature
import tools.jackson.databind.json.JsonMapper

/**
 * Schemas and decoding for tools defined from a class. A record component, field or getter
 * is a property under its Jackson name; `@JsonPropertyDescription` and
 * `@JsonClassDescription` give descriptions, `@JsonProperty(required = true)` makes a
 * property required and `@JsonProperty(defaultValue = "…")` (JSON text) gives its default;
 * an enum is its constants' `@JsonProperty` names (else their names); collections are
 * arrays. A class inside itself is written once and referenced (`#` for the root, others
 * under `$defs`).
 */
object TypedSchemas {
    private val mapper: JsonMapper = JsonMapper.builder()
        // The core has checked the arguments against the schema; a property the schema
        // allows but the class lacks is not an error of the model's.
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        // An optional `int`/`boolean` the model left out (or sent as `null` in strict mode)
        // gets its zero value, as an absent field of a POJO does.
        .disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .build()

    private val generator: SchemaGenerator by lazy {
        val config = SchemaGeneratorConfigBuilder(mapper, SchemaVersion.DRAFT_2020_12, OptionPreset.PLAIN_JSON)
            .with(
                JacksonModule(
                    JacksonOption.RESPECT_JSONPROPERTY_REQUIRED,
                    JacksonOption.FLATTENED_ENUMS_FROM_JSONPROPERTY,
                ),
            )
            .without(Option.SCHEMA_VERSION_INDICATOR)
        // Properties in declaration order (the generator's default sorts them by name): the
        // model reads them in the order the class gives them.
        config.forTypesInGeneral().withPropertySorter { _, _ -> 0 }
        config.forFields().withDefaultResolver { field ->
            field.getAnnotationConsideringFieldAndGetter(JsonProperty::class.java)
                ?.defaultValue?.takeIf { it.isNotEmpty() }
                ?.let { text -> runCatching { mapper.readTree(text) }.getOrElse { text } }
        }
        SchemaGenerator(config.build())
    }

    /**
     * The JSON Schema of [type] as plain Java values (maps, lists). A type without an
     * object form (a string, a number, an enum, a collection) is refused with
     * [AgentSdk.AgentException] `definition_invalid`.
     */
    @JvmStatic
    fun schemaOf(type: Class<*>): Map<String, Any?> {
        val schema = javaMap(parseJson(generator.generateSchema(type).toString()))
        if (schema["type"] != "object") {
            throw AgentSdk.AgentException(
                "definition_invalid",
                "Invalid tool type: ${type.simpleName} is not an object type (its schema is ${toJsonElement(schema)})",
                null,
                null,
            )
        }
        return schema
    }

    /**
     * [value] (plain JSON data) decoded into [type]; an [IllegalArgumentException]
     * `<JSON pointer>: <reason>` (`/` for the root) when it does not fit.
     */
    @JvmStatic
    fun <T> decode(type: Class<T>, value: Any?): T = try {
        mapper.convertValue(value, type)
    } catch (e: JacksonException) {
        throw IllegalArgumentException("${pointer(e.path)}: ${reason(e)}", e)
    } catch (e: IllegalArgumentException) {
        throw IllegalArgumentException("/: ${e.message}", e)
    }

    /** A value of a declared type as plain JSON data (maps, lists, strings, numbers). */
    @JvmStatic
    fun plain(value: Any?): Any? = when (value) {
        null, is String, is Number, is Boolean, is Map<*, *>, is List<*> -> value
        else -> mapper.convertValue(value, Any::class.java)
    }

    private fun pointer(path: List<JacksonException.Reference>): String {
        if (path.isEmpty()) return "/"
        return path.joinToString("") { ref ->
            val name = ref.propertyName
            "/" + (name?.replace("~", "~0")?.replace("/", "~1") ?: ref.index.toString())
        }
    }

    // Jackson's message names the Java type and the source; its first clause is the reason.
    private fun reason(e: JacksonException): String =
        (e.originalMessage ?: e.message ?: e.javaClass.simpleName).lineSequence().first().substringBefore(" at [Source")
}
