<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/** An approval or rejection on continue (a plain call id string works too). */
final class ToolDecision
{
    public function __construct(public readonly string $toolCallId, public readonly ?string $reason = null)
    {
    }
}

/** The output of a manual or paused call, supplied on continue. */
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
