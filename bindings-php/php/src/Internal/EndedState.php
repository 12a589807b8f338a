<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Internal;

/**
 * The state of a run that ended, held by the extension until its text is first read
 * (`RunResult::toJson()`, or anything of the result other than its status and output): a
 * run's state is written as text only when it is wanted. Shared by a result's copies;
 * the held state is let go of when the last of them is.
 */
final class EndedState
{
    private ?string $text = null;

    public function __construct(private readonly int $run)
    {
    }

    /** The state's canonical JSON text, written once. */
    public function text(): string
    {
        return $this->text ??= Native::call(fn () => phaseo_run_state($this->run));
    }

    public function __destruct()
    {
        if ($this->text === null) {
            phaseo_run_state_free($this->run);
        }
    }
}
