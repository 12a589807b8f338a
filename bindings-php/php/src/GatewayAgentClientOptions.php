<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * The gateway client's options with the product's names:
 * `AgentSdk::createGatewayAgentClient(new GatewayAgentClientOptions(clientOptions: ['api_key'
 * => ..., 'base_url' => ...], model: ..., temperature: ...))`. The same names are accepted
 * as array keys.
 *
 * The key and base URL come from `clientOptions` (`api_key`, `base_url`, also `timeout_ms`
 * and `headers`; the camelCase spellings too) or `apiKey:` / `baseUrl:`, else from
 * `PHASEO_API_KEY` / `PHASEO_BASE_URL`. `model` is used when the agent names none, else
 * `@<preset>`. The body fields (`provider`, `reasoning`, `temperature`, `maxOutputTokens`,
 * `parallelToolCalls`, `metadata`, `user`, `responseFormat`, `includeMeta` → `meta`,
 * `webSearchOptions`, `plugins`, `toolChoice`, `providerOptions`, `promptCacheKey`) are
 * sent under their snake_case body names, over `requestOptions` (any other Responses body
 * field), unless the agent or run sets the same field; objects both set (`metadata`) are
 * merged. Unlike the product, `false`, `0` and `""` are sent (`parallelToolCalls: false`).
 * `client` (a `Phaseo\Sdk\Phaseo` instance) and `gatewayTools` are refused: this SDK has its
 * own HTTP client, and tools are defined on the agent.
 */
final class GatewayAgentClientOptions
{
    /** Product name => body field. */
    private const BODY = [
        'provider' => 'provider', 'reasoning' => 'reasoning', 'temperature' => 'temperature',
        'maxOutputTokens' => 'max_output_tokens', 'parallelToolCalls' => 'parallel_tool_calls',
        'metadata' => 'metadata', 'user' => 'user', 'responseFormat' => 'response_format',
        'includeMeta' => 'meta', 'webSearchOptions' => 'web_search_options', 'plugins' => 'plugins',
        'toolChoice' => 'tool_choice', 'providerOptions' => 'provider_options',
        'promptCacheKey' => 'prompt_cache_key',
    ];

    /** `clientOptions` key => the core's option. */
    private const CLIENT = [
        'api_key' => 'apiKey', 'apiKey' => 'apiKey', 'base_url' => 'baseUrl', 'baseUrl' => 'baseUrl',
        'timeout_ms' => 'timeoutMs', 'timeoutMs' => 'timeoutMs', 'headers' => 'headers',
    ];

    /**
     * @param array<string, mixed>|null $clientOptions
     * @param array<string, string>|null $metadata
     * @param array<string, mixed>|null $requestOptions
     * @param array<string, string>|null $headers
     */
    public function __construct(
        public readonly mixed $client = null,
        public readonly ?array $clientOptions = null,
        public readonly ?string $model = null,
        public readonly ?string $preset = null,
        public readonly ?array $provider = null,
        public readonly ?array $reasoning = null,
        public readonly ?float $temperature = null,
        public readonly ?int $maxOutputTokens = null,
        public readonly ?bool $parallelToolCalls = null,
        public readonly ?array $metadata = null,
        public readonly ?string $user = null,
        public readonly ?array $responseFormat = null,
        public readonly ?bool $includeMeta = null,
        public readonly ?array $webSearchOptions = null,
        public readonly ?array $plugins = null,
        public readonly ?array $gatewayTools = null,
        public readonly mixed $toolChoice = null,
        public readonly ?array $providerOptions = null,
        public readonly ?string $promptCacheKey = null,
        public readonly ?array $requestOptions = null,
        public readonly ?string $apiKey = null,
        public readonly ?string $baseUrl = null,
        public readonly ?array $headers = null,
        public readonly ?int $timeoutMs = null,
    ) {
    }

    /**
     * @internal the core's client options (`apiKey`, `baseUrl`, `model`, `preset`,
     * `headers`, `timeoutMs`, `bodyDefaults`) of these options or of an array using the
     * same names (other array keys are left for the core to refuse by name)
     */
    public static function native(self|array $options): array
    {
        $o = $options instanceof self ? get_object_vars($options) : $options;
        $o = array_filter($o, static fn ($x) => $x !== null);
        if (isset($o['client'])) {
            throw new \InvalidArgumentException('GatewayAgentClientOptions: client (a Phaseo\Sdk\Phaseo instance) is not supported: '
                . "pass clientOptions: ['api_key' => ..., 'base_url' => ...] instead");
        }
        if (isset($o['gatewayTools'])) {
            throw new \InvalidArgumentException('GatewayAgentClientOptions: gatewayTools is not supported: define the tools on the agent');
        }
        unset($o['client'], $o['gatewayTools']);
        foreach ($o['clientOptions'] ?? [] as $key => $value) {
            $name = self::CLIENT[$key] ?? throw new \InvalidArgumentException(
                "GatewayAgentClientOptions: unknown clientOptions key '{$key}' (expected api_key, base_url, timeout_ms or headers)");
            if ($value === null) {
                continue;
            }
            if (isset($o[$name]) && $o[$name] !== $value) {
                throw new \InvalidArgumentException("GatewayAgentClientOptions: {$name} is given both directly and in clientOptions");
            }
            $o[$name] = $value;
        }
        unset($o['clientOptions']);
        $body = array_merge($o['requestOptions'] ?? [], $o['bodyDefaults'] ?? []);
        unset($o['requestOptions'], $o['bodyDefaults']);
        foreach (self::BODY as $name => $field) {
            if (array_key_exists($name, $o)) {
                $body[$field] = $o[$name];
                unset($o[$name]);
            }
        }
        if ($body !== []) {
            $o['bodyDefaults'] = $body;
        }
        return $o;
    }
}
