// Kotlin tools from classes (docs/behaviour.md §20): the schema from the input class, the
// arguments decoded into it before the suspend body runs.
package app.phaseo.agent

/**
 * A tool whose arguments are the class [In] instead of a hand-written JSON Schema
 * (docs/behaviour.md §20), e.g. `defineTypedTool<Refund, Receipt>("refund", "Refunds an
 * order") { refund, runtime -> Receipt(refund.orderId, refund.amount) }`. The schema is
 * [TypedSchemas.schemaOf] of [In] (with [strict], its strict form, made by the core), checked
 * by the core on every call; the arguments are then decoded into [In] (Jackson) before
 * [execute] runs. A value that cannot be decoded is `Invalid tool input: <pointer>: <reason>`,
 * which [OnError.RETURN_TO_MODEL] sends back to the model. When [Out] is an object type it
 * gives the output schema. [execute] `null` makes a manual tool.
 *
 * Descriptions and required properties are Jackson annotations on the backing fields
 * (`@field:JsonPropertyDescription("…")`, `@field:JsonProperty("order_id", required = true)`,
 * `@JsonClassDescription` on the class); a data class needs its constructor's parameter names
 * (compile with `-java-parameters`) or a `@JsonCreator`.
 */
inline fun <reified In : Any, reified Out : Any> defineTypedTool(
    id: String,
    description: String = "",
    strict: Boolean = false,
    requireApproval: Boolean = false,
    onError: OnError? = null,
    timeoutMs: Long? = null,
    noinline execute: (suspend (input: In, runtime: ToolContext) -> Out)? = null,
): Tool = typedTool(id, description, In::class.java, Out::class.java, strict, requireApproval, onError, timeoutMs, execute)

/** The body of [defineTypedTool] (not inline: one copy of the logic). */
@PublishedApi
internal fun <In : Any, Out : Any> typedTool(
    id: String,
    description: String,
    input: Class<In>,
    output: Class<Out>,
    strict: Boolean,
    requireApproval: Boolean,
    onError: OnError?,
    timeoutMs: Long?,
    execute: (suspend (input: In, runtime: ToolContext) -> Out)?,
): Tool {
    var schema = toJsonElement(TypedSchemas.schemaOf(input))
    if (strict) schema = parseJson(sdk { schemaStrict(schema.toString()) })
    val outputSchema = objectSchemaOrNull(output)?.let { jsonSchemaValidator(toJsonElement(it)) }
    return defineTool(
        id,
        description,
        schema,
        timeoutMs = timeoutMs,
        requireApproval = requireApproval,
        onError = onError,
        // Runs after the core checked `parameters`: what the schema cannot say (a number's
        // range for an `Int`) is refused here, before approval or execute.
        inputSchema = validator { value -> TypedSchemas.decode(input, javaValue(value)); value },
        outputSchema = outputSchema,
        strict = strict,
        execute = execute?.let { run ->
            { value, runtime -> toJsonElement(TypedSchemas.plain(run(TypedSchemas.decode(input, javaValue(value)), runtime))) }
        },
    )
}

// A result type without an object form (a String, a list, a JsonElement) has no output schema.
private fun objectSchemaOrNull(type: Class<*>): Map<String, Any?>? =
    if (type == Any::class.java || type == Unit::class.java || type.isPrimitive || type.name.startsWith("java.") ||
        type.name.startsWith("kotlin.") || type.name.startsWith("kotlinx.")
    ) {
        null
    } else {
        TypedSchemas.schemaOf(type)
    }
