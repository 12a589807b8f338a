<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk;

use Phaseo\AgentSdk\Internal\Json;
use Phaseo\AgentSdk\Internal\Native;

/**
 * The product's accessor: the application loads and saves states itself (a file, a cache,
 * its own table). Give it where a RunStore goes (`store:`). It has no claim: continuing a
 * pause twice is not prevented; list/delete/recover need a real RunStore.
 */
interface StateAccessor
{
    /** The stored state of a run, or null when unknown. */
    public function load(string $runId): ?RunResult;

    /** Stores a run's state (replacing any earlier one). */
    public function save(RunResult $result): void;
}

/**
 * A durable run store (docs/behaviour.md §10): every state a run reaches is saved; paused runs continue
 * by id (`$agent->continueRunById`), dead workers' runs are recovered. Give it to
 * `AgentDefinition(store: ...)` or to a run (`store:`).
 */
class RunStore
{
    /** @internal */
    protected function __construct(private readonly int $handle)
    {
    }

    public function __destruct()
    {
        phaseo_store_free($this->handle);
        Internal\Registry::release($this->ids);
    }

    private function direct(string $what): void
    {
        if ($this->accessor !== null) {
            throw new \LogicException("{$what} needs a RunStore (memory, sqlite, postgres), not a load/save StateAccessor");
        }
    }

    /** @internal */
    public function handle(): int
    {
        return $this->handle;
    }

    /** @var list<int> registry ids this store's callbacks hold */
    private array $ids = [];
    private ?StateAccessor $accessor = null;

    /** A store over the application's own load/save (the product's StateAccessor). */
    public static function accessor(StateAccessor $accessor): self
    {
        $load = Internal\Registry::add(static function (string $runId) use ($accessor): ?string {
            return $accessor->load($runId)?->toJson();
        });
        $save = Internal\Registry::add(static function (string $runId, string $state) use ($accessor): void {
            $accessor->save(new RunResult($state));
        });
        $store = new self(phaseo_store_accessor($load, $save));
        $store->ids = [$load, $save];
        $store->accessor = $accessor;
        return $store;
    }

    /** @internal a RunStore of a store argument (an accessor is wrapped) */
    public static function of(self|StateAccessor|null $store): ?self
    {
        return $store instanceof StateAccessor ? self::accessor($store) : $store;
    }

    /** An in-process store (lost when PHP exits). */
    public static function memory(): self
    {
        return new self(Native::call(fn () => phaseo_store_new('memory', null)));
    }

    /** A SQLite file (created with its schema when missing). */
    public static function sqlite(string $path): self
    {
        return new self(Native::call(fn () => phaseo_store_new('sqlite', $path)));
    }

    /** A PostgreSQL database (`postgres://user:pass@host/db`). */
    public static function postgres(string $url): self
    {
        return new self(Native::call(fn () => phaseo_store_new('postgres', $url)));
    }

    /**
     * A stored run: `runId`, `agentId`, `status`, `version`, `createdAtMs`, `updatedAtMs`,
     * `lease*`, and `state` (a RunResult); null when unknown.
     */
    public function load(string $runId): ?array
    {
        $this->direct('load');
        $row = Native::call(fn () => phaseo_store_load($this->handle, $runId));
        return $row === null ? null : self::row(Json::decode($row));
    }

    /**
     * A page of stored runs, newest first: `['runs' => [...], 'nextCursor' => ?string]`.
     * Query keys: `statuses` (list), `agentId`, `limit`, `cursor`.
     */
    public function list(array $query = []): array
    {
        $this->direct('list');
        try {
            $json = $query === [] ? null : Json::encode($query);
        } catch (\JsonException $e) {
            throw new \InvalidArgumentException(Json::reason($e, 'the query'), 0, $e);
        }
        $page = Json::decode(Native::call(fn () => phaseo_store_list($this->handle, $json)));
        return ['runs' => array_map(self::row(...), $page['runs']), 'nextCursor' => $page['nextCursor']];
    }

    /**
     * Deletes the runs of `$statuses` (e.g. `['completed', 'cancelled']`) last updated more
     * than `$olderThanMs` milliseconds ago; how many. An unknown status is refused, naming it.
     *
     * @param list<string> $statuses
     */
    public function prune(array $statuses, int $olderThanMs): int
    {
        $this->direct('prune');
        foreach ($statuses as $status) {
            if (!is_string($status)) {
                throw new \InvalidArgumentException('prune: every status must be a string, got ' . get_debug_type($status));
            }
        }
        $cutoff = (int) floor(microtime(true) * 1000) - $olderThanMs;
        return Native::call(fn () => phaseo_store_prune($this->handle, array_values($statuses), $cutoff));
    }

    /** Deletes a stored run; whether it existed. */
    public function delete(string $runId): bool
    {
        $this->direct('delete');
        return Native::call(fn () => phaseo_store_delete($this->handle, $runId));
    }

    private static function row(array $row): array
    {
        $row['state'] = new RunResult($row['state']);
        return $row;
    }
}

/**
 * An MCP server whose tools become agent tools (docs/behaviour.md §11): `McpServer::stdio(name:,
 * command:, args:)` or `McpServer::http(name:, url:, headers:, bearer:)`, with `allowTools`,
 * `denyTools`, `toolPrefix`, `requireApproval` (true, false, `'destructive'` or
 * `fn ($input, $runtime)`), `timeoutMs`, `toolTimeoutsMs`, `onError`, `cacheTtlMs`, `optional`,
 * `deferLoading: true` (every tool of the server is offered only once the built-in
 * `tool_search` finds it, docs/behaviour.md §17),
 * `filter: fn (array $tool): bool` (`$tool`: `name`, `description`, `annotations`; called when
 * the tools are listed) and `onElicitation: fn (array $request, array $info): array` (the
 * server's `elicitation/create` params and `['server' => name]`, answering an MCP
 * `ElicitResult` such as `['action' => 'accept', 'content' => [...]]`).
 */
final class McpServer
{
    private function __construct(private readonly array $spec)
    {
    }

    /** A server started as a child process speaking stdio. */
    public static function stdio(string $name, string $command, array $args = [], ?array $env = null, ?string $cwd = null, mixed ...$options): self
    {
        return new self(array_merge(['name' => $name, 'command' => $command, 'args' => $args, 'env' => $env, 'cwd' => $cwd], $options));
    }

    /**
     * Serves `$tools`, or `$agent` as one tool (its runs on `$client`; `$description` is the
     * tool's), over MCP (docs/behaviour.md §19): on this process's stdio, or over Streamable
     * HTTP with `$http` (`['host' => …, 'port' => …, 'path' => …, 'authToken' => …,
     * 'allowedOrigins' => […], 'allowedHosts' => […]]`, `[]` for the defaults: 127.0.0.1, a
     * free port, `/mcp`). Calls run through the core's tool path; an approval-gated tool asks
     * the client through elicitation. The tools' PHP functions run while PHP waits on the
     * server (`wait()`). Invalid options throw a DefinitionError.
     *
     * @param list<Tool> $tools
     */
    public static function serve(string $name, array $tools = [], ?Agent $agent = null, ?string $description = null,
        ?object $client = null, ?array $http = null, ?string $version = null, ?array $toolExecution = null): McpToolServer
    {
        $spec = new Internal\Spec();
        try {
            $options = array_filter([
                'name' => $name,
                'version' => $version,
                'tools' => $agent === null || $tools !== [] ? array_map(static fn (Tool $t) => $spec->tool($t), $tools) : null,
                'agent' => $agent === null ? null : $spec->agent($agent->definition),
                'description' => $description,
                'toolExecution' => $toolExecution,
                'transport' => $http === null ? null : ['type' => 'http'] + $http,
            ], static fn ($x) => $x !== null);
            $json = Internal\Spec::json($options);
            $clientHandle = 0;
            if ($client !== null) {
                if (!$client instanceof NativeClient) {
                    throw new \InvalidArgumentException('client must be a client of this SDK');
                }
                $clientHandle = $client->handle();
            }
            $handle = Internal\Native::call(fn () => phaseo_mcp_serve($json, $clientHandle));
        } catch (\Throwable $e) {
            Internal\Registry::release($spec->ids);
            throw $e;
        }
        return new McpToolServer($handle, $spec->ids);
    }

    /** A server over Streamable HTTP. */
    public static function http(string $name, string $url, ?array $headers = null, ?string $bearer = null, mixed ...$options): self
    {
        return new self(array_merge(['name' => $name, 'url' => $url, 'headers' => $headers, 'bearer' => $bearer], $options));
    }

    /**
     * @internal the JSON declaration, callables registered through `$fn`
     * @param callable(callable): array $fn
     */
    public function spec(callable $fn): array
    {
        $spec = array_filter($this->spec, static fn ($x) => $x !== null);
        if (isset($spec['env']) && $spec['env'] === []) {
            unset($spec['env']);
        }
        if (isset($spec['toolTimeoutsMs']) && $spec['toolTimeoutsMs'] === []) {
            unset($spec['toolTimeoutsMs']);
        }
        if (isset($spec['requireApproval']) && Internal\Spec::isFn($spec['requireApproval'])) {
            $spec['requireApproval'] = $fn($spec['requireApproval']);
        }
        // `filter(array $tool): bool` and `onElicitation(array $request, array $info): array`
        // are always functions; anything else is left for the core to refuse by name.
        foreach (['filter', 'onElicitation'] as $key) {
            if (isset($spec[$key]) && Internal\Spec::isFn($spec[$key])) {
                $spec[$key] = $fn($spec[$key]);
            }
        }
        return $spec;
    }
}

/**
 * A running MCP server (see `McpServer::serve`): it stops on `close()`, at the end of its
 * input (stdio) and with the process. Its tools' PHP functions run while PHP waits in
 * `wait()`.
 */
final class McpToolServer
{
    /** @param list<int> $ids the registered callables of the served tools */
    public function __construct(private readonly int $handle, private readonly array $ids)
    {
    }

    /** `http://host:port/path` of a Streamable HTTP server; null on stdio. */
    public function url(): ?string
    {
        return phaseo_mcp_server_url($this->handle);
    }

    /** Whether the server has stopped. */
    public function isClosed(): bool
    {
        return phaseo_mcp_server_closed($this->handle);
    }

    /**
     * Serves calls until the server stops, or at most `$timeout` seconds; returns whether it
     * stopped.
     */
    public function wait(?float $timeout = null): bool
    {
        $until = $timeout === null ? INF : Internal\Scheduler::now() + $timeout;
        Internal\Scheduler::serveUntil(fn () => $this->isClosed() || Internal\Scheduler::now() >= $until);
        return $this->isClosed();
    }

    /** Stops the server (calls in flight are cancelled) and waits until it has stopped. */
    public function close(): void
    {
        phaseo_mcp_server_close($this->handle);
        $this->wait();
    }

    public function __destruct()
    {
        phaseo_mcp_server_free($this->handle);
        Internal\Registry::release($this->ids);
    }
}
