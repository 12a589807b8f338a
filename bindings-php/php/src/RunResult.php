<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

use Phaseo\AgentSdk\Internal\EndedState;
use Phaseo\AgentSdk\Internal\Json;
use Phaseo\AgentSdk\Internal\Native;

/**
 * A run's result: its state (canonical JSON, continued later by any language: `toJson()` /
 * `RunResult::fromJson($text)`) and what applications read (`status()`, `output()`, …).
 * `$run` is the run record (`id`, `status`, `result`, `context`, `messages`, `usage`,
 * `pause`, `error`, `stopReason`, …), `$output` the final output.
 */
final class RunResult implements \JsonSerializable, \Stringable
{
    /** @var array<string, mixed> the run record */
    public readonly array $run;
    public readonly mixed $output;
    /** @var list<array> */
    public readonly array $messages;
    /** @var array<string, mixed> */
    public readonly array $usage;

    /** The run's status when it was known without decoding the state. */
    private readonly ?string $knownStatus;
    /** Whether `$run`, `$messages` and `$usage` were read from the state's text. */
    private bool $decoded = false;

    /** The state's canonical JSON text, or the ended run's state whose text is not written yet. */
    private string|EndedState $state;

    /**
     * @internal the canonical JSON text of a state (or the state of a run that ended, its
     * text written when first read); `$known`, what the run's end said of it (`status`,
     * `output`): then `$run`, `$messages` and `$usage` are decoded from the text the first
     * time one of them is read (a run's caller often reads only its output).
     */
    public function __construct(string|EndedState $json, ?array $known = null)
    {
        $this->state = $json;
        if ($known !== null && isset($known['status']) && array_key_exists('output', $known)) {
            $this->knownStatus = (string) $known['status'];
            $this->output = $known['output'];
            unset($this->run, $this->messages, $this->usage);
            return;
        }
        $this->knownStatus = null;
        $this->decode();
        $this->output = $this->run['result'] ?? null;
    }

    /** Reads the run record, its messages and usage from the state's text (once). */
    private function decode(): void
    {
        if ($this->decoded) {
            return;
        }
        $this->decoded = true;
        $state = Json::decode($this->json());
        $this->run = $state['run'] ?? [];
        $this->messages = $this->run['messages'] ?? [];
        $this->usage = $this->run['usage'] ?? [];
    }

    /** @internal the first read of `$run`, `$messages` or `$usage` decodes the state */
    public function __get(string $name): mixed
    {
        if (!in_array($name, ['run', 'messages', 'usage'], true)) {
            trigger_error('Undefined property: ' . self::class . '::$' . $name, E_USER_WARNING);
            return null;
        }
        $this->decode();
        return $this->$name;
    }

    /** @internal as __get, for isset() and empty() */
    public function __isset(string $name): bool
    {
        if (!in_array($name, ['run', 'messages', 'usage'], true)) {
            return false;
        }
        $this->decode();
        return isset($this->$name);
    }

    /**
     * Reads a state from its JSON text (throws StateError, code `state_invalid`, when it is
     * not a valid state, including text that is not UTF-8).
     */
    public static function fromJson(string $text): self
    {
        return new self(Native::call(fn () => phaseo_state_canonical($text)));
    }

    /**
     * Reads a state from its decoded form (`jsonSerialize()`, `json_decode($text, true)` or
     * `json_decode($text)`; StateError, code `state_invalid`, when it is not a valid state).
     * An empty JSON object decoded as `[]` is written back as `[]`.
     */
    public static function fromArray(array $state): self
    {
        return self::fromJson(self::text($state));
    }

    /**
     * The JSON text of a decoded state, or the StateError of one JSON cannot hold: a state
     * nests at most 64 + 8 levels from its root (its own structure and the values in it),
     * each paused agent tool's state in it the same from its own root.
     * @internal
     */
    public static function text(array $state): string
    {
        try {
            return Json::encode($state, Json::STATE_DEPTH);
        } catch (\JsonException $e) {
            throw new StateError('Invalid state: ' . $e->getMessage(), 'state_invalid');
        }
    }

    /** The canonical JSON text of the state (store it; continue from it later). */
    public function toJson(): string
    {
        return $this->json();
    }

    public function __toString(): string
    {
        return $this->json();
    }

    public function jsonSerialize(): mixed
    {
        return Json::decode($this->json());
    }

    /** The state's text, written by the extension the first time it is read. */
    private function json(): string
    {
        if ($this->state instanceof EndedState) {
            $this->state = $this->state->text();
        }
        return $this->state;
    }

    /** `completed`, `waiting_for_human`, `failed`, `cancelled`, … */
    public function status(): string
    {
        return $this->knownStatus ?? (string) ($this->run['status'] ?? '');
    }

    /** The final output (null unless completed or stopped). */
    public function output(): mixed
    {
        return $this->output;
    }

    /** The run id. */
    public function runId(): string
    {
        return (string) ($this->run['id'] ?? '');
    }

    /** Why the run stopped early, if it did. */
    public function stopReason(): ?string
    {
        return $this->run['stopReason'] ?? null;
    }

    /** The final application context. */
    public function context(): mixed
    {
        return $this->run['context'] ?? null;
    }

    /** The pause (`kind`, `reason`, `payload`, `pendingToolCalls`), when the run waits. */
    public function pause(): ?array
    {
        return $this->run['pause'] ?? null;
    }

    /** The calls waiting for a decision or an output (`['call' => [...], 'kind' => ...]`). */
    public function pending(): array
    {
        return $this->pause()['pendingToolCalls'] ?? [];
    }

    /** The run's error record (`code`, `message`), when it failed. */
    public function error(): ?array
    {
        return $this->run['error'] ?? null;
    }
}
