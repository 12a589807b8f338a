<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * A tool, as in the product: `new Tool(id: 'weather', execute: fn (array $input, RuntimeContext
 * $runtime) => [...], description: ..., parameters: [...])`. `execute` null = a manual tool
 * (its output is supplied on continue). A Generator returned by `execute` yields progress
 * values and returns the result. Schemas are JSON Schema arrays (compiled in the core) or
 * callables `fn ($value) => $value` that throw when the value is invalid.
 *
 * Wrong definitions: a parameter of the wrong PHP type (`id: 5`, `timeoutMs: "x"`,
 * `parameters: "text"`) is PHP's own TypeError, thrown before the SDK runs and naming the
 * parameter; the constructor's types are the product's, and that is how PHP refuses a typed
 * argument everywhere. Everything the types let through is checked by the SDK and refused
 * with a DefinitionError (`definition_invalid`) whose message names the tool and the field:
 * an `execute` or hook that is not callable (here), and when the tool is defined
 * (`AgentSdk::defineTool`, `createAgent`) a value JSON cannot hold (a cycle, more than 64
 * levels, NaN, text that is not UTF-8), an invalid JSON Schema, a negative `timeoutMs`, an
 * unknown `onError`, a duplicate id, a `maxCalls` below 1.
 *
 * `maxCalls` bounds how many of this tool's calls a run admits (a later call gets an error
 * tool message and the run goes on); `retry` (a ToolRetry) runs a call that throws or times
 * out again (docs/behaviour.md §15).
 *
 * `deferLoading: true` keeps the tool from the model until the built-in `tool_search` (which
 * the core then offers after the other tools) finds it; from the next model request on it is
 * offered to the end of the run, and the state keeps it loaded (`run.loadedTools`) across a
 * pause and continue (docs/behaviour.md §17).
 */
final class Tool
{
    use Internal\TypedToolFactory;

    /**
     * @param bool|callable $requireApproval true or `fn ($input, RuntimeContext $rt): bool`
     * @param array|callable|null $nextTurnParams overrides (camelCase names of docs/behaviour.md; the
     *        product's snake_case keys are accepted) or `fn ($input, $rt): array`
     */
    public function __construct(
        public readonly string $id,
        public readonly mixed $execute = null,
        public readonly ?string $description = null,
        public readonly ?array $parameters = null,
        public readonly int|float|null $timeoutMs = null,
        public readonly mixed $inputSchema = null,
        public readonly mixed $outputSchema = null,
        public readonly mixed $eventSchema = null,
        public readonly mixed $requireApproval = false,
        public readonly mixed $onToolCalled = null,
        public readonly mixed $onResponseReceived = null,
        public readonly mixed $nextTurnParams = null,
        public readonly ?string $onError = null,
        public readonly ?bool $strict = null,
        public readonly ?array $inputExamples = null,
        public readonly ?int $maxCalls = null,
        public readonly ?ToolRetry $retry = null,
        public readonly ?bool $deferLoading = null,
        /** The definition an agent tool runs (set by Agent::asTool, docs/behaviour.md §18). */
        public readonly ?AgentDefinition $agent = null,
        /**
         * The MCP annotations listed when the tool is served (docs/behaviour.md §19):
         * `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint` (bools), `title`.
         */
        public readonly ?array $annotations = null,
    ) {
        if ($execute !== null && !is_callable($execute)) {
            throw new DefinitionError(
                'Invalid definition of tool \'' . Internal\Json::text($id) . '\': execute must be callable or null, got ' . get_debug_type($execute),
                'definition_invalid',
            );
        }
    }
}
