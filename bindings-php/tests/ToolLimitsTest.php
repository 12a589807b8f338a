<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\Tool;
use Phaseo\AgentSdk\ToolRetry;
use PHPUnit\Framework\TestCase;

/** Call budgets, retries, attempts and idempotency keys (docs/behaviour.md §15). */
final class ToolLimitsTest extends TestCase
{
    use Helpers;

    /** The tool message answering `$id`. */
    private static function toolMessage(RunResult $r, string $id): array
    {
        foreach ($r->messages as $m) {
            if ($m['role'] === 'tool' && $m['toolCallId'] === $id) {
                return $m;
            }
        }
        throw new \RuntimeException("no tool message for {$id}");
    }

    /** A tool recording the ids of the calls it ran. */
    private static function recording(string $id, array &$ran, mixed $result, bool $approval = false): Tool
    {
        return new Tool(id: $id, execute: function (array $input, RuntimeContext $rt) use (&$ran, $result) {
            $ran[] = $rt->toolCall->id;
            return $result;
        }, requireApproval: $approval);
    }

    public function testMaxCallsRefusesTheCallsBeyondTheBudget(): void
    {
        $ran = [];
        $search = new Tool(id: 'search', execute: function (array $input, RuntimeContext $rt) use (&$ran) {
            $ran[] = $rt->toolCall->id;
            return 'hit';
        }, maxCalls: 1);
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'budget', tools: [$search]));
        $events = [];
        $done = $agent->run('search', new ScriptedClient([
            ['toolCalls' => [self::call('c1', 'search'), self::call('c2', 'search')]],
            ['text' => 'done'],
        ]), onEvent: function (array $e) use (&$events) {
            $events[] = $e;
        });
        $this->assertSame('completed', $done->status());
        $this->assertSame(['c1'], $ran);
        $refused = self::toolMessage($done, 'c2');
        $this->assertSame(['error' => 'Tool search may be called at most 1 times in a run'], json_decode($refused['content'], true));
        $this->assertTrue($refused['isError']);
        $c2 = array_filter($events, fn ($e) => ($e['toolCallId'] ?? null) === 'c2' && str_starts_with($e['type'], 'tool.'));
        $this->assertSame(['tool.failed'], array_values(array_column($c2, 'type')));
    }

    public function testMaxCallsZeroIsTheCoresDefinitionError(): void
    {
        $this->expectException(DefinitionError::class);
        $this->expectExceptionMessage('maxCalls must be a whole number of at least 1, got 0');
        AgentSdk::createAgent(new AgentDefinition(id: 'bad', tools: [new Tool(id: 't', execute: fn () => 1, maxCalls: 0)]));
    }

    public function testMaxAttemptsZeroIsTheCoresDefinitionError(): void
    {
        $this->expectException(DefinitionError::class);
        $this->expectExceptionMessage('retry.maxAttempts must be a whole number of at least 1, got 0');
        AgentSdk::createAgent(new AgentDefinition(id: 'bad', tools: [
            new Tool(id: 't', execute: fn () => 1, retry: new ToolRetry(maxAttempts: 0)),
        ]));
    }

    public function testARetriedCallSeesItsAttemptsAndOneIdempotencyKey(): void
    {
        $attempts = [];
        $keys = [];
        $flaky = new Tool(id: 'flaky', execute: function (array $input, RuntimeContext $rt) use (&$attempts, &$keys) {
            $attempts[] = $rt->attempt;
            $keys[] = $rt->idempotencyKey;
            if ($rt->attempt < 3) {
                throw new \RuntimeException('service unavailable');
            }
            return 'worked';
        }, retry: new ToolRetry(maxAttempts: 3, backoffMs: 10));
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'retry', tools: [$flaky]));
        $events = [];
        $done = $agent->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 'flaky')]], ['text' => 'ok']]),
            onEvent: function (array $e) use (&$events) {
                $events[] = $e;
            });
        $this->assertSame('completed', $done->status());
        $this->assertSame([1, 2, 3], $attempts);
        $this->assertSame(array_fill(0, 3, $done->runId() . ':c1'), $keys);
        $toolEvents = array_values(array_filter($events, fn ($e) => str_starts_with($e['type'], 'tool.')));
        $this->assertSame(['tool.started', 'tool.retrying', 'tool.retrying', 'tool.completed'], array_column($toolEvents, 'type'));
        $retrying = array_values(array_filter($toolEvents, fn ($e) => $e['type'] === 'tool.retrying'));
        $this->assertSame([2, 3], array_column($retrying, 'attempt'));
        $this->assertSame(['flaky', 'flaky'], array_column($retrying, 'toolName'));
        $this->assertSame(['c1', 'c1'], array_column($retrying, 'toolCallId'));
        $this->assertStringContainsString('service unavailable', $retrying[0]['error']);
        $this->assertSame('worked', self::toolMessage($done, 'c1')['content']);
    }

    public function testExhaustedAttemptsFollowOnError(): void
    {
        $attempts = [];
        $down = new Tool(id: 'down', execute: function (array $input, RuntimeContext $rt) use (&$attempts) {
            $attempts[] = $rt->attempt;
            throw new \RuntimeException('still down');
        }, onError: 'return-to-model', retry: new ToolRetry(maxAttempts: 2));
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'down', tools: [$down]));
        $done = $agent->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 'down')]], ['text' => 'it is down']]));
        $this->assertSame('completed', $done->status());
        $this->assertSame([1, 2], $attempts);
        $message = self::toolMessage($done, 'c1');
        $this->assertTrue($message['isError']);
        $this->assertStringContainsString('still down', $message['content']);
    }

    public function testTheAgentsMaxToolCalls(): void
    {
        $ran = [];
        $agent = AgentSdk::createAgent(new AgentDefinition(
            id: 'agent-budget',
            tools: [self::recording('read', $ran, 'data')],
            toolExecution: ['maxToolCalls' => 2],
        ));
        $done = $agent->run('go', new ScriptedClient([
            ['toolCalls' => [self::call('c1', 'read'), self::call('c2', 'read'), self::call('c3', 'read')]],
            ['text' => 'done'],
        ]));
        sort($ran);
        $this->assertSame(['c1', 'c2'], $ran);
        $this->assertSame(['error' => 'A run may make at most 2 tool calls'], json_decode(self::toolMessage($done, 'c3')['content'], true));
    }

    public function testARunsMaxToolCallsHoldsAcrossAContinue(): void
    {
        $ran = [];
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'run-budget', tools: [
            self::recording('read', $ran, 'data'),
            self::recording('write', $ran, 'written', approval: true),
        ]));
        $client = new ScriptedClient([
            ['toolCalls' => [self::call('c1', 'read'), self::call('c2', 'write')]],
            ['toolCalls' => [self::call('c3', 'read')]],
            ['text' => 'done'],
        ]);
        $paused = $agent->run('go', $client, toolExecution: ['maxToolCalls' => 2]);
        $this->assertSame('waiting_for_human', $paused->status());
        $done = $agent->continueRun($paused->toJson(), $client, approvals: ['c2'], toolExecution: ['maxToolCalls' => 2]);
        $this->assertSame('completed', $done->status());
        $this->assertSame(['c1', 'c2'], $ran);
        $this->assertSame(['error' => 'A run may make at most 2 tool calls'], json_decode(self::toolMessage($done, 'c3')['content'], true));
    }

    public function testTheIdempotencyKeyIsTheSameForACallApprovedOnContinue(): void
    {
        $seen = [];
        $charge = new Tool(id: 'charge', execute: function (array $input, RuntimeContext $rt) use (&$seen) {
            $seen[] = [$rt->attempt, $rt->idempotencyKey];
            return 'charged';
        }, requireApproval: true);
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'pay', tools: [$charge]));
        $client = new ScriptedClient([['toolCalls' => [self::call('c9', 'charge')]], ['text' => 'ok']]);
        $paused = $agent->run('buy', $client);
        $done = $agent->continueRun($paused->toJson(), $client, approvals: ['c9']);
        $this->assertSame([[1, $paused->runId() . ':c9']], $seen);
        $this->assertSame($paused->runId(), $done->runId());
    }
}
