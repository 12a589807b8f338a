<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * An approval or rejection on continue (a plain call id string works too). An approval may
 * carry the person's corrected arguments, `editedInput` (null: none): the core checks them
 * as it checks the model's (`parameters`, `inputSchema`) before anything runs, refuses the
 * continue with a ContinueError when they are invalid, and runs the tool with them
 * (docs/behaviour.md §14): `new ToolDecision('c1', editedInput: ['environment' => 'staging'])`.
 */
final class ToolDecision
{
    public function __construct(
        public readonly string $toolCallId,
        public readonly ?string $reason = null,
        public readonly mixed $editedInput = null,
    ) {
    }
}

/**
 * The output of a manual or paused call, supplied on continue (`toolOutputs`); the same
 * shape answers an approval-gated call in the tool's place (`responses`: the tool never runs).
 */
final class ToolOutput
{
    public function __construct(public readonly string $toolCallId, public readonly mixed $output)
    {
    }
}

/** Cancels the runs it is given to: `cancel()` now, or `cancelAfter($ms)`. */
final class CancelToken
{
    /** @var list<int> */
    private array $runs = [];
    private bool $cancelled = false;

    /** Cancels every run started with this token (they end `cancelled`). */
    public function cancel(): void
    {
        $this->cancelled = true;
        foreach ($this->runs as $run) {
            phaseo_run_cancel($run);
        }
    }

    /** Cancels after `$ms` milliseconds (measured while a run is being waited for). */
    public function cancelAfter(int|float $ms): void
    {
        Internal\Scheduler::timer(Internal\Scheduler::now() + $ms / 1000, fn () => $this->cancel());
    }

    /** Whether cancel() was called. */
    public function isCancelled(): bool
    {
        return $this->cancelled;
    }

    /** @internal */
    public function attach(int $run): void
    {
        $this->runs[] = $run;
        if ($this->cancelled) {
            phaseo_run_cancel($run);
        }
    }
}
