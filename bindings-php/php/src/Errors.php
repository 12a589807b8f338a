<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

/**
 * Every SDK error. `getCode()` is the docs/behaviour.md §9 code string (`tool_failed`, `max_steps`, …,
 * as PDOException carries SQLSTATE strings); `$result` is the failed run's state when
 * there is one (a refused continue has none); `$gateway` the HTTP details of a `gateway`
 * error (`status`, `statusText`, `requestId`, `reason`); `$target` what a validation
 * code checked (`tool_input`, `tool_output`, `tool_event`, `agent_output`).
 */
class AgentError extends \RuntimeException
{
    /** @param string $code the error code (docs/behaviour.md §9) */
    public function __construct(
        string $message,
        string $code,
        public readonly ?RunResult $result = null,
        public readonly ?array $gateway = null,
        public readonly ?string $target = null,
    ) {
        parent::__construct($message);
        $this->code = $code;
    }

    /** The HTTP status of a gateway error. */
    public function status(): ?int
    {
        return $this->gateway['status'] ?? null;
    }

    /** The request id of a gateway error. */
    public function requestId(): ?string
    {
        return $this->gateway['requestId'] ?? null;
    }

    /** The error code of docs/behaviour.md §9 (same as getCode()). */
    public function errorCode(): string
    {
        return (string) $this->code;
    }

    /**
     * The error of a native error's JSON `{"code","message","state"?}`.
     * @internal
     */
    public static function fromNative(string $json): self
    {
        try {
            $e = Internal\Json::decode($json);
        } catch (\JsonException) {
            return new self($json, 'invalid_argument');
        }
        if (!is_array($e) || !isset($e['code'])) {
            return new self($json, 'invalid_argument');
        }
        return self::fromArray($e);
    }

    /**
     * The error of a decoded native error `['code','message','state'?]`.
     * @internal
     */
    public static function fromArray(array $e): self
    {
        $class = match ($e['code']) {
            'definition_invalid' => DefinitionError::class,
            'state_invalid' => StateError::class,
            'continue_invalid' => ContinueError::class,
            'model_failed', 'gateway' => ModelError::class,
            'cancelled' => CancelledError::class,
            'max_steps' => MaxStepsError::class,
            'store_failed', 'lease_lost' => StoreError::class,
            'invalid_argument' => self::class,
            default => ToolError::class,
        };
        $state = isset($e['state']) ? new RunResult($e['state']) : null;
        return new $class((string) ($e['message'] ?? ''), (string) $e['code'], $state, $e['gateway'] ?? null, $e['target'] ?? null);
    }
}

/** The agent or a tool is defined wrongly (`definition_invalid`). */
class DefinitionError extends AgentError
{
}

/** A stored state cannot be read (`state_invalid`). */
class StateError extends AgentError
{
}

/** A continue was refused (`continue_invalid`); nothing ran. */
class ContinueError extends AgentError
{
}

/** A tool failed the run (`tool_failed`, `tool_timeout`, `unknown_tool`, validation codes). */
class ToolError extends AgentError
{
}

/** The model failed (`model_failed`, `gateway`). */
class ModelError extends AgentError
{
}

/** The run was cancelled (`cancelled`). */
class CancelledError extends AgentError
{
}

/** The run hit its step limit (`max_steps`). */
class MaxStepsError extends AgentError
{
}

/** A run store failed (`store_failed`, `lease_lost`). */
class StoreError extends AgentError
{
}
