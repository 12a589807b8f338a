<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Internal;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\McpServer;
use Phaseo\AgentSdk\Tool;
use Phaseo\AgentSdk\ToolDecision;
use Phaseo\AgentSdk\ToolOutput;

/**
 * Definitions and options as the canonical JSON the core reads (the names of docs/behaviour.md, camelCase;
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

    /**
     * A field of a definition as JSON takes it, or the DefinitionError naming it: nested at
     * most 64 levels with no cycle (checked before PHP's json_encode, which would crash on
     * a deep value and loop on a cyclic one), then everything else json_encode refuses
     * (NaN or INF, text that is not UTF-8, …).
     *
     * @param string $owner how the core names what is defined (`Invalid definition of tool 't'`)
     */
    private static function field(string $owner, string $name, mixed $value): mixed
    {
        try {
            $plain = Json::plain($value);
            Json::encode($plain);
            return $plain;
        } catch (\JsonException $e) {
            throw new DefinitionError("{$owner}: {$name}: {$e->getMessage()}", 'definition_invalid');
        }
    }

    /** A callable field: its callback, or the DefinitionError naming it. */
    private function callable(string $owner, string $name, mixed $v): ?array
    {
        if ($v === null) {
            return null;
        }
        if (!is_callable($v)) {
            throw new DefinitionError("{$owner}: {$name} must be callable or null, got " . get_debug_type($v), 'definition_invalid');
        }
        return $this->fn($v);
    }

    /** A schema field: a PHP validator (a function) or a JSON Schema. */
    private function validator(string $owner, string $name, mixed $v): mixed
    {
        if ($v === null) {
            return null;
        }
        return self::isFn($v) ? $this->fn($v) : Json::schema(self::field($owner, $name, $v));
    }

    /** A value or a function of the turn. */
    private function dynamic(string $owner, string $name, mixed $v): mixed
    {
        return self::isFn($v) ? $this->fn($v) : self::field($owner, $name, $v);
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

    /**
     * A tool's JSON. What PHP's types already refuse stays PHP's TypeError (see Tool);
     * anything else wrong is a DefinitionError naming the field, here or from the core.
     */
    public function tool(Tool $t): array
    {
        $owner = 'Invalid definition of tool \'' . Json::text($t->id) . '\'';
        $approval = $t->requireApproval;
        if ($approval !== null && !is_bool($approval) && !is_callable($approval)) {
            throw new DefinitionError("{$owner}: requireApproval must be a bool or callable, got " . get_debug_type($approval), 'definition_invalid');
        }
        $ntp = $t->nextTurnParams;
        return array_filter([
            'id' => self::field($owner, 'id', $t->id),
            'description' => self::field($owner, 'description', $t->description ?? ''),
            'parameters' => $t->parameters === null ? null : Json::schema(self::field($owner, 'parameters', $t->parameters)),
            'execute' => $this->callable($owner, 'execute', $t->execute),
            'timeoutMs' => self::field($owner, 'timeoutMs', $t->timeoutMs),
            'requireApproval' => is_bool($approval) || $approval === null ? ($approval ? true : null) : $this->fn($approval),
            'onError' => self::field($owner, 'onError', $t->onError),
            'inputSchema' => $this->validator($owner, 'inputSchema', $t->inputSchema),
            'outputSchema' => $this->validator($owner, 'outputSchema', $t->outputSchema),
            'eventSchema' => $this->validator($owner, 'eventSchema', $t->eventSchema),
            'onToolCalled' => $this->callable($owner, 'onToolCalled', $t->onToolCalled),
            'onResponseReceived' => $this->callable($owner, 'onResponseReceived', $t->onResponseReceived),
            'nextTurnParams' => self::isFn($ntp)
                ? $this->fn(static fn ($input, $rt) => self::nextTurnKeys($ntp($input, $rt)))
                : ($ntp === null ? null : self::nextTurnKeys(self::field($owner, 'nextTurnParams', $ntp))),
            'strict' => $t->strict,
            'inputExamples' => $t->inputExamples === null ? null : self::field($owner, 'inputExamples', $t->inputExamples),
            'maxCalls' => $t->maxCalls,
            'retry' => $t->retry?->spec(),
            'deferLoading' => $t->deferLoading,
            'agent' => $t->agent === null ? null : $this->agent($t->agent),
            'annotations' => $t->annotations === null ? null : self::field($owner, 'annotations', $t->annotations),
        ], static fn ($x) => $x !== null);
    }

    /** Stop conditions: built-ins (arrays) or callables `fn (array $state)`. */
    public function stopWhen(mixed $c, string $owner = 'Invalid run options'): ?array
    {
        if ($c === null) {
            return null;
        }
        $list = is_array($c) && array_is_list($c) ? $c : [$c];
        return array_map(fn ($x) => self::isFn($x) ? $this->fn($x) : self::field($owner, 'stopWhen', $x), $list);
    }

    /** An agent definition's JSON (a field PHP's types let through but JSON cannot hold is a DefinitionError naming it). */
    public function agent(AgentDefinition $d): array
    {
        $owner = 'Invalid agent definition';
        foreach ($d->tools as $i => $t) {
            if (!$t instanceof Tool) {
                throw new DefinitionError("{$owner}: tools[{$i}] must be a Phaseo\\AgentSdk\\Tool, got " . get_debug_type($t), 'definition_invalid');
            }
        }
        foreach ($d->mcpServers as $i => $s) {
            if (!$s instanceof McpServer) {
                throw new DefinitionError("{$owner}: mcpServers[{$i}] must be a Phaseo\\AgentSdk\\McpServer, got " . get_debug_type($s), 'definition_invalid');
            }
        }
        $secrets = $d->stateSecret === null ? null : (is_array($d->stateSecret) ? $d->stateSecret : [$d->stateSecret]);
        return array_filter([
            'id' => self::field($owner, 'id', $d->id),
            'tools' => array_map(fn (Tool $t) => $this->tool($t), array_values($d->tools)),
            'model' => $this->dynamic($owner, 'model', $d->model),
            'instructions' => $this->dynamic($owner, 'instructions', $d->instructions),
            'temperature' => $this->dynamic($owner, 'temperature', $d->temperature),
            'maxOutputTokens' => $this->dynamic($owner, 'maxOutputTokens', $d->maxOutputTokens),
            'topP' => $this->dynamic($owner, 'topP', $d->topP),
            'maxSteps' => $d->maxSteps,
            'stopWhen' => $this->stopWhen($d->stopWhen, $owner),
            'modelRetry' => self::field($owner, 'modelRetry', $d->modelRetry),
            'toolExecution' => self::field($owner, 'toolExecution', $d->toolExecution),
            'outputSchema' => $this->validator($owner, 'outputSchema', $d->outputSchema),
            'requireApproval' => $this->callable($owner, 'requireApproval', $d->requireApproval),
            'humanReview' => $this->callable($owner, 'humanReview', $d->humanReview),
            'stateSecrets' => self::field($owner, 'stateSecret', $secrets),
            'toolChoice' => $this->dynamic($owner, 'toolChoice', $d->toolChoice),
            'parallelToolCalls' => $d->parallelToolCalls,
            'activeTools' => $this->dynamic($owner, 'activeTools', $d->activeTools),
            'lease' => self::field($owner, 'lease', $d->lease),
            'mcpServers' => $d->mcpServers === [] ? null : array_map(fn (McpServer $s) => $s->spec(fn ($f) => $this->fn($f)), array_values($d->mcpServers)),
        ], static fn ($x) => $x !== null);
    }

    /**
     * The JSON text of a definition built by tool() or agent(): its fields are checked
     * already, the whole may still nest too deep (the core reads it at most 64 levels deep).
     */
    public static function json(array $definition): string
    {
        try {
            return Json::encode($definition, Json::STATE_DEPTH);
        } catch (\JsonException $e) {
            throw new DefinitionError('Invalid agent definition: ' . $e->getMessage(), 'definition_invalid');
        }
    }

    /** Run overrides (docs/behaviour.md §3 names). */
    public function overrides(array $o): array
    {
        if (array_key_exists('stopWhen', $o)) {
            $o['stopWhen'] = $this->stopWhen($o['stopWhen']);
        }
        return array_filter($o, static fn ($x) => $x !== null);
    }

    /**
     * Approvals or rejections; an `editedInput` (null: none) goes to the core, which checks
     * it against the tool and the pending call.
     *
     * @param list<string|ToolDecision|array> $list
     */
    public static function decisions(array $list): array
    {
        return array_map(static fn ($d) => match (true) {
            is_string($d) => $d,
            $d instanceof ToolDecision => array_filter(
                ['toolCallId' => $d->toolCallId, 'reason' => $d->reason, 'editedInput' => $d->editedInput],
                static fn ($x) => $x !== null,
            ),
            is_array($d) && isset($d['toolCallId']) => $d,
            default => throw new \InvalidArgumentException('a decision is a call id, a ToolDecision or [\'toolCallId\' => ..., \'reason\' => ..., \'editedInput\' => ...], got ' . get_debug_type($d)),
        }, array_values($list));
    }

    /**
     * Tool outputs or responses (`$what` names which in the error).
     *
     * @param list<ToolOutput|array> $list
     */
    public static function outputs(array $list, string $what = 'a tool output'): array
    {
        return array_map(static fn ($o) => match (true) {
            $o instanceof ToolOutput => ['toolCallId' => $o->toolCallId, 'output' => $o->output],
            is_array($o) && isset($o['toolCallId']) => ['toolCallId' => $o['toolCallId'], 'output' => $o['output'] ?? null],
            default => throw new \InvalidArgumentException($what . ' is a ToolOutput or [\'toolCallId\' => ..., \'output\' => ...], got ' . get_debug_type($o)),
        }, array_values($list));
    }
}
