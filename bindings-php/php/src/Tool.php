<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * A tool, as in the product: `new Tool(id: 'weather', execute: fn (array $input, RuntimeContext
 * $runtime) => [...], description: ..., parameters: [...])`. `execute` null = a manual tool
 * (its output is supplied on continue). A Generator returned by `execute` yields progress
 * values and returns the result. Schemas are JSON Schema arrays (compiled in the core) or
 * callables `fn ($value) => $value` that throw when the value is invalid.
 */
final class Tool
{
    /**
     * @param bool|callable $requireApproval true or `fn ($input, RuntimeContext $rt): bool`
     * @param array|callable|null $nextTurnParams overrides (camelCase SPEC names; the
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
    ) {
        if ($execute !== null && !is_callable($execute)) {
            throw new \InvalidArgumentException("Tool '{$id}': execute must be callable or null");
        }
    }
}
