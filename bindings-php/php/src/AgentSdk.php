<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

use Phaseo\AgentSdk\Internal\Json;
use Phaseo\AgentSdk\Internal\Native;

/**
 * The entry points, with the product's names: `AgentSdk::defineTool(new Tool(...))`,
 * `AgentSdk::createAgent(new AgentDefinition(...))`, the stop conditions, the clients and
 * the JSON Schema validator helper.
 */
final class AgentSdk
{
    /** Checks a tool's definition early (the core checks it again with its agent). */
    public static function defineTool(Tool $tool): Tool
    {
        $spec = new Internal\Spec();
        try {
            $json = Internal\Spec::json(['id' => '__define_tool__', 'tools' => [$spec->tool($tool)]]);
            phaseo_agent_free(Native::call(fn () => phaseo_agent_new($json, 0)));
        } finally {
            Internal\Registry::release($spec->ids);
        }
        return $tool;
    }

    /** An agent (throws DefinitionError naming what is wrong). */
    public static function createAgent(AgentDefinition $definition): Agent
    {
        return new Agent($definition);
    }

    /** Stop after `n` steps. */
    public static function stepCountIs(int $n): array
    {
        return ['stepCountIs' => $n];
    }

    /** Stop once the run used `n` tokens. */
    public static function maxTokensUsed(int $n): array
    {
        return ['maxTokensUsed' => $n];
    }

    /** Stop once the run cost `x`. */
    public static function maxCost(float $x): array
    {
        return ['maxCost' => $x];
    }

    /** Stop once the run took `ms` milliseconds. */
    public static function maxDuration(int $milliseconds): array
    {
        return ['maxDuration' => $milliseconds];
    }

    /** Stop after a call to this tool. */
    public static function hasToolCall(string $name): array
    {
        return ['hasToolCall' => $name];
    }

    /** Stop when the model finishes for this reason. */
    public static function finishReasonIs(string $reason): array
    {
        return ['finishReasonIs' => $reason];
    }

    /**
     * A validator of a JSON Schema (checked by the core, its messages): `fn ($value)`
     * returning the value, throwing \InvalidArgumentException with the reason when invalid.
     */
    public static function jsonSchemaValidator(array|bool $schema): \Closure
    {
        try {
            $json = Json::encode(Json::schema(Json::plain($schema)));
        } catch (\JsonException $e) {
            throw new DefinitionError('Invalid JSON Schema: ' . $e->getMessage(), 'definition_invalid');
        }
        $handle = Native::call(fn () => phaseo_schema_new($json));
        $holder = new class ($handle) {
            public function __construct(public readonly int $handle)
            {
            }

            public function __destruct()
            {
                phaseo_schema_free($this->handle);
            }
        };
        return static function (mixed $value) use ($holder): mixed {
            try {
                $json = Json::encode($value);
            } catch (\JsonException $e) {
                throw new \InvalidArgumentException(Json::reason($e, 'the value'), 0, $e);
            }
            $problem = Native::call(fn () => phaseo_schema_check($holder->handle, $json));
            if ($problem !== null) {
                throw new \InvalidArgumentException($problem);
            }
            return $value;
        };
    }

    /**
     * The gateway client, with the product's options (a GatewayAgentClientOptions or an
     * array of the same names: `clientOptions`, `model`, `preset`, the body fields,
     * `requestOptions`), plus `apiKey`, `baseUrl`, `headers`, `timeoutMs`, `bodyDefaults`.
     */
    public static function createGatewayAgentClient(GatewayAgentClientOptions|array|null $options = null): HttpClient
    {
        return new HttpClient('gateway', GatewayAgentClientOptions::native($options ?? []));
    }

    /** A client of any OpenAI-compatible `/chat/completions` endpoint. */
    public static function createOpenAICompatibleClient(array $options = []): HttpClient
    {
        return new HttpClient('openai-compatible', $options);
    }

    /**
     * Lets PHP functions still in flight finish (calls the core stopped waiting for, such as
     * a timed-out tool sleeping in its Fiber), for up to `$ms` milliseconds; true when none
     * is left. Runs do this for each other; call it before exiting to let them clean up.
     */
    public static function settle(int|float $ms = 1000): bool
    {
        return Internal\Scheduler::settle((float) $ms);
    }

    /** Whether `enableTracing` registered its exit hook already. */
    private static bool $tracingExitHook = false;

    /**
     * Records a span tree per run (`invoke_agent`, `chat`, `execute_tool`: OpenTelemetry
     * GenAI conventions, made by the core) and exports it over OTLP HTTP/protobuf.
     *
     * Unset options come from the standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
     * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`,
     * `OTEL_SERVICE_NAME`). `captureContent: true` records tool arguments and results and the
     * model's messages (off: they may hold personal data). A run continued from a paused
     * state joins the paused run's trace, whatever language paused it; a run given
     * `traceparent:` (W3C) becomes a child of that span. What is left is exported when the
     * script ends; `flushTracing()` exports earlier. Bad options throw DefinitionError
     * naming the option.
     *
     * @param array<string, string>|null $headers
     */
    public static function enableTracing(
        ?string $endpoint = null,
        ?array $headers = null,
        ?string $serviceName = null,
        bool $captureContent = false,
    ): void {
        $options = array_filter(
            ['endpoint' => $endpoint, 'headers' => $headers, 'serviceName' => $serviceName],
            static fn ($x) => $x !== null,
        );
        $options['captureContent'] = $captureContent;
        if (isset($options['headers']) && $options['headers'] === []) {
            unset($options['headers']);
        }
        try {
            $json = Json::encode($options);
        } catch (\JsonException $e) {
            throw new DefinitionError('Invalid tracing options: ' . $e->getMessage(), 'definition_invalid');
        }
        Native::call(fn () => phaseo_tracing_enable($json));
        if (!self::$tracingExitHook) {
            self::$tracingExitHook = true;
            // An unreachable collector must not fail the script's end.
            register_shutdown_function(static function (): void {
                phaseo_tracing_shutdown();
            });
        }
    }

    /** Exports every span ended so far and waits for the collector (RuntimeException when the export failed). */
    public static function flushTracing(): void
    {
        $error = phaseo_tracing_flush();
        if ($error !== null) {
            throw new \RuntimeException("flushTracing: {$error}");
        }
    }

    /** Exports what is left and turns tracing off (RuntimeException when the export failed). */
    public static function shutdownTracing(): void
    {
        $error = phaseo_tracing_shutdown();
        if ($error !== null) {
            throw new \RuntimeException("shutdownTracing: {$error}");
        }
    }

    /** Whether tracing is on. */
    public static function tracingEnabled(): bool
    {
        return phaseo_tracing_enabled();
    }

    /** The SDK's version. */
    public static function version(): string
    {
        return phaseo_version();
    }
}
