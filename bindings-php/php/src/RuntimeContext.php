<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

use Phaseo\AgentSdk\Internal\Json;
use Phaseo\AgentSdk\Internal\Native;
use Phaseo\AgentSdk\Internal\Scheduler;

/**
 * What a tool call sees: `runId`, `agentId`, `stepIndex`, `context`, `toolCall` (a
 * ToolCall, which also reads as `['id' => ..., 'name' => ..., 'input' => ...]`; null where
 * no call is concerned), `attempt`, `idempotencyKey`, `($runtime->emitProgress)($value)`,
 * `($runtime->setContext)($value)`, `cancelled()` and a cooperative `sleep($ms)`.
 */
final class RuntimeContext
{
    public readonly string $runId;
    public readonly string $agentId;
    public readonly int $stepIndex;
    public readonly mixed $context;
    public readonly ?ToolCall $toolCall;
    /** Which attempt of the call this is: 1, then 2, 3… when the tool has a `retry`. */
    public readonly int $attempt;
    /**
     * `"<runId>:<toolCallId>"`: the same for every attempt, for a call approved on continue
     * and for one run again by `recover`. Hand it to a side-effecting service (a payment
     * API's idempotency header, a unique key) so that the effect happens at most once.
     */
    public readonly string $idempotencyKey;
    /** Publishes a progress value (`tool.preliminary_result`), checked by `eventSchema`. */
    public readonly \Closure $emitProgress;
    /** Replaces the application context (applied after the tool phase, in call order). */
    public readonly \Closure $setContext;

    /** @internal */
    public function __construct(private readonly int $callId, array $runtime)
    {
        $this->runId = (string) ($runtime['runId'] ?? '');
        $this->agentId = (string) ($runtime['agentId'] ?? '');
        $this->stepIndex = (int) ($runtime['stepIndex'] ?? 0);
        $this->context = $runtime['context'] ?? null;
        $this->toolCall = is_array($runtime['toolCall'] ?? null) ? ToolCall::fromArray($runtime['toolCall']) : null;
        $this->attempt = (int) ($runtime['attempt'] ?? 1);
        $this->idempotencyKey = (string) ($runtime['idempotencyKey'] ?? '');
        $call = $callId;
        $this->emitProgress = static function (mixed $value) use ($call): void {
            try {
                $json = Json::encode($value);
            } catch (\Throwable $e) {
                Native::call(fn () => phaseo_call_progress($call, Json::reason($e, 'the progress value'), true));
                return;
            }
            Native::call(fn () => phaseo_call_progress($call, $json, false));
        };
        $this->setContext = static function (mixed $value) use ($call): void {
            try {
                $json = Json::encode($value);
            } catch (\JsonException $e) {
                // The tool's own argument: PHP's error for it (uncaught, the call fails, `tool_failed`).
                throw new \InvalidArgumentException(Json::reason($e, 'the context'), 0, $e);
            }
            Native::call(fn () => phaseo_call_set_context($call, $json));
        };
    }

    /** Whether the core stopped waiting for this call (timeout, run cancelled): stop working. */
    public function cancelled(): bool
    {
        return Scheduler::cancelled($this->callId);
    }

    /**
     * Waits `$ms` milliseconds without holding the PHP thread (other calls proceed), ending
     * early when the call is cancelled. Returns false when it was cut short (or the call was
     * already cancelled): stop working then. A tool that sleeps again after that is not
     * resumed: its fiber is dropped and unwound (`finally` blocks run), so a loop that
     * ignores the answer cannot hold the PHP thread.
     */
    public function sleep(int|float $ms): bool
    {
        return Scheduler::sleep($this->callId, (float) $ms);
    }
}
