<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * How a tool's failed call is tried again (docs/behaviour.md §15): `new Tool(..., retry: new
 * ToolRetry(maxAttempts: 3, backoffMs: 100))`. `maxAttempts` counts every attempt (the first
 * included); the n-th retry waits `backoffMs × n` milliseconds. A call that throws or times
 * out runs again until `maxAttempts` attempts were made, then its last error follows
 * `onError`; invalid input, approvals and an output failing `outputSchema` are never retried.
 * Each retry is announced by a `tool.retrying` event (`toolCallId`, `toolName`, `attempt`,
 * `error`); the tool reads `$runtime->attempt` and `$runtime->idempotencyKey`. The core
 * checks the values (a DefinitionError naming `retry.maxAttempts` when it is below 1).
 */
final class ToolRetry
{
    public function __construct(public readonly int $maxAttempts, public readonly int|float $backoffMs = 0)
    {
    }

    /** @internal the canonical definition format's `retry` object */
    public function spec(): array
    {
        return ['maxAttempts' => $this->maxAttempts, 'backoffMs' => $this->backoffMs];
    }
}
