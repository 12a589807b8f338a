<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

use Phaseo\AgentSdk\Internal\EndedState;
use Phaseo\AgentSdk\Internal\Json;
use Phaseo\AgentSdk\Internal\Native;
use Phaseo\AgentSdk\Internal\Registry;
use Phaseo\AgentSdk\Internal\Scheduler;
use Phaseo\AgentSdk\Internal\Spec;

/**
 * An agent (`AgentSdk::createAgent($definition)`): `run`, `continueRun`, `continueRunById`,
 * `recover`, `stream`, `continueStream`. A call waits for the run on this PHP thread and
 * runs every PHP function of the run here (tools in Fibers: see the README).
 *
 * Run overrides (docs/behaviour.md §3), as named arguments: `model`, `maxSteps`, `stopWhen`,
 * `modelRetry`, `toolExecution` (`['maxToolCalls' => n]` bounds the run's tool calls,
 * docs/behaviour.md §15), `temperature`, `maxOutputTokens`, `topP`, `toolChoice`,
 * `parallelToolCalls`, `activeTools`, `traceparent` (a W3C traceparent: the run span becomes
 * its child when tracing is on). `store:` takes a RunStore or the product's
 * StateAccessor (also accepted under the product's name `state:`).
 */
final class Agent
{
    private const OVERRIDES = ['model', 'maxSteps', 'stopWhen', 'modelRetry', 'toolExecution', 'temperature',
        'maxOutputTokens', 'topP', 'toolChoice', 'parallelToolCalls', 'activeTools', 'traceparent'];

    private readonly int $handle;
    /** The definition's store (an accessor wrapped once, kept while the agent lives). */
    private readonly ?RunStore $store;
    /** @var list<int> */
    private readonly array $ids;

    /** @internal use AgentSdk::createAgent */
    public function __construct(public readonly AgentDefinition $definition)
    {
        $spec = new Spec();
        try {
            $json = Spec::json($spec->agent($definition));
            $this->ids = $spec->ids;
            $this->store = RunStore::of($definition->store);
            $this->handle = Native::call(fn () => phaseo_agent_new($json, $this->store?->handle() ?? 0));
        } catch (\Throwable $e) {
            Registry::release($spec->ids);
            throw $e;
        }
    }

    /**
     * A tool that runs this agent (docs/behaviour.md §18): `id` defaults to the agent's id,
     * `parameters` to one string `input`, which is the nested run's input; the nested run's
     * output is the tool's output. When the nested run pauses, the outer run pauses too,
     * listing its calls as `<outerCallId>/<nestedCallId>`; decisions for those ids on the
     * outer continue go to the nested run.
     */
    public function asTool(?string $id = null, ?string $description = null, ?array $parameters = null): Tool
    {
        return new Tool(
            id: $id ?? $this->definition->id,
            description: $description,
            parameters: $parameters,
            agent: $this->definition,
        );
    }

    public function __destruct()
    {
        if (isset($this->handle)) {
            phaseo_agent_free($this->handle);
            Registry::release($this->ids);
        }
    }

    /**
     * Runs the agent to completion or to a pause. Throws the AgentError of the code when the
     * run fails (`$e->result` is the failed state).
     *
     * @param ModelClient|object $client a client of this SDK or any object with `generate(array $request)`
     * @param callable(array): void|null $onEvent receives each event, in order
     */
    public function run(
        mixed $input,
        object $client,
        mixed $context = null,
        ?array $messages = null,
        ?callable $onEvent = null,
        ?CancelToken $cancel = null,
        RunStore|StateAccessor|null $store = null,
        mixed ...$overrides,
    ): RunResult {
        $options = ['input' => $input, 'context' => $context, 'messages' => $messages];
        return $this->finish($this->start('run', $options, $overrides, null, null, $client, $onEvent, $cancel, $store));
    }

    /**
     * Continues a paused run from its state (a RunResult, its JSON text or its decoded array,
     * see RunResult::fromArray) with decisions:
     * approvals / rejections (call ids, ToolDecision or `['toolCallId' => ..., 'reason' => ...]`;
     * an approval may carry `editedInput`, the person's corrected arguments, which the tool
     * then runs with), toolOutputs (ToolOutput or `['toolCallId' => ..., 'output' => ...]`),
     * responses (the same shape: a person's answer to an approval-gated call, which then never
     * runs; docs/behaviour.md §14), humanInput.
     * A refused continue throws ContinueError / StateError and changes nothing.
     */
    public function continueRun(
        RunResult|string|array $run,
        object $client,
        ?string $humanInput = null,
        mixed $context = null,
        array $approvals = [],
        array $rejections = [],
        array $toolOutputs = [],
        array $responses = [],
        ?callable $onEvent = null,
        ?CancelToken $cancel = null,
        RunStore|StateAccessor|null $store = null,
        mixed ...$overrides,
    ): RunResult {
        $options = self::decisions($humanInput, $context, $approvals, $rejections, $toolOutputs, $responses);
        $state = self::stateText($run);
        return $this->finish($this->start('continue', $options, $overrides, $state, null, $client, $onEvent, $cancel, $store));
    }

    /** Continues a paused run loaded from the run store by its id (docs/behaviour.md §10). */
    public function continueRunById(
        string $runId,
        object $client,
        ?string $humanInput = null,
        mixed $context = null,
        array $approvals = [],
        array $rejections = [],
        array $toolOutputs = [],
        array $responses = [],
        ?callable $onEvent = null,
        ?CancelToken $cancel = null,
        RunStore|StateAccessor|null $store = null,
        mixed ...$overrides,
    ): RunResult {
        $options = self::decisions($humanInput, $context, $approvals, $rejections, $toolOutputs, $responses);
        return $this->finish($this->start('continue', $options, $overrides, null, $runId, $client, $onEvent, $cancel, $store));
    }

    /** Finishes a stored run whose worker died (its lease expired). */
    public function recover(
        string $runId,
        object $client,
        ?callable $onEvent = null,
        ?CancelToken $cancel = null,
        RunStore|StateAccessor|null $store = null,
        mixed ...$overrides,
    ): RunResult {
        return $this->finish($this->start('recover', [], $overrides, null, $runId, $client, $onEvent, $cancel, $store));
    }

    /** Streams a run: iterate `fullStream()` (a Generator) while it runs. */
    public function stream(
        mixed $input,
        object $client,
        mixed $context = null,
        ?array $messages = null,
        ?CancelToken $cancel = null,
        RunStore|StateAccessor|null $store = null,
        mixed ...$overrides,
    ): AgentStreamResult {
        $options = ['input' => $input, 'context' => $context, 'messages' => $messages];
        [$run, $done] = $this->start('stream', $options, $overrides, null, null, $client, null, $cancel, $store);
        return new AgentStreamResult($run, fn () => $this->finish([$run, $done]));
    }

    /** Streams a continue from a state (as continueRun). */
    public function continueStream(
        RunResult|string|array $run,
        object $client,
        ?string $humanInput = null,
        mixed $context = null,
        array $approvals = [],
        array $rejections = [],
        array $toolOutputs = [],
        array $responses = [],
        ?CancelToken $cancel = null,
        RunStore|StateAccessor|null $store = null,
        mixed ...$overrides,
    ): AgentStreamResult {
        $options = self::decisions($humanInput, $context, $approvals, $rejections, $toolOutputs, $responses);
        $state = self::stateText($run);
        [$h, $done] = $this->start('continueStream', $options, $overrides, $state, null, $client, null, $cancel, $store);
        return new AgentStreamResult($h, fn () => $this->finish([$h, $done]));
    }

    /** A state argument's text (an array state is written here: StateError when it cannot be). */
    private static function stateText(RunResult|string|array $run): string
    {
        return match (true) {
            $run instanceof RunResult => $run->toJson(),
            is_array($run) => RunResult::text($run),
            default => $run,
        };
    }

    private static function decisions(
        ?string $humanInput,
        mixed $context,
        array $approvals,
        array $rejections,
        array $toolOutputs,
        array $responses,
    ): array {
        return [
            'approvals' => Spec::decisions($approvals),
            'rejections' => Spec::decisions($rejections),
            'toolOutputs' => Spec::outputs($toolOutputs),
            'responses' => Spec::outputs($responses, 'a response'),
            'humanInput' => $humanInput,
            'context' => $context,
        ];
    }

    /** @return array{0: int, 1: \Closure} the run handle and what to do when it ended */
    private function start(
        string $mode,
        array $options,
        array $overrides,
        ?string $state,
        ?string $runId,
        object $client,
        ?callable $onEvent,
        ?CancelToken $cancel,
        RunStore|StateAccessor|null $store,
    ): array {
        if (array_key_exists('state', $overrides)) {
            // The product's name for the run's accessor (`state: $accessor`).
            $store ??= $overrides['state'];
            unset($overrides['state']);
        }
        $store = RunStore::of($store);
        foreach (array_keys($overrides) as $key) {
            if (!in_array($key, self::OVERRIDES, true)) {
                throw new \InvalidArgumentException("unknown run option '{$key}'");
            }
        }
        $spec = new Spec();
        $options = array_merge(array_filter($options, static fn ($x) => $x !== null), $spec->overrides($overrides));
        [$clientHandle, $freeClient] = self::client($client, $spec);
        $cleanup = static function () use ($spec, $freeClient, &$store): void {
            $store = null; // a per-run accessor store lives until the run ends
            Registry::release($spec->ids);
            $freeClient();
        };
        try {
            $json = self::optionsJson($options, $state === null && $runId === null ? 'run options' : 'continue options');
            $run = Native::call(fn () => phaseo_run_start(
                $mode,
                $this->handle,
                $json,
                $state,
                $runId,
                $clientHandle,
                $store?->handle() ?? 0,
                $onEvent !== null,
            ));
        } catch (\Throwable $e) {
            $cleanup();
            throw $e;
        }
        if ($onEvent !== null || str_ends_with($mode, 'tream')) {
            Scheduler::listen($run, $onEvent ?? true);
        }
        $cancel?->attach($run);
        return [$run, $cleanup];
    }

    /**
     * The JSON text of a run's options, each one encoded alone so that a value JSON cannot
     * hold (a cycle, more than 64 levels, NaN, text that is not UTF-8) is refused naming it,
     * before anything starts: the caller's own values (`input`, `context`, `messages`,
     * `humanInput`, decisions and outputs) with \InvalidArgumentException, overrides with
     * DefinitionError, as the core refuses a bad override.
     */
    private static function optionsJson(array $options, string $what): string
    {
        $members = [];
        foreach ($options as $name => $value) {
            try {
                $members[] = Json::encode((string) $name) . ':' . Json::encode($value);
            } catch (\JsonException $e) {
                if (in_array($name, self::OVERRIDES, true)) {
                    throw new DefinitionError("Invalid {$what}: {$name}: {$e->getMessage()}", 'definition_invalid');
                }
                throw new \InvalidArgumentException("{$name}: {$e->getMessage()}", 0, $e);
            }
        }
        return '{' . implode(',', $members) . '}';
    }

    /** @param array{0: int, 1: \Closure} $started */
    private function finish(array $started): RunResult
    {
        [$run, $cleanup] = $started;
        try {
            $m = Scheduler::wait($run);
        } finally {
            $cleanup();
        }
        if (isset($m['error'])) {
            throw AgentError::fromArray($m['error']);
        }
        // The status and output came with the message; the state stays in the extension,
        // written as text and decoded only when something else of it is read.
        return new RunResult(new EndedState($run), $m);
    }

    /** @return array{0: int, 1: \Closure} */
    private static function client(object $client, Spec $spec): array
    {
        if ($client instanceof NativeClient) {
            return [$client->handle(), static function (): void {
            }];
        }
        if (!method_exists($client, 'generate')) {
            throw new \InvalidArgumentException('client must be a client of this SDK or an object with generate(array $request)');
        }
        $id = Registry::add(static fn (array $request) => $client->generate($request));
        $spec->ids[] = $id;
        $stream = 0;
        if (method_exists($client, 'stream')) {
            $stream = Registry::add(static fn (array $request) => $client->stream($request));
            $spec->ids[] = $stream;
        }
        $handle = phaseo_client_host($id, $stream);
        return [$handle, static function () use ($handle): void {
            phaseo_client_free($handle);
        }];
    }
}
