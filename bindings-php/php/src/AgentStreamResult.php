<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

use Phaseo\AgentSdk\Internal\Scheduler;

/**
 * A streamed run: `fullStream()` yields its events (arrays with `type`, …) as they happen,
 * `textStream()` / `reasoningStream()` the deltas, `itemStream()` the items; `getResult()`
 * waits for the result (throws the run's AgentError); `cancel()` ends it `cancelled`.
 * Events are consumed once, in order, by whichever iterator takes them.
 */
final class AgentStreamResult implements \IteratorAggregate
{
    private ?RunResult $result = null;
    private ?AgentError $error = null;
    private bool $ended = false;

    /** @internal */
    public function __construct(private readonly int $run, private readonly \Closure $finish)
    {
    }

    /** Every event, as it happens. */
    public function fullStream(): \Generator
    {
        while (($e = Scheduler::nextEvent($this->run)) !== null) {
            yield $e;
        }
        $this->end();
    }

    public function getIterator(): \Generator
    {
        return $this->fullStream();
    }

    /** Text deltas. */
    public function textStream(): \Generator
    {
        foreach ($this->fullStream() as $e) {
            if ($e['type'] === 'response.output_text.delta') {
                yield $e['delta'];
            }
        }
    }

    /** Reasoning deltas. */
    public function reasoningStream(): \Generator
    {
        foreach ($this->fullStream() as $e) {
            if ($e['type'] === 'response.reasoning.delta') {
                yield $e['delta'];
            }
        }
    }

    /** Output items. */
    public function itemStream(): \Generator
    {
        foreach ($this->fullStream() as $e) {
            if (array_key_exists('item', $e)) {
                yield $e['item'];
            }
        }
    }

    /** Waits for the run's result (events not taken yet are dropped). */
    public function getResult(): RunResult
    {
        $this->end();
        if ($this->error !== null) {
            throw $this->error;
        }
        return $this->result;
    }

    /** Cancels the run. */
    public function cancel(): void
    {
        phaseo_run_cancel($this->run);
    }

    private function end(): void
    {
        if ($this->ended) {
            return;
        }
        $this->ended = true;
        try {
            $this->result = ($this->finish)();
        } catch (AgentError $e) {
            $this->error = $e;
        }
    }
}
