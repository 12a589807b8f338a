<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

use Phaseo\AgentSdk\Internal\Json;
use Phaseo\AgentSdk\Internal\Native;

/**
 * A model client written in PHP: `generate(array $request): array` returns a response
 * `['text' => ..., 'toolCalls' => [['id','name','arguments']], 'usage' => [...],
 * 'finishReason' => ...]`. Any object with such a `generate` method works as a client.
 */
interface ModelClient
{
    /** @param array $request the model request (`messages`, `tools`, `model`, …) */
    public function generate(array $request): array;
}

/**
 * A PHP model client that streams: when the run is streamed (`$agent->stream(...)`),
 * `stream(array $request)` is iterated instead of `generate`, and what it yields reaches
 * the run's stream at once: `['type' => 'text-delta', 'delta' => ...]`,
 * `['type' => 'reasoning-delta', 'delta' => ...]`, a call's input as the model writes it
 * (docs/behaviour.md §16: `['type' => 'tool-input-start', 'toolCallId' => ..., 'toolName' => ...]`
 * then `['type' => 'tool-input-delta', 'toolCallId' => ..., 'delta' => ...]`, reported as the
 * run's `tool.input_started` and `tool.input_delta` events), `['type' => 'item', 'item' => [...]]`,
 * and last `['type' => 'response', 'response' => [...generate's answer...]]`.
 */
interface StreamingModelClient extends ModelClient
{
    /** @return iterable<array> */
    public function stream(array $request): iterable;
}

/** A client implemented in the core (scripted, test, HTTP). */
abstract class NativeClient
{
    /** @internal */
    protected function __construct(private readonly int $handle)
    {
    }

    public function __destruct()
    {
        phaseo_client_free($this->handle);
    }

    /** @internal */
    public function handle(): int
    {
        return $this->handle;
    }
}

/**
 * Scripted responses, consumed in order (for tests and demos): each `['text' => ...]`,
 * `['toolCalls' => [...]]`, `['fail' => ['message' => ...]]`, ….
 */
final class ScriptedClient extends NativeClient
{
    /** @param list<array> $responses */
    public function __construct(array $responses, int $used = 0)
    {
        try {
            $json = Json::encode(array_values($responses), Json::MAX_DEPTH + 1);
        } catch (\JsonException $e) {
            throw new \InvalidArgumentException(Json::reason($e, 'the scripted responses'), 0, $e);
        }
        parent::__construct(Native::call(fn () => phaseo_client_scripted($json, $used)));
    }

    /** How many responses were consumed. */
    public function cursor(): int
    {
        return phaseo_client_cursor($this->handle());
    }
}

/** The test client: answers with the input, offline. */
final class TestClient extends NativeClient
{
    public function __construct()
    {
        parent::__construct(phaseo_client_test());
    }
}

/**
 * An HTTP client (the core's): `kind` `gateway` (the Phaseo gateway; env fallback
 * `PHASEO_API_KEY`, `PHASEO_BASE_URL`) or `openai-compatible` (any `/chat/completions`).
 * Options: `apiKey`, `baseUrl`, `model`, `timeoutMs`, `headers`, and for the gateway
 * `preset`, `bodyDefaults`.
 */
final class HttpClient extends NativeClient
{
    public function __construct(string $kind, array $options = [])
    {
        try {
            $json = $options === [] ? null : Json::encode($options);
        } catch (\JsonException $e) {
            throw new DefinitionError('Invalid HTTP client options: ' . $e->getMessage(), 'definition_invalid');
        }
        parent::__construct(Native::call(fn () => phaseo_client_http($kind, $json)));
    }
}
