<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Internal;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\McpServer;
use Phaseo\AgentSdk\Tool;
use Phaseo\AgentSdk\ToolDecision;
use Phaseo\AgentSdk\ToolOutput;

/**
 * Definitions and options as the canonical JSON the core reads (SPEC names, camelCase;
 * every PHP callable as `{"$callback": id}`), collecting the callback ids it registers.
 */
final class Spec
{
    /** @var list<int> */
    public array $ids = [];

    /** A PHP function given as a value: a Closure or an invokable object (never a string). */
    public static function isFn(mixed $v): bool
    {
        return $v instanceof \Closure || (is_object($v) && method_exists($v, '__invoke'));
    }

    private function fn(callable $f): array
    {
        $id = Registry::add($f);
        $this->ids[] = $id;
        return ['$callback' => $id];
    }

    private function validator(mixed $v): mixed
    {
        if ($v === null) {
            return null;
        }
        return self::isFn($v) ? $this->fn($v) : Json::schema($v);
    }

    private function dynamic(mixed $v): mixed
    {
        return self::isFn($v) ? $this->fn($v) : $v;
    }

    private static function nextTurnKeys(mixed $v): mixed
    {
        if (!is_array($v)) {
            return $v;
        }
        $map = ['max_output_tokens' => 'maxOutputTokens', 'top_p' => 'topP', 'tool_choice' => 'toolChoice'];
        $out = [];
        foreach ($v as $k => $x) {
            $out[$map[$k] ?? $k] = $x;
        }
        return $out;
    }

    /** A tool's JSON. */
    public function tool(Tool $t): array
    {
        $approval = $t->requireApproval;
        $ntp = $t->nextTurnParams;
        return array_filter([
            'id' => $t->id,
            'description' => $t->description ?? '',
            'parameters' => $t->parameters === null ? null : Json::schema($t->parameters),
            'execute' => $t->execute === null ? null : $this->fn($t->execute),
            'timeoutMs' => $t->timeoutMs,
            'requireApproval' => self::isFn($approval) ? $this->fn($approval) : ($approval ? true : null),
            'onError' => $t->onError,
            'inputSchema' => $this->validator($t->inputSchema),
            'outputSchema' => $this->validator($t->outputSchema),
            'eventSchema' => $this->validator($t->eventSchema),
            'onToolCalled' => $t->onToolCalled === null ? null : $this->fn($t->onToolCalled),
            'onResponseReceived' => $t->onResponseReceived === null ? null : $this->fn($t->onResponseReceived),
            'nextTurnParams' => $ntp instanceof \Closure
                ? $this->fn(static fn ($input, $rt) => self::nextTurnKeys($ntp($input, $rt)))
                : ($ntp === null ? null : self::nextTurnKeys($ntp)),
            'strict' => $t->strict,
            'inputExamples' => $t->inputExamples,
        ], static fn ($x) => $x !== null);
    }

    /** Stop conditions: built-ins (arrays) or callables `fn (array $state)`. */
    public function stopWhen(mixed $c): ?array
    {
        if ($c === null) {
            return null;
        }
        $list = is_array($c) && array_is_list($c) ? $c : [$c];
        return array_map(fn ($x) => self::isFn($x) ? $this->fn($x) : $x, $list);
    }

    /** An agent definition's JSON. */
    public function agent(AgentDefinition $d): array
    {
        foreach ($d->tools as $t) {
            if (!$t instanceof Tool) {
                throw new \InvalidArgumentException('tools must be Phaseo\AgentSdk\Tool values, got ' . get_debug_type($t));
            }
        }
        $secrets = $d->stateSecret === null ? null : (is_array($d->stateSecret) ? $d->stateSecret : [$d->stateSecret]);
        return array_filter([
            'id' => $d->id,
            'tools' => array_map(fn (Tool $t) => $this->tool($t), $d->tools),
            'model' => $this->dynamic($d->model),
            'instructions' => $this->dynamic($d->instructions),
            'temperature' => $this->dynamic($d->temperature),
            'maxOutputTokens' => $this->dynamic($d->maxOutputTokens),
            'topP' => $this->dynamic($d->topP),
            'maxSteps' => $d->maxSteps,
            'stopWhen' => $this->stopWhen($d->stopWhen),
            'modelRetry' => $d->modelRetry,
            'toolExecution' => $d->toolExecution,
            'outputSchema' => $this->validator($d->outputSchema),
            'requireApproval' => $d->requireApproval === null ? null : $this->fn($d->requireApproval),
            'humanReview' => $d->humanReview === null ? null : $this->fn($d->humanReview),
            'stateSecrets' => $secrets,
            'toolChoice' => $this->dynamic($d->toolChoice),
            'parallelToolCalls' => $d->parallelToolCalls,
            'activeTools' => $this->dynamic($d->activeTools),
            'lease' => $d->lease,
            'mcpServers' => $d->mcpServers === [] ? null : array_map(fn (McpServer $s) => $s->spec(fn ($f) => $this->fn($f)), $d->mcpServers),
        ], static fn ($x) => $x !== null);
    }

    /** Run overrides (SPEC §3 names). */
    public function overrides(array $o): array
    {
        if (array_key_exists('stopWhen', $o)) {
            $o['stopWhen'] = $this->stopWhen($o['stopWhen']);
        }
        return array_filter($o, static fn ($x) => $x !== null);
    }

    /** @param list<string|ToolDecision|array> $list */
    public static function decisions(array $list): array
    {
        return array_map(static fn ($d) => match (true) {
            is_string($d) => $d,
            $d instanceof ToolDecision => array_filter(['toolCallId' => $d->toolCallId, 'reason' => $d->reason], static fn ($x) => $x !== null),
            is_array($d) && isset($d['toolCallId']) => $d,
            default => throw new \InvalidArgumentException('a decision is a call id, a ToolDecision or [\'toolCallId\' => ..., \'reason\' => ...], got ' . get_debug_type($d)),
        }, array_values($list));
    }

    /** @param list<ToolOutput|array> $list */
    public static function outputs(array $list): array
    {
        return array_map(static fn ($o) => match (true) {
            $o instanceof ToolOutput => ['toolCallId' => $o->toolCallId, 'output' => $o->output],
            is_array($o) && isset($o['toolCallId']) => ['toolCallId' => $o['toolCallId'], 'output' => $o['output'] ?? null],
            default => throw new \InvalidArgumentException('a tool output is a ToolOutput or [\'toolCallId\' => ..., \'output\' => ...], got ' . get_debug_type($o)),
        }, array_values($list));
    }
}
