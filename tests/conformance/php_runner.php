<?php

// PHP conformance runner: runs the cross-language JSON cases through the PUBLIC API of the
// PHP binding (Phaseo\AgentSdk), with real PHP closures as executors, validators,
// predicates, hooks and a host model client (see tests/conformance/README.md). Started by
// php_runner.sh:
//   php_runner.sh [--stop-after N --save-state DIR | --resume-state DIR --from-step N] PATH...
// Executor forms: a closure (`async` absent or false: PHP has no async functions; every
// call runs in a Fiber of its own) or, with `asGenerator`, a Generator yielding progress.
// `sleepMs` is `$runtime->sleep()` (suspends the Fiber; ends early when cancelled).

declare(strict_types=1);

require __DIR__ . '/../../bindings-php/php/autoload.php';

use Phaseo\AgentSdk\Agent;
use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentError;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\CancelToken;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\Tool;
use Phaseo\AgentSdk\ToolCall;
use Phaseo\AgentSdk\ToolDecision;
use Phaseo\AgentSdk\ToolOutput;
use Phaseo\AgentSdk\ToolRetry;

/** A difference or an unsupported feature of a case. */
final class CaseError extends \Exception
{
}

const CASE_KEYS = ['name', 'description', 'agent', 'tools', 'model', 'steps', 'expectDefinitionError'];
const AGENT_KEYS = ['id', 'model', 'instructions', 'maxSteps', 'stopWhen', 'modelRetry', 'toolExecution', 'temperature',
    'maxOutputTokens', 'topP', 'outputSchema', 'requireApproval', 'humanReview', 'stateSecret', 'toolChoice',
    'parallelToolCalls', 'activeTools'];
const TOOL_KEYS = ['id', 'description', 'asAgent', 'parameters', 'inputSchema', 'outputSchema', 'eventSchema', 'timeoutMs', 'onError',
    'requireApproval', 'nextTurnParams', 'manual', 'onToolCalled', 'onResponseReceived', 'behavior', 'asGenerator', 'async',
    'strict', 'inputExamples', 'maxCalls', 'retry', 'deferLoading'];
const MODEL_ENTRY_KEYS = ['text', 'toolCalls', 'usage', 'cost', 'finishReason', 'fail'];
const OVERRIDE_KEYS = ['model', 'maxSteps', 'stopWhen', 'modelRetry', 'toolExecution', 'temperature', 'maxOutputTokens',
    'topP', 'toolChoice', 'parallelToolCalls', 'activeTools'];
const RUN_KEYS = ['input', 'context', 'messages', 'cancelAfterMs', ...OVERRIDE_KEYS];
const CONTINUE_KEYS = ['approvals', 'rejections', 'toolOutputs', 'responses', 'humanInput', 'context', 'cancelAfterMs', ...OVERRIDE_KEYS];
const EXPECT_KEYS = ['status', 'output', 'stopReason', 'pauseKind', 'context', 'error', 'pending', 'executed', 'cancelled',
    'maxConcurrent', 'modelRequests', 'events', 'toolEvents', 'preliminaryResults', 'usage', 'minWallMs', 'maxWallMs'];
const REQUEST_KEYS = ['toolMessages', 'tools', 'context', 'temperature', 'model', 'instructions', 'lastUserMessage',
    'maxOutputTokens', 'topP', 'toolChoice', 'parallelToolCalls', 'toolSpecs', 'toolCalls'];
const TOOL_SPEC_KEYS = ['id', 'strict', 'inputExamples'];
const USAGE_KEYS = ['inputTokens', 'outputTokens', 'cachedTokens', 'totalTokens', 'cost'];
const TERMINAL = ['return', 'returnInput', 'throw', 'returnContext', 'returnRuntime', 'returnAttempt', 'returnIdempotencyKey'];
const ACTIONS = [...TERMINAL, 'progress', 'setContext', 'sleepMs', 'blockingSleepMs', 'throwUntilAttempt'];
/** Actions whose object has a second key, `message`. */
const WITH_MESSAGE = ['throwUntilAttempt'];
const TOOL_EVENT_TYPES = ['tool.started', 'tool.preliminary_result', 'tool.completed', 'tool.failed', 'tool.retrying'];
const EXECUTOR_GRACE_MS = 1000;

/** JSON text to PHP, keeping objects distinct: non-empty objects as arrays, `{}` as stdClass. */
function decode_json(string $text): mixed
{
    return objects_to_arrays(json_decode($text, false, 512, JSON_THROW_ON_ERROR));
}

function objects_to_arrays(mixed $v): mixed
{
    if ($v instanceof \stdClass) {
        $a = get_object_vars($v);
        return $a === [] ? new \stdClass() : array_map('objects_to_arrays', $a);
    }
    return is_array($v) ? array_map('objects_to_arrays', $v) : $v;
}

function encode_json(mixed $v): string
{
    return json_encode($v, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION);
}

function is_obj(mixed $v): bool
{
    return $v instanceof \stdClass || (is_array($v) && ($v === [] || !array_is_list($v)));
}

/** Deep JSON equality: numbers by value; `{}` and `[]` are one value once PHP decoded them. */
function json_eq(mixed $a, mixed $b): bool
{
    if ($a instanceof \stdClass) {
        $a = [];
    }
    if ($b instanceof \stdClass) {
        $b = [];
    }
    if (is_bool($a) || is_bool($b)) {
        return $a === $b;
    }
    if ((is_int($a) || is_float($a)) && (is_int($b) || is_float($b))) {
        return (float) $a === (float) $b;
    }
    if (is_array($a) && is_array($b)) {
        if (array_is_list($a) && array_is_list($b)) {
            if (count($a) !== count($b)) {
                return false;
            }
            foreach ($a as $i => $x) {
                if (!json_eq($x, $b[$i])) {
                    return false;
                }
            }
            return true;
        }
        foreach (array_unique(array_merge(array_keys($a), array_keys($b))) as $k) {
            if (!json_eq($a[$k] ?? null, $b[$k] ?? null)) {
                return false;
            }
        }
        return true;
    }
    return $a === $b;
}

function show(mixed $v): string
{
    try {
        $s = encode_json($v);
    } catch (\Throwable) {
        $s = var_export($v, true);
    }
    return strlen($s) <= 300 ? $s : substr($s, 0, 300) . '…';
}

function text(mixed $v): string
{
    return is_string($v) ? $v : encode_json($v);
}

function diff(string $key, mixed $expected, mixed $actual): void
{
    if (!json_eq($expected, $actual)) {
        throw new CaseError("{$key}: expected " . show($expected) . ', got ' . show($actual));
    }
}

function check_keys(mixed $obj, array $allowed, string $what): void
{
    if (!is_array($obj) || array_is_list($obj)) {
        return;
    }
    foreach (array_keys($obj) as $k) {
        if (!in_array($k, $allowed, true)) {
            throw new CaseError("{$what}: unsupported key " . encode_json($k));
        }
    }
}

/** @return array{0: string, 1: mixed} */
function single_entry(mixed $action, string $what): array
{
    if (!is_array($action) || count($action) !== 1 || array_is_list($action)) {
        throw new CaseError("{$what} must be an object with one key: " . show($action));
    }
    return [array_key_first($action), $action[array_key_first($action)]];
}

/**
 * A behavior action: its key, its value and its `message` (`throwUntilAttempt` has one,
 * every other action has none).
 *
 * @return array{0: string, 1: mixed, 2: mixed}
 */
function behavior_action(mixed $action): array
{
    if (!is_array($action) || array_is_list($action)) {
        throw new CaseError('behavior action must be an object: ' . show($action));
    }
    $key = null;
    foreach (array_keys($action) as $k) {
        if ($k !== 'message') {
            $key = (string) $k;
            break;
        }
    }
    $wanted = in_array($key, WITH_MESSAGE, true) ? 2 : 1;
    if ($key === null || !in_array($key, ACTIONS, true) || count($action) !== $wanted
        || ($wanted === 2 && !array_key_exists('message', $action))) {
        throw new CaseError('unsupported behavior action ' . show($action));
    }
    return [$key, $action[$key], $action['message'] ?? null];
}

function deep_copy(mixed $v): mixed
{
    return $v === null ? null : decode_json(encode_json($v));
}

/** What executors record during one step. */
final class Observations
{
    public array $executed = [];
    public array $cancelled = [];
    public int $running = 0;
    public int $maxRunning = 0;
    public int $active = 0;

    public function reset(): void
    {
        $this->executed = [];
        $this->cancelled = [];
        $this->running = 0;
        $this->maxRunning = 0;
    }

    public function begin(string $id): void
    {
        $this->executed[] = $id;
        $this->active++;
        $this->running++;
        $this->maxRunning = max($this->maxRunning, $this->running);
    }

    public function end(): void
    {
        $this->running--;
        $this->active--;
    }

    public function snapshot(): array
    {
        $e = $this->executed;
        sort($e);
        $c = array_values(array_unique($this->cancelled));
        sort($c);
        return [$e, $c, $this->maxRunning];
    }
}

function runtime_value(RuntimeContext $rt): array
{
    if ($rt->runId === '') {
        throw new \RuntimeException('runtime run id is not a non-empty string');
    }
    return ['runId' => '<run>', 'agentId' => $rt->agentId, 'stepIndex' => $rt->stepIndex, 'toolCallId' => $rt->toolCall['id'] ?? null];
}

function terminal(string $key, mixed $arg, mixed $input, RuntimeContext $rt): mixed
{
    return match ($key) {
        'return' => deep_copy($arg),
        'returnInput' => $input,
        'throw' => throw new \RuntimeException(text($arg)),
        'returnContext' => $rt->context,
        'returnAttempt' => $rt->attempt,
        'returnIdempotencyKey' => idempotency_key($rt),
        default => runtime_value($rt),
    };
}

/** The runtime's idempotency key with its run id (checked to be its start) written `<run>`. */
function idempotency_key(RuntimeContext $rt): string
{
    $prefix = $rt->runId . ':';
    if ($rt->runId === '' || !str_starts_with($rt->idempotencyKey, $prefix)) {
        throw new \RuntimeException('idempotency key ' . encode_json($rt->idempotencyKey)
            . ' does not start with the run id ' . encode_json($rt->runId));
    }
    return '<run>:' . substr($rt->idempotencyKey, strlen($prefix));
}

/** The behaviour's actions up to a terminal one; yields progress values when `$yield`. */
function perform(array $actions, mixed $input, RuntimeContext $rt, Observations $obs, bool $yield): \Generator
{
    $callId = (string) ($rt->toolCall['id'] ?? '');
    foreach ($actions as [$key, $arg, $message]) {
        if (in_array($key, TERMINAL, true)) {
            return terminal($key, $arg, $input, $rt);
        }
        switch ($key) {
            case 'progress':
                if ($yield) {
                    yield deep_copy($arg);
                } else {
                    ($rt->emitProgress)(deep_copy($arg));
                }
                break;
            case 'setContext':
                ($rt->setContext)(deep_copy($arg));
                break;
            case 'sleepMs':
                if (!$rt->sleep((float) $arg) || $rt->cancelled()) {
                    $obs->cancelled[] = $callId;
                    throw new \RuntimeException('cancelled');
                }
                break;
            case 'blockingSleepMs':
                usleep((int) ((float) $arg * 1000));
                break;
            case 'throwUntilAttempt':
                if ($rt->attempt < (int) $arg) {
                    throw new \RuntimeException(text($message));
                }
                break;
        }
    }
    return null;
}

function executor(array $spec, Observations $obs): \Closure
{
    try {
        $actions = array_map(static fn ($a) => behavior_action($a), $spec['behavior'] ?? []);
    } catch (CaseError $e) {
        throw new CaseError('tool ' . encode_json($spec['id']) . ': ' . $e->getMessage());
    }
    if (($spec['asGenerator'] ?? false) === true) {
        return static function (mixed $input, RuntimeContext $rt) use ($actions, $obs): \Generator {
            $obs->begin((string) ($rt->toolCall['id'] ?? ''));
            try {
                return yield from perform($actions, $input, $rt, $obs, true);
            } finally {
                $obs->end();
            }
        };
    }
    return static function (mixed $input, RuntimeContext $rt) use ($actions, $obs): mixed {
        $obs->begin((string) ($rt->toolCall['id'] ?? ''));
        try {
            $g = perform($actions, $input, $rt, $obs, false);
            foreach ($g as $_) {
                // progress went through the runtime
            }
            return $g->getReturn();
        } finally {
            $obs->end();
        }
    };
}

function input_equals(mixed $expected, mixed $input): bool
{
    if (!is_array($input)) {
        return false;
    }
    foreach ($expected as $k => $v) {
        if (!array_key_exists($k, $input) || !json_eq($input[$k], $v)) {
            return false;
        }
    }
    return true;
}

function tool_approval(mixed $rule): mixed
{
    if ($rule === null || is_bool($rule)) {
        return $rule ?? false;
    }
    $expected = is_array($rule) ? ($rule['inputEquals'] ?? null) : null;
    if (!is_array($expected) || count($rule) !== 1) {
        throw new CaseError('tool requireApproval: unsupported rule ' . show($rule));
    }
    return static fn ($input, $rt) => input_equals($expected, $input);
}

function agent_approval(mixed $rule): \Closure
{
    [$key, $arg] = single_entry($rule, 'agent requireApproval');
    if ($key === 'toolIds' && is_array($arg)) {
        return static fn (ToolCall $call, $rt) => in_array($call->name, $arg, true);
    }
    if ($key === 'inputEquals' && is_array($arg)) {
        return static fn (ToolCall $call, $rt) => input_equals($arg, $call->input);
    }
    throw new CaseError('agent requireApproval: unsupported rule ' . show($rule));
}

function on_tool_called(mixed $form): ?\Closure
{
    if ($form === null) {
        return null;
    }
    if ($form === 'pause') {
        return static fn ($input, $rt) => null;
    }
    if (is_array($form) && array_keys($form) === ['return']) {
        return static fn ($input, $rt) => deep_copy($form['return']);
    }
    throw new CaseError('onToolCalled: unsupported form ' . show($form));
}

function on_response_received(mixed $form): ?\Closure
{
    if ($form === null) {
        return null;
    }
    if (is_array($form) && array_keys($form) === ['wrap'] && is_string($form['wrap'])) {
        $key = $form['wrap'];
        return static fn ($output, $rt) => [$key => $output];
    }
    throw new CaseError('onResponseReceived: unsupported form ' . show($form));
}

function human_review(mixed $form): \Closure
{
    if (!is_array($form) || array_keys($form) !== ['pauseOnFinal']) {
        throw new CaseError('humanReview: unsupported form ' . show($form));
    }
    $spec = $form['pauseOnFinal'] instanceof \stdClass ? [] : ($form['pauseOnFinal'] ?? []);
    check_keys($spec, ['reason', 'payload'], 'humanReview.pauseOnFinal');
    return static function (array $ctx) use ($spec): ?array {
        $users = count(array_filter($ctx['messages'] ?? [], static fn ($m) => ($m['role'] ?? null) === 'user'));
        return ($ctx['isFinal'] ?? false) && $users === 1
            ? ['reason' => $spec['reason'] ?? '', 'payload' => deep_copy($spec['payload'] ?? null)]
            : null;
    };
}

function stop_conditions(mixed $value): ?array
{
    if ($value === null) {
        return null;
    }
    $list = is_array($value) && array_is_list($value) ? $value : [$value];
    return array_map(static function ($item) {
        [$key, $arg] = single_entry($item, 'stopWhen condition');
        return match ($key) {
            'stepCountIs' => AgentSdk::stepCountIs(integral($arg)),
            'maxTokensUsed' => AgentSdk::maxTokensUsed(integral($arg)),
            'maxCost' => AgentSdk::maxCost((float) $arg),
            'maxDuration' => AgentSdk::maxDuration(integral($arg)),
            'hasToolCall' => AgentSdk::hasToolCall(text($arg)),
            'finishReasonIs' => AgentSdk::finishReasonIs(text($arg)),
            default => throw new CaseError('stopWhen: unsupported condition ' . encode_json($key)),
        };
    }, $list);
}

function tool_execution(mixed $value): ?array
{
    if ($value === null) {
        return null;
    }
    if ($value instanceof \stdClass) {
        return [];
    }
    check_keys($value, ['toolConcurrency', 'onError', 'maxOutputChars', 'maxToolCalls'], 'toolExecution');
    return $value;
}

function model_retry(mixed $value): ?array
{
    if ($value === null) {
        return null;
    }
    $value = $value instanceof \stdClass ? [] : $value;
    check_keys($value, ['maxRetries', 'backoffMs'], 'modelRetry');
    return ['maxRetries' => $value['maxRetries'] ?? 0, 'backoffMs' => $value['backoffMs'] ?? 250];
}

function build_tool(array $spec, Observations $obs): Tool
{
    check_keys($spec, TOOL_KEYS, 'tool');
    if (!is_string($spec['id'] ?? null)) {
        throw new CaseError('tool without id');
    }
    $validator = static fn (string $key) => array_key_exists($key, $spec) && $spec[$key] !== null
        ? AgentSdk::jsonSchemaValidator(schema_value($spec[$key]))
        : null;
    return AgentSdk::defineTool(new Tool(
        id: $spec['id'],
        execute: ($spec['manual'] ?? false) === true ? null : executor($spec, $obs),
        description: $spec['description'] ?? '',
        parameters: isset($spec['parameters']) ? schema_value($spec['parameters']) : null,
        timeoutMs: $spec['timeoutMs'] ?? null,
        inputSchema: $validator('inputSchema'),
        outputSchema: $validator('outputSchema'),
        eventSchema: $validator('eventSchema'),
        requireApproval: tool_approval($spec['requireApproval'] ?? null),
        onToolCalled: on_tool_called($spec['onToolCalled'] ?? null),
        onResponseReceived: on_response_received($spec['onResponseReceived'] ?? null),
        nextTurnParams: isset($spec['nextTurnParams']) ? (array) deep_copy($spec['nextTurnParams']) : null,
        onError: $spec['onError'] ?? null,
        strict: ($spec['strict'] ?? null) === true ? true : null,
        inputExamples: isset($spec['inputExamples']) ? deep_copy($spec['inputExamples']) : null,
        maxCalls: $spec['maxCalls'] ?? null,
        retry: tool_retry($spec['retry'] ?? null),
        deferLoading: $spec['deferLoading'] ?? null,
    ));
}

function tool_retry(mixed $value): ?ToolRetry
{
    if ($value === null) {
        return null;
    }
    $value = $value instanceof \stdClass ? [] : $value;
    check_keys($value, ['maxAttempts', 'backoffMs'], 'retry');
    return new ToolRetry(maxAttempts: integral($value['maxAttempts'] ?? 1), backoffMs: $value['backoffMs'] ?? 0);
}

/** A number a case wrote, compared by value (`2.0` is 2): an integral float as the `int` a PHP parameter takes. */
function integral(mixed $value): mixed
{
    return is_float($value) && is_finite($value) && floor($value) === $value && abs($value) < 2 ** 53 ? (int) $value : $value;
}

/** A JSON Schema as the PHP API takes it (an array; `{}` as []). */
function schema_value(mixed $v): array|bool
{
    return is_bool($v) ? $v : (array) json_decode(encode_json($v), true);
}

/** `{id, description?, asAgent: {agent, tools}}`: the nested agent built like the case's own
 * and registered with asTool (docs/behaviour.md §18). */
function agent_tool(array $spec, Observations $obs): Tool
{
    check_keys($spec, ['id', 'description', 'asAgent'], 'tool');
    check_keys($spec['asAgent'], ['agent', 'tools'], 'asAgent');
    $nested = build_agent($spec['asAgent'], $obs);
    if ($nested instanceof AgentError) {
        throw $nested;
    }
    return $nested->asTool(id: $spec['id'] ?? null, description: $spec['description'] ?? null);
}

function build_agent(array $c, Observations $obs): Agent|AgentError
{
    $a = $c['agent'] ?? null;
    if (!is_array($a)) {
        throw new CaseError('case without agent');
    }
    check_keys($a, AGENT_KEYS, 'agent');
    try {
        $tools = array_map(
            static fn ($t) => is_array($t) && array_key_exists('asAgent', $t) ? agent_tool($t, $obs) : build_tool($t, $obs),
            $c['tools'] ?? [],
        );
        return AgentSdk::createAgent(new AgentDefinition(
            id: $a['id'],
            model: $a['model'] ?? null,
            instructions: $a['instructions'] ?? null,
            tools: $tools,
            maxSteps: integral($a['maxSteps'] ?? null),
            humanReview: isset($a['humanReview']) ? human_review($a['humanReview']) : null,
            modelRetry: model_retry($a['modelRetry'] ?? null),
            toolExecution: tool_execution($a['toolExecution'] ?? null),
            stopWhen: stop_conditions($a['stopWhen'] ?? null),
            outputSchema: isset($a['outputSchema']) ? AgentSdk::jsonSchemaValidator(schema_value($a['outputSchema'])) : null,
            requireApproval: isset($a['requireApproval']) ? agent_approval($a['requireApproval']) : null,
            temperature: $a['temperature'] ?? null,
            maxOutputTokens: $a['maxOutputTokens'] ?? null,
            topP: $a['topP'] ?? null,
            toolChoice: $a['toolChoice'] ?? null,
            parallelToolCalls: $a['parallelToolCalls'] ?? null,
            activeTools: $a['activeTools'] ?? null,
            stateSecret: $a['stateSecret'] ?? null,
        ));
    } catch (AgentError $e) {
        return $e;
    }
}

function request_summary(array $request): array
{
    $messages = $request['messages'] ?? [];
    $tail = [];
    for ($i = count($messages) - 1; $i >= 0 && ($messages[$i]['role'] ?? null) === 'tool'; $i--) {
        array_unshift($tail, $messages[$i]);
    }
    $users = array_values(array_filter($messages, static fn ($m) => ($m['role'] ?? null) === 'user'));
    $tools = $request['tools'] ?? [];
    return [
        'toolMessages' => array_map(static fn ($m) => ['toolCallId' => $m['toolCallId'] ?? null, 'content' => $m['content'] ?? null,
            'isError' => ($m['isError'] ?? false) === true], $tail),
        'tools' => array_map(static fn ($t) => $t['id'] ?? null, $tools),
        'context' => $request['context'] ?? null,
        'temperature' => $request['temperature'] ?? null,
        'model' => $request['model'] ?? null,
        'instructions' => $request['instructions'] ?? null,
        'lastUserMessage' => $users === [] ? null : ($users[count($users) - 1]['content'] ?? null),
        'maxOutputTokens' => $request['maxOutputTokens'] ?? null,
        'topP' => $request['topP'] ?? null,
        'toolChoice' => $request['toolChoice'] ?? null,
        'parallelToolCalls' => $request['parallelToolCalls'] ?? null,
        'toolSpecs' => array_map(static fn ($t) => ['id' => $t['id'] ?? null, 'strict' => $t['strict'] ?? false,
            'inputExamples' => $t['inputExamples'] ?? null], $tools),
        'toolCalls' => last_tool_calls($messages),
    ];
}

/** The last assistant message's tool calls (`[{id, name, arguments}]`), as the model reads them. */
function last_tool_calls(array $messages): array
{
    foreach (array_reverse($messages) as $m) {
        $calls = $m['toolCalls'] ?? [];
        if ($calls !== []) {
            return array_map(static fn ($c) => ['id' => $c['id'] ?? null, 'name' => $c['name'] ?? null,
                'arguments' => $c['input'] ?? $c['arguments'] ?? null], $calls);
        }
    }
    return [];
}

/** The case's model: a PHP client (an object with `generate`) recording every request. */
final class ScriptedModel
{
    public array $requests = [];
    public ?string $ranOut = null;

    public function __construct(private readonly array $entries, public int $cursor)
    {
    }

    public function generate(array $request): array|\stdClass
    {
        $this->requests[] = request_summary($request);
        $index = $this->cursor++;
        if ($index >= count($this->entries)) {
            $this->ranOut = 'case error: the scripted model ran out of responses (' . count($this->entries) . ' scripted)';
            throw new \RuntimeException($this->ranOut);
        }
        $entry = $this->entries[$index];
        if (is_array($entry) && array_key_exists('fail', $entry)) {
            $f = $entry['fail'];
            throw new \RuntimeException(is_array($f) ? (string) ($f['message'] ?? '') : text($f));
        }
        return deep_copy($entry);
    }
}

function overrides(array $spec): array
{
    return array_filter([
        'model' => $spec['model'] ?? null,
        'maxSteps' => integral($spec['maxSteps'] ?? null),
        'stopWhen' => stop_conditions($spec['stopWhen'] ?? null),
        'modelRetry' => model_retry($spec['modelRetry'] ?? null),
        'toolExecution' => tool_execution($spec['toolExecution'] ?? null),
        'temperature' => $spec['temperature'] ?? null,
        'maxOutputTokens' => $spec['maxOutputTokens'] ?? null,
        'topP' => $spec['topP'] ?? null,
        'toolChoice' => $spec['toolChoice'] ?? null,
        'parallelToolCalls' => $spec['parallelToolCalls'] ?? null,
        'activeTools' => $spec['activeTools'] ?? null,
    ], static fn ($x) => $x !== null);
}

/** Approvals (`$edits`: an entry may carry `editedInput`) or rejections. */
function decisions(?array $items, bool $edits = false): array
{
    return array_map(static function ($d) use ($edits) {
        if (is_string($d)) {
            return $d;
        }
        if (!is_array($d) || !is_string($d['toolCallId'] ?? null)) {
            throw new CaseError('unsupported decision ' . show($d));
        }
        check_keys($d, $edits ? ['toolCallId', 'reason', 'editedInput'] : ['toolCallId', 'reason'], $edits ? 'approval' : 'rejection');
        return new ToolDecision($d['toolCallId'], $d['reason'] ?? null, deep_copy($d['editedInput'] ?? null));
    }, $items ?? []);
}

/** Tool outputs or responses (both `{toolCallId, output}`). */
function tool_outputs(?array $items, string $what = 'toolOutput'): array
{
    return array_map(static function ($o) use ($what) {
        check_keys($o, ['toolCallId', 'output'], $what);
        if (!is_array($o) || !is_string($o['toolCallId'] ?? null)) {
            throw new CaseError("{$what} without toolCallId: " . show($o));
        }
        return new ToolOutput($o['toolCallId'], deep_copy($o['output'] ?? null));
    }, $items ?? []);
}

/** One case's agent, model and current state across its steps. */
final class CaseRun
{
    /** @var RunResult|string|null a RunResult, or JSON text after an editState step */
    public mixed $state;

    public function __construct(private readonly Agent $agent, private readonly ScriptedModel $model,
        private readonly Observations $obs, mixed $state)
    {
        $this->state = $state;
    }

    public function step(array $step): array
    {
        $this->obs->reset();
        $this->model->requests = [];
        $events = [];
        $token = new CancelToken();
        $onEvent = static function (array $e) use (&$events): void {
            $events[] = $e;
        };
        if (array_key_exists('run', $step)) {
            $spec = $step['run'] instanceof \stdClass ? [] : $step['run'];
            $args = [
                'input' => deep_copy($spec['input'] ?? null),
                'client' => $this->model,
                'context' => deep_copy($spec['context'] ?? null),
                'messages' => isset($spec['messages']) ? deep_copy($spec['messages']) : null,
                'onEvent' => $onEvent,
                'cancel' => $token,
            ] + overrides($spec);
            $call = fn () => $this->agent->run(...$args);
        } elseif (array_key_exists('continue', $step)) {
            $spec = $step['continue'] instanceof \stdClass ? [] : $step['continue'];
            if ($this->state === null) {
                throw new CaseError('continue without a state');
            }
            $state = $this->state;
            $args = [
                'run' => $state,
                'client' => $this->model,
                'humanInput' => $spec['humanInput'] ?? null,
                'context' => deep_copy($spec['context'] ?? null),
                'approvals' => decisions($spec['approvals'] ?? null, edits: true),
                'rejections' => decisions($spec['rejections'] ?? null),
                'toolOutputs' => tool_outputs($spec['toolOutputs'] ?? null),
                'responses' => tool_outputs($spec['responses'] ?? null, 'response'),
                'onEvent' => $onEvent,
                'cancel' => $token,
            ] + overrides($spec);
            $call = fn () => $this->agent->continueRun(...$args);
        } else {
            throw new CaseError('a step is neither run nor continue');
        }
        if (isset($spec['cancelAfterMs'])) {
            $token->cancelAfter((float) $spec['cancelAfterMs']);
        }
        $started = hrtime(true);
        $error = null;
        try {
            $result = $call();
        } catch (AgentError $e) {
            $result = $e->result;
            $error = $e;
        }
        $wallMs = (hrtime(true) - $started) / 1e6;
        AgentSdk::settle(EXECUTOR_GRACE_MS);
        if ($this->model->ranOut !== null) {
            throw new CaseError($this->model->ranOut);
        }
        if ($result !== null) {
            try {
                $this->state = RunResult::fromJson($result->toJson());
            } catch (AgentError $e) {
                throw new CaseError('state round trip: ' . $e->getCode() . ': ' . $e->getMessage());
            }
        }
        [$executed, $cancelled, $max] = $this->obs->snapshot();
        return [
            'state' => $this->state instanceof RunResult ? $this->state : null,
            'error' => $error,
            'events' => $events,
            'requests' => $this->model->requests,
            'executed' => $executed,
            'cancelled' => $cancelled,
            'maxConcurrent' => $max,
            'wallMs' => $wallMs,
        ];
    }
}

function tool_message_matches(array $expected, array $actual): bool
{
    if (!json_eq($expected['toolCallId'] ?? null, $actual['toolCallId'] ?? null)) {
        return false;
    }
    if ((($expected['isError'] ?? false) === true) !== (($actual['isError'] ?? false) === true)) {
        return false;
    }
    $content = $actual['content'] ?? '';
    if (array_key_exists('content', $expected)) {
        try {
            $parsed = decode_json((string) $content);
        } catch (\JsonException) {
            $parsed = $content;
        }
        if (!json_eq($expected['content'], $parsed)) {
            return false;
        }
    }
    $contains = $expected['contentContains'] ?? null;
    return !is_string($contains) || str_contains((string) $content, $contains);
}

function check_request(int $i, array $expected, array $actual): void
{
    foreach ($expected as $key => $want) {
        $got = $actual[$key] ?? null;
        if ($key === 'toolMessages') {
            $w = $want ?? [];
            $g = $got ?? [];
            $ok = count($w) === count($g);
            foreach ($w as $j => $x) {
                $ok = $ok && tool_message_matches($x, $g[$j]);
            }
            if (!$ok) {
                throw new CaseError("modelRequests[{$i}].toolMessages: expected " . show($w) . ', got ' . show($g));
            }
        } elseif ($key === 'toolCalls') {
            $w = $want ?? [];
            $g = $got ?? [];
            $ok = count($w) === count($g);
            foreach ($w as $j => $x) {
                $y = $g[$j] ?? [];
                $ok = $ok && json_eq($x['id'] ?? null, $y['id'] ?? null) && json_eq($x['name'] ?? null, $y['name'] ?? null)
                    && json_eq(as_json($x['arguments'] ?? null), as_json($y['arguments'] ?? null));
            }
            if (!$ok) {
                throw new CaseError("modelRequests[{$i}].toolCalls: expected " . show($w) . ', got ' . show($g));
            }
        } elseif ($key === 'toolSpecs') {
            $w = $want ?? [];
            $g = $got ?? [];
            $ok = count($w) === count($g);
            foreach ($w as $j => $x) {
                foreach ($x as $k => $v) {
                    $ok = $ok && in_array($k, TOOL_SPEC_KEYS, true) && json_eq($v, $g[$j][$k] ?? null);
                }
            }
            if (!$ok) {
                throw new CaseError("modelRequests[{$i}].toolSpecs: expected " . show($w) . ', got ' . show($g));
            }
        } else {
            diff("modelRequests[{$i}].{$key}", $want, $got);
        }
    }
}

/** Tool call arguments compared as JSON: a string holding JSON stands for that JSON. */
function as_json(mixed $v): mixed
{
    if (!is_string($v)) {
        return $v;
    }
    try {
        return decode_json($v);
    } catch (\JsonException) {
        return $v;
    }
}

function check_definition_error(array $want, mixed $built): void
{
    if (!$built instanceof AgentError) {
        throw new CaseError('expectDefinitionError: expected ' . show($want) . ', but the definition was accepted');
    }
    if (array_key_exists('code', $want) && !json_eq($want['code'], $built->getCode())) {
        throw new CaseError('expectDefinitionError.code: expected ' . show($want['code']) . ', got ' . show($built->getCode())
            . ' (message: ' . $built->getMessage() . ')');
    }
    $contains = $want['messageContains'] ?? null;
    if (is_string($contains) && !str_contains($built->getMessage(), $contains)) {
        throw new CaseError("expectDefinitionError.message: expected to contain \"{$contains}\", got \"{$built->getMessage()}\"");
    }
}

function check_error(array $want, array $o): void
{
    $runError = $o['state']?->error();
    if ($o['error'] !== null) {
        $code = $o['error']->getCode();
        $message = $o['error']->getMessage();
    } elseif (is_array($runError)) {
        $code = $runError['code'] ?? null;
        $message = (string) ($runError['message'] ?? '');
    } else {
        throw new CaseError('error: expected ' . show($want) . ', got no error');
    }
    if (array_key_exists('code', $want) && !json_eq($want['code'], $code)) {
        throw new CaseError('error.code: expected ' . show($want['code']) . ', got ' . show($code) . " (message: {$message})");
    }
    $contains = $want['messageContains'] ?? null;
    if (is_string($contains) && !str_contains($message, $contains)) {
        throw new CaseError("error.message: expected to contain \"{$contains}\", got \"{$message}\"");
    }
}

function events_by_call(array $events, array $types): array
{
    $out = [];
    foreach ($events as $e) {
        if (in_array($e['type'] ?? null, $types, true)) {
            $out[(string) ($e['toolCallId'] ?? '')][] = $e;
        }
    }
    return $out;
}

function state_fields(?RunResult $state): array
{
    if ($state === null) {
        return [];
    }
    // Read from the state's text with objects kept distinct from arrays.
    $run = decode_json($state->toJson())['run'] ?? [];
    $pause = $run['pause'] ?? null;
    return [
        'status' => $run['status'] ?? null,
        'output' => $run['result'] ?? null,
        'stopReason' => $run['stopReason'] ?? null,
        'pauseKind' => is_array($pause) ? ($pause['kind'] ?? null) : null,
        'context' => $run['context'] ?? null,
        'pending' => array_map(static fn ($p) => ['toolCallId' => $p['call']['id'], 'toolName' => $p['call']['name'], 'kind' => $p['kind']],
            is_array($pause) ? ($pause['pendingToolCalls'] ?? []) : []),
    ];
}

function check_expect(array $expect, array $o): void
{
    $fields = state_fields($o['state']);
    foreach ($expect as $key => $want) {
        switch ($key) {
            case 'status': case 'output': case 'stopReason': case 'pauseKind': case 'context': case 'pending':
                diff($key, $want, $fields[$key] ?? null);
                break;
            case 'error':
                check_error($want instanceof \stdClass ? [] : $want, $o);
                break;
            case 'executed': case 'cancelled': case 'maxConcurrent':
                diff($key, $want, $o[$key]);
                break;
            case 'modelRequests':
                if (count($want) !== count($o['requests'])) {
                    throw new CaseError('modelRequests: expected ' . count($want) . ' requests, got ' . count($o['requests']));
                }
                foreach ($want as $i => $w) {
                    check_request($i, $w instanceof \stdClass ? [] : $w, $o['requests'][$i]);
                }
                break;
            case 'events':
                $types = array_values(array_filter(array_map(static fn ($e) => $e['type'], $o['events']),
                    static fn ($t) => !str_starts_with((string) $t, 'response.')));
                diff($key, $want, $types);
                break;
            case 'toolEvents':
                $got = events_by_call($o['events'], TOOL_EVENT_TYPES);
                foreach ($want as $id => $types) {
                    diff("toolEvents.{$id}", $types, array_map(static fn ($e) => $e['type'], $got[$id] ?? []));
                }
                break;
            case 'preliminaryResults':
                $got = events_by_call($o['events'], ['tool.preliminary_result']);
                foreach ($want as $id => $values) {
                    diff("preliminaryResults.{$id}", $values, array_map(static fn ($e) => $e['result'] ?? null, $got[$id] ?? []));
                }
                break;
            case 'usage':
                $usage = $o['state']?->usage;
                foreach ($want as $k => $v) {
                    diff("usage.{$k}", $v, $usage[$k] ?? null);
                }
                break;
            case 'minWallMs':
                if ($o['wallMs'] < (float) $want) {
                    throw new CaseError('minWallMs: took ' . (int) $o['wallMs'] . " ms, at least {$want} ms expected");
                }
                break;
            case 'maxWallMs':
                if ($o['wallMs'] > (float) $want) {
                    throw new CaseError('maxWallMs: took ' . (int) $o['wallMs'] . " ms, limit {$want} ms");
                }
                break;
        }
    }
    if ($o['error'] !== null && !array_key_exists('error', $expect)) {
        throw new CaseError('unexpected error ' . $o['error']->getCode() . ': ' . $o['error']->getMessage());
    }
}

function check_case(array $c): void
{
    check_keys($c, CASE_KEYS, 'case');
    foreach ($c['model'] ?? [] as $entry) {
        check_keys($entry, MODEL_ENTRY_KEYS, 'model entry');
        foreach ((is_array($entry) ? ($entry['toolCalls'] ?? []) : []) as $tc) {
            check_keys($tc, ['id', 'name', 'arguments'], 'model entry toolCalls');
        }
    }
    foreach ($c['steps'] ?? [] as $i => $step) {
        if (is_array($step) && array_key_exists('editState', $step)) {
            check_keys($step, ['editState'], "step {$i}");
            continue;
        }
        check_keys($step, ['run', 'continue', 'expect'], "step {$i}");
        check_keys($step['run'] ?? null, RUN_KEYS, "step {$i}: run");
        check_keys($step['continue'] ?? null, CONTINUE_KEYS, "step {$i}: continue");
        $expect = $step['expect'] ?? [];
        check_keys($expect, EXPECT_KEYS, "step {$i}: expect");
        check_keys($expect['usage'] ?? null, USAGE_KEYS, "step {$i}: expect.usage");
        check_keys($expect['error'] ?? null, ['code', 'messageContains'], "step {$i}: expect.error");
        foreach ($expect['modelRequests'] ?? [] as $request) {
            check_keys($request, REQUEST_KEYS, "step {$i}: expect.modelRequests");
            foreach ((is_array($request) ? ($request['toolMessages'] ?? []) : []) as $m) {
                check_keys($m, ['toolCallId', 'content', 'contentContains', 'isError'], "step {$i}: expect.modelRequests.toolMessages");
            }
            foreach ((is_array($request) ? ($request['toolCalls'] ?? []) : []) as $tc) {
                check_keys($tc, ['id', 'name', 'arguments'], "step {$i}: expect.modelRequests.toolCalls");
            }
        }
    }
}

/** RFC 6902 add / remove / replace on the state's JSON text. */
function json_patch(string $text, mixed $ops): string
{
    $doc = decode_json($text);
    if (!is_array($ops)) {
        throw new CaseError('editState must be a list of operations');
    }
    foreach ($ops as $op) {
        check_keys($op, ['op', 'path', 'value'], 'editState');
        $kind = $op['op'] ?? null;
        $path = $op['path'] ?? null;
        if ($path === '' && in_array($kind, ['add', 'replace'], true)) {
            $doc = $op['value'];
            continue;
        }
        if (!is_string($path) || !str_starts_with($path, '/')) {
            throw new CaseError('editState: bad path ' . encode_json($path));
        }
        $parts = array_map(static fn ($p) => str_replace(['~1', '~0'], ['/', '~'], $p), explode('/', substr($path, 1)));
        $doc = patch_at($doc, $parts, $kind, $op);
    }
    return encode_json($doc);
}

function patch_at(mixed $target, array $parts, mixed $kind, array $op): mixed
{
    $key = array_shift($parts);
    $isList = is_array($target) && array_is_list($target) && !($target === [] && !preg_match('/^[0-9]+$/D', (string) $key) === 1 && $key !== '-');
    if ($target instanceof \stdClass) {
        $target = [];
        $isList = false;
    }
    if (!is_array($target)) {
        throw new CaseError('editState: cannot apply ' . show($op) . ': not a container');
    }
    if ($parts !== []) {
        $k = $isList ? (int) $key : $key;
        if (!array_key_exists($k, $target)) {
            throw new CaseError('editState: cannot apply ' . show($op) . ": no {$key}");
        }
        $target[$k] = patch_at($target[$k], $parts, $kind, $op);
        return $target;
    }
    if ($isList) {
        $index = $key === '-' ? count($target) : (int) $key;
        if ($kind !== 'add' && !array_key_exists($index, $target)) {
            throw new CaseError('editState: cannot apply ' . show($op) . ": no index {$key}");
        }
        match ($kind) {
            'remove' => array_splice($target, $index, 1),
            'replace' => $target[$index] = $op['value'],
            'add' => array_splice($target, $index, 0, [$op['value']]),
            default => throw new CaseError('editState: unsupported op ' . encode_json($kind)),
        };
        return $target;
    }
    if ($kind !== 'add' && !array_key_exists($key, $target)) {
        throw new CaseError('editState: cannot apply ' . show($op) . ": no key {$key}");
    }
    match ($kind) {
        'remove' => (function () use (&$target, $key) {
            unset($target[$key]);
        })(),
        'replace', 'add' => $target[$key] = $op['value'],
        default => throw new CaseError('editState: unsupported op ' . encode_json($kind)),
    };
    return $target === [] ? new \stdClass() : $target;
}

function load_saved(string $path): array
{
    $doc = decode_json((string) file_get_contents($path));
    try {
        return [RunResult::fromJson(encode_json($doc['state'])), (int) ($doc['modelCursor'] ?? 0)];
    } catch (AgentError $e) {
        throw new CaseError('saved state refused: ' . $e->getCode() . ': ' . $e->getMessage());
    }
}

/** @return bool|null true passed, false not applicable (handoff halves) */
function run_case(string $path, array $c, array $mode): bool
{
    $steps = $c['steps'] ?? null;
    if (!is_array($steps)) {
        throw new CaseError('case without steps');
    }
    $file = basename($path);
    $state = null;
    $cursor = 0;
    $from = 0;
    $to = count($steps);
    if ($mode['stopAfter'] !== null) {
        if (count($steps) <= $mode['stopAfter']) {
            return false;
        }
        $to = $mode['stopAfter'];
    } elseif ($mode['resumeDir'] !== null) {
        $saved = $mode['resumeDir'] . '/' . $file;
        if (!file_exists($saved)) {
            return false;
        }
        [$state, $cursor] = load_saved($saved);
        $from = $mode['fromStep'] ?? 0;
    }
    check_case($c);
    $obs = new Observations();
    $agent = build_agent($c, $obs);
    if (array_key_exists('expectDefinitionError', $c)) {
        if ($mode['stopAfter'] !== null || $mode['resumeDir'] !== null) {
            return false;
        }
        check_definition_error($c['expectDefinitionError'] instanceof \stdClass ? [] : ($c['expectDefinitionError'] ?? []), $agent);
        return true;
    }
    if ($agent instanceof AgentError) {
        throw new CaseError('agent definition refused: ' . $agent->getCode() . ': ' . $agent->getMessage());
    }
    $model = new ScriptedModel($c['model'] ?? [], $cursor);
    $run = new CaseRun($agent, $model, $obs, $state);
    for ($i = $from; $i < $to; $i++) {
        $step = $steps[$i];
        if (array_key_exists('editState', $step)) {
            if ($run->state === null) {
                throw new CaseError("step {$i}: editState without a state");
            }
            $current = is_string($run->state) ? $run->state : $run->state->toJson();
            $run->state = json_patch($current, $step['editState']);
            continue;
        }
        try {
            $outcome = $run->step($step);
            $expect = $step['expect'] ?? [];
            check_expect($expect instanceof \stdClass ? [] : $expect, $outcome);
        } catch (CaseError $e) {
            throw new CaseError("step {$i}: " . $e->getMessage());
        } catch (\Throwable $e) {
            throw new CaseError("step {$i}: " . get_class($e) . ': ' . $e->getMessage());
        }
    }
    if ($mode['saveDir'] !== null) {
        if ($run->state === null) {
            throw new CaseError('no state to save');
        }
        @mkdir($mode['saveDir'], 0777, true);
        $st = is_string($run->state) ? RunResult::fromJson($run->state) : $run->state;
        file_put_contents($mode['saveDir'] . '/' . $file,
            encode_json(['state' => decode_json($st->toJson()), 'modelCursor' => $model->cursor]));
    }
    return true;
}

function collect(string $path, array &$out): void
{
    if (is_dir($path)) {
        $entries = array_diff(scandir($path), ['.', '..']);
        sort($entries);
        foreach ($entries as $e) {
            collect($path . '/' . $e, $out);
        }
    } elseif (str_ends_with($path, '.json')) {
        $out[] = $path;
    }
}

function usage(): never
{
    fwrite(STDERR, "usage: php_runner.sh [--stop-after N --save-state DIR | --resume-state DIR --from-step N] PATH...\n");
    exit(2);
}

function parse_args(array $argv): array
{
    $mode = ['stopAfter' => null, 'saveDir' => null, 'resumeDir' => null, 'fromStep' => null];
    $paths = [];
    $int = static fn (?string $v) => $v !== null && preg_match('/^[0-9]+$/D', $v) === 1 ? (int) $v : usage();
    while ($argv !== []) {
        $arg = array_shift($argv);
        match ($arg) {
            '--' => null,
            '--stop-after' => $mode['stopAfter'] = $int(array_shift($argv)),
            '--save-state' => $mode['saveDir'] = array_shift($argv) ?? usage(),
            '--resume-state' => $mode['resumeDir'] = array_shift($argv) ?? usage(),
            '--from-step' => $mode['fromStep'] = $int(array_shift($argv)),
            default => str_starts_with($arg, '--') ? usage() : $paths[] = $arg,
        };
    }
    $stopping = $mode['stopAfter'] !== null || $mode['saveDir'] !== null;
    $resuming = $mode['resumeDir'] !== null || $mode['fromStep'] !== null;
    if ($stopping && ($resuming || $mode['saveDir'] === null || $mode['stopAfter'] === null || $mode['stopAfter'] < 1)) {
        usage();
    }
    if ($resuming && ($mode['resumeDir'] === null || $mode['fromStep'] === null)) {
        usage();
    }
    return [$mode, $paths === [] ? ['tests/conformance/cases'] : $paths];
}

function main(array $argv): int
{
    [$mode, $paths] = parse_args($argv);
    $files = [];
    foreach ($paths as $p) {
        if (!file_exists($p)) {
            fwrite(STDERR, "no such case file or folder: {$p}\n");
            return 2;
        }
        collect($p, $files);
    }
    $passed = 0;
    $failed = 0;
    foreach ($files as $path) {
        $name = $path;
        $error = null;
        try {
            $c = decode_json((string) file_get_contents($path));
            $name = $c['name'] ?? $path;
            $ran = run_case($path, $c, $mode);
        } catch (CaseError $e) {
            $ran = null;
            $error = $e->getMessage();
        } catch (\Throwable $e) {
            $ran = null;
            $error = get_class($e) . ': ' . $e->getMessage();
        }
        if ($ran === null) {
            $failed++;
            echo "FAIL {$name}: {$error}\n";
        } elseif ($ran) {
            $passed++;
            echo "PASS {$name}\n";
        }
        flush();
    }
    echo "{$passed} passed, {$failed} failed\n";
    return $failed === 0 ? 0 : 1;
}

exit(main(array_slice($argv, 1)));
