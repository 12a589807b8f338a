<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentError;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\ContinueError;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\RunStore;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\StateAccessor;
use Phaseo\AgentSdk\Tool;
use PHPUnit\Framework\TestCase;

/** Durable runs (docs/behaviour.md §10): in-memory, SQLite and PostgreSQL stores through the PHP API. */
final class StoresTest extends TestCase
{
    use Helpers;

    private function pauseAndContinueById(RunStore $store): void
    {
        $ran = [];
        $deploy = new Tool(id: 'deploy', execute: function (array $input, $rt) use (&$ran) {
            $ran[] = $input['env'];
            return 'deployed';
        }, requireApproval: true);
        $def = new AgentDefinition(id: 'ops-' . bin2hex(random_bytes(3)), tools: [$deploy], store: $store);
        $client = new ScriptedClient([['toolCalls' => [self::call('c1', 'deploy', ['env' => 'prod'])]], ['text' => 'Shipped.']]);
        $paused = AgentSdk::createAgent($def)->run('ship', $client);
        $this->assertSame('waiting_for_human', $paused->status());
        $row = $store->load($paused->runId());
        $this->assertSame('waiting_for_human', $row['status']);
        $this->assertSame($def->id, $row['agentId']);
        $this->assertSame($paused->runId(), $row['state']->runId());
        $page = $store->list(['statuses' => ['waiting_for_human'], 'agentId' => $def->id]);
        $this->assertSame([$paused->runId()], array_column($page['runs'], 'runId'));

        // Another agent object (as another worker would) continues by id, from the store.
        $done = AgentSdk::createAgent($def)->continueRunById($paused->runId(), $client, approvals: ['c1']);
        $this->assertSame('Shipped.', $done->output());
        $this->assertSame(['prod'], $ran);
        $this->assertSame('completed', $store->load($paused->runId())['status']);
        try {
            AgentSdk::createAgent($def)->continueRunById('no-such-run', $client);
            $this->fail('expected an unknown run to be refused');
        } catch (ContinueError $e) {
            $this->assertSame('continue_invalid', $e->getCode());
        }
        // Pruning: too recent, an unknown status, then every completed run (each test's store
        // is its own: exactly this one).
        $this->assertSame(0, $store->prune(['completed'], 3_600_000));
        try {
            $store->prune(['done'], 0);
            $this->fail('expected an unknown status to be refused');
        } catch (AgentError $e) {
            $this->assertStringContainsString("unknown run status 'done'", $e->getMessage());
        }
        $this->assertSame(1, $store->prune(['completed'], -60_000));
        $this->assertNull($store->load($paused->runId()));
        $this->assertFalse($store->delete($paused->runId()));
    }

    public function testTheProductsStateAccessor(): void
    {
        $accessor = new class () implements StateAccessor {
            /** @var array<string, string> */
            public array $saved = [];

            public function load(string $runId): ?RunResult
            {
                return isset($this->saved[$runId]) ? RunResult::fromJson($this->saved[$runId]) : null;
            }

            public function save(RunResult $result): void
            {
                $this->saved[$result->runId()] = $result->toJson();
            }
        };
        $deploy = new Tool(id: 'deploy', execute: fn (array $input, $rt) => 'deployed', requireApproval: true);
        $client = new ScriptedClient([['toolCalls' => [self::call('c1', 'deploy')]], ['text' => 'Shipped.']]);
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'ops', tools: [$deploy]));
        $paused = $agent->run('ship', $client, store: $accessor);
        $this->assertSame('waiting_for_human', RunResult::fromJson($accessor->saved[$paused->runId()])->status());
        $done = $agent->continueRunById($paused->runId(), $client, approvals: ['c1'], state: $accessor); // the product's name
        $this->assertSame('Shipped.', $done->output());
        $this->assertSame('completed', RunResult::fromJson($accessor->saved[$paused->runId()])->status());
        $this->expectException(\LogicException::class);
        RunStore::accessor($accessor)->list();
    }

    public function testMemoryStore(): void
    {
        $this->pauseAndContinueById(RunStore::memory());
    }

    public function testSqliteStore(): void
    {
        $path = sys_get_temp_dir() . '/phaseo-php-' . bin2hex(random_bytes(4)) . '.db';
        try {
            $this->pauseAndContinueById(RunStore::sqlite($path));
        } finally {
            @unlink($path);
        }
    }

    public function testPostgresStore(): void
    {
        $url = getenv('PHASEO_TEST_POSTGRES_URL');
        if (!is_string($url) || $url === '') {
            $this->fail('PHASEO_TEST_POSTGRES_URL is not set: run under scripts/with-test-postgres.sh (make php-tests); a PostgreSQL test never skips');
        }
        $this->pauseAndContinueById(RunStore::postgres(self::databaseOfItsOwn()));
    }

    /**
     * The URL of an empty database of the test PostgreSQL server, so that the store's prune of
     * every completed run sees only this test's runs (a suite's tests may share the server's
     * one database).
     */
    private static function databaseOfItsOwn(): string
    {
        $script = dirname(__DIR__, 2) . '/scripts/pg-test-server.sh';
        exec('bash ' . escapeshellarg($script) . ' database 2>&1', $out, $status);
        self::assertSame(0, $status, 'pg-test-server.sh database: ' . implode("\n", $out));
        return (string) end($out);
    }
}
