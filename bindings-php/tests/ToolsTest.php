<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\BigInt;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\Tool;
use Phaseo\AgentSdk\ToolCall;
use Phaseo\AgentSdk\ToolError;
use InvalidArgumentException;
use PHPUnit\Framework\TestCase;

/** Every feature of the Tools page, in the product's PHP shapes. */
final class ToolsTest extends TestCase
{
    use Helpers;

    private static function searchTool(array &$seen): Tool
    {
        return AgentSdk::defineTool(new Tool(
            id: 'search_tickets',
            execute: function (array $input, $runtime) use (&$seen) {
                $seen[] = $input;
                return ['hits' => ["ticket about {$input['query']}"]];
            },
            description: 'Search support tickets by keyword',
            parameters: [
                'type' => 'object',
                'properties' => ['query' => ['type' => 'string']],
                'required' => ['query'],
            ],
            timeoutMs: 10000,
            inputSchema: fn ($input) => is_string($input['query'] ?? null) ? $input : throw new \InvalidArgumentException('query is required'),
        ));
    }

    public function testTheProductsSearchToolRunsAndIsOfferedToTheModel(): void
    {
        $seen = [];
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'support', tools: [self::searchTool($seen)], instructions: 'Help.'));
        $model = new RecordingModel([
            ['toolCalls' => [self::call('c1', 'search_tickets', ['query' => 'refund'])]],
            ['text' => 'Found one.'],
        ]);
        $result = $agent->run('any refunds?', $model);
        $this->assertSame('completed', $result->status());
        $this->assertSame('Found one.', $result->output());
        $this->assertSame([['query' => 'refund']], $seen);
        $tool = $model->requests[0]['tools'][0];
        $this->assertSame('search_tickets', $tool['id']);
        $this->assertSame('Search support tickets by keyword', $tool['description']);
        $this->assertSame(['query'], $tool['parameters']['required']);
        $this->assertSame('Help.', $model->requests[0]['instructions']);
        $message = self::toolMessages($model->requests[1])[0];
        $this->assertSame(['hits' => ['ticket about refund']], json_decode($message['content'], true));
    }

    public function testAnInputSchemaClosureRejectsBadInputWithItsMessage(): void
    {
        $seen = [];
        // No `parameters`: the closure is what refuses the input.
        $tool = new Tool(
            id: 'search_tickets',
            execute: function (array $input, $runtime) use (&$seen) {
                $seen[] = $input;
                return [];
            },
            inputSchema: fn ($input) => is_string($input['query'] ?? null) ? $input : throw new \InvalidArgumentException('query is required'),
        );
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'support', tools: [$tool]));
        $model = new RecordingModel([['toolCalls' => [self::call('c1', 'search_tickets', ['query' => 7])]]]);
        try {
            $agent->run('go', $model);
            $this->fail('expected the run to fail');
        } catch (ToolError $e) {
            $this->assertSame('tool_input_invalid', $e->getCode());
            $this->assertSame('tool_input', $e->target);
            $this->assertStringContainsString('Invalid tool input', $e->getMessage());
            $this->assertStringContainsString('query is required', $e->getMessage());
            $this->assertSame('failed', $e->result->status());
        }
        $this->assertSame([], $seen);
    }

    public function testJsonSchemaValidatorsCheckInputOutputAndProgress(): void
    {
        $tool = new Tool(
            id: 'measure',
            execute: function (array $input, RuntimeContext $rt) {
                ($rt->emitProgress)(['percent' => 'half']);
                return ['size' => 3];
            },
            inputSchema: AgentSdk::jsonSchemaValidator(['type' => 'object', 'required' => ['x']]),
            outputSchema: AgentSdk::jsonSchemaValidator(['type' => 'object']),
            eventSchema: AgentSdk::jsonSchemaValidator(['type' => 'object', 'properties' => ['percent' => ['type' => 'number']]]),
        );
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool]));
        try {
            $agent->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 'measure', ['x' => 1])]], ['text' => 'ok']]));
            $this->fail('expected an invalid event');
        } catch (ToolError $e) {
            $this->assertSame('tool_event_invalid', $e->getCode());
            $this->assertStringContainsString('/percent', $e->getMessage());
        }
        $check = AgentSdk::jsonSchemaValidator(['type' => 'string']);
        $this->assertSame('x', $check('x'));
        $this->expectException(\InvalidArgumentException::class);
        $check(3);
    }

    public function testProgressAndContextFromTheRuntime(): void
    {
        $seenRuntime = null;
        $tool = new Tool(
            id: 'deploy',
            execute: function (array $input, RuntimeContext $runtime) use (&$seenRuntime) {
                $seenRuntime = $runtime;
                ($runtime->emitProgress)(['percent' => 50]);
                ($runtime->setContext)(['deployed' => $input['env'], 'user' => $runtime->context['user']]);
                return ['ok' => true];
            },
        );
        $events = [];
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'deployer', tools: [$tool]));
        $result = $agent->run(
            'deploy',
            new ScriptedClient([['toolCalls' => [self::call('c1', 'deploy', ['env' => 'prod'])]], ['text' => 'done']]),
            context: ['user' => 'ana'],
            onEvent: function (array $e) use (&$events) {
                $events[] = $e;
            },
        );
        $this->assertSame(['deployed' => 'prod', 'user' => 'ana'], $result->context());
        $progress = array_values(array_filter($events, fn ($e) => $e['type'] === 'tool.preliminary_result'));
        $this->assertSame([['percent' => 50]], array_column($progress, 'result'));
        $this->assertSame('deployer', $seenRuntime->agentId);
        $this->assertSame($result->runId(), $seenRuntime->runId);
        $this->assertSame(0, $seenRuntime->stepIndex);
        $this->assertSame('c1', $seenRuntime->toolCall['id']);
        $this->assertSame('deploy', $seenRuntime->toolCall['name']);
        $this->assertSame(['user' => 'ana'], $seenRuntime->context);
    }

    /**
     * `$runtime->toolCall` and the agent-level approval predicate's first argument are the
     * product's ToolCall (public id, name, input), which also reads as a read-only array.
     */
    public function testToolCallsAreTheProductsToolCallObjects(): void
    {
        $seen = [];
        $tool = new Tool(id: 'deploy', execute: function (array $input, RuntimeContext $runtime) use (&$seen) {
            $seen[] = $runtime->toolCall;
            return 'deployed';
        });
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'deployer', tools: [$tool],
            requireApproval: function (ToolCall $call, RuntimeContext $runtime) use (&$seen): bool {
                $seen[] = $call;
                $seen[] = $runtime->toolCall;
                return $call->input['env'] === 'prod';
            }));
        $model = new ScriptedClient([
            ['toolCalls' => [self::call('c1', 'deploy', ['env' => 'dev']), self::call('c2', 'deploy', ['env' => 'prod'])]],
            ['text' => 'done'],
        ]);
        $paused = $agent->run('deploy', $model);
        $this->assertSame('waiting_for_human', $paused->status());
        // The predicate saw both calls; only c1 (dev) ran before the pause.
        $this->assertCount(5, $seen);
        foreach ($seen as $call) {
            $this->assertInstanceOf(ToolCall::class, $call);
        }
        [$c1, $c1Runtime, $c2] = [$seen[0], $seen[1], $seen[2]];
        $this->assertSame(['c1', 'deploy', ['env' => 'dev']], [$c1->id, $c1->name, $c1->input]);
        $this->assertSame($c1->toArray(), $c1Runtime->toArray());
        $this->assertSame('c2', $c2->id);
        $this->assertSame('c1', $seen[4]['id']);
        $this->assertSame(['env' => 'dev'], $seen[4]['input']);
        $this->assertTrue(isset($seen[4]['name']));
        $this->assertFalse(isset($seen[4]['nope']));
        $this->assertSame('{"id":"c1","name":"deploy","input":{"env":"dev"}}', json_encode($seen[4]));
        try {
            $seen[4]['id'] = 'x';
            $this->fail('a ToolCall was written');
        } catch (\LogicException $e) {
            $this->assertStringContainsString('read-only', $e->getMessage());
        }
        $this->expectException(\OutOfBoundsException::class);
        $seen[4]['nope'];
    }

    public function testAGeneratorToolYieldsProgressAndReturnsItsResult(): void
    {
        $tool = new Tool(id: 'count', execute: function (array $input, $rt) {
            yield ['n' => 1];
            yield ['n' => 2];
            return 'counted';
        });
        $events = [];
        $model = new RecordingModel([['toolCalls' => [self::call('c1', 'count')]], ['text' => 'ok']]);
        AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool]))
            ->run('go', $model, onEvent: function ($e) use (&$events) {
                $events[] = $e;
            });
        $results = array_column(array_values(array_filter($events, fn ($e) => $e['type'] === 'tool.preliminary_result')), 'result');
        $this->assertSame([['n' => 1], ['n' => 2]], $results);
        $this->assertStringContainsString('counted', self::toolMessages($model->requests[1])[0]['content']);
    }

    public function testOnErrorReturnToModelSendsTheErrorBack(): void
    {
        $tool = new Tool(id: 'flaky', execute: fn (array $input, $rt) => throw new \RuntimeException('disk full'), onError: 'return-to-model');
        $model = new RecordingModel([['toolCalls' => [self::call('c1', 'flaky')]], ['text' => 'sorry']]);
        $result = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool]))->run('go', $model);
        $this->assertSame('completed', $result->status());
        $message = self::toolMessages($model->requests[1])[0];
        $this->assertTrue($message['isError']);
        $this->assertStringContainsString('disk full', $message['content']);
    }

    public function testNextTurnParamsTakeTheProductsSnakeCaseKeysAndClosures(): void
    {
        $fixed = new Tool(id: 'cool', execute: fn ($i, $rt) => 'ok', nextTurnParams: ['temperature' => 0.2, 'max_output_tokens' => 50]);
        $dynamic = new Tool(id: 'pick', execute: fn ($i, $rt) => 'ok', nextTurnParams: fn (array $input, $rt) => ['model' => $input['model']]);
        $model = new RecordingModel([
            ['toolCalls' => [self::call('c1', 'cool')]],
            ['toolCalls' => [self::call('c2', 'pick', ['model' => 'big-model'])]],
            ['text' => 'done'],
        ]);
        AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$fixed, $dynamic]))->run('go', $model);
        $this->assertEquals(0.2, $model->requests[1]['temperature']);
        $this->assertSame(50, $model->requests[1]['maxOutputTokens']);
        $this->assertSame('big-model', $model->requests[2]['model']);
    }

    public function testUnknownToolFailsTheRun(): void
    {
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [new Tool(id: 'known', execute: fn ($i, $rt) => 1)]));
        try {
            $agent->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 'nope')]]]));
            $this->fail('expected unknown_tool');
        } catch (ToolError $e) {
            $this->assertSame('unknown_tool', $e->getCode());
            $this->assertStringContainsString('nope', $e->getMessage());
        }
    }

    public function testBadDefinitionsAreRefusedNamingTheProblem(): void
    {
        try {
            AgentSdk::defineTool(new Tool(id: 'slow', execute: fn ($i, $rt) => 1, timeoutMs: -5));
            $this->fail('expected a definition error');
        } catch (DefinitionError $e) {
            $this->assertSame('definition_invalid', $e->getCode());
            $this->assertStringContainsString('slow', $e->getMessage());
        }
        $this->expectException(DefinitionError::class);
        AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [new Tool(id: 'x', execute: fn ($i, $rt) => 1, onError: 'explode')]));
    }

    public function testEmptyObjectsAndBigIntegersRoundTrip(): void
    {
        $inputs = [];
        $tool = new Tool(id: 'echo', execute: function (array $input, $rt) use (&$inputs) {
            $inputs[] = $input;
            return ['empty' => new \stdClass(), 'list' => [], 'big' => $input['big']];
        });
        $model = new RecordingModel([
            ['toolCalls' => [['id' => 'c1', 'name' => 'echo', 'arguments' => '{"big":18446744073709551615,"o":{}}']]],
            ['text' => 'ok'],
        ]);
        AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool]))->run('go', $model);
        $this->assertInstanceOf(BigInt::class, $inputs[0]['big']);
        $this->assertSame('18446744073709551615', (string) $inputs[0]['big']);
        $this->assertSame([], $inputs[0]['o']);
        $this->assertSame('{"empty":{},"list":[],"big":18446744073709551615}', self::toolMessages($model->requests[1])[0]['content']);
    }

    public function testAValueWithoutJsonIsAnInvalidOutput(): void
    {
        $tool = new Tool(id: 'nan', execute: fn ($i, $rt) => ['x' => NAN]);
        try {
            AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool]))
                ->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 'nan')]], ['text' => 'x']]));
            $this->fail('expected tool_output_invalid');
        } catch (ToolError $e) {
            $this->assertSame('tool_output_invalid', $e->getCode());
        }
    }
    /** The Tools page's PHP samples, verbatim (scripts/check-tools-page-samples.py). */
    public function testToolsPageDefine(): void
    {
        $tickets = new class () {
            public array $searched = [];

            public function search(string $query): array
            {
                $this->searched[] = $query;
                return [['id' => 'T-1', 'subject' => "{$query} fails"]];
            }
        };
        $search = AgentSdk::defineTool(new Tool(
            id: "search_tickets",
            execute: fn (array $input, $runtime) => $tickets->search($input["query"]),
            description: "Search support tickets by keyword",
            parameters: [
                "type" => "object",
                "properties" => ["query" => ["type" => "string"]],
                "required" => ["query"],
            ],
            timeoutMs: 10000,
            inputSchema: fn ($input) => is_string($input["query"] ?? null) ? $input : throw new InvalidArgumentException("query is required"),
        ));
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'support', tools: [$search]));
        $result = $agent->run('login?', new ScriptedClient([
            ['toolCalls' => [self::call('c1', 'search_tickets', ['query' => 'login'])]],
            ['text' => 'One ticket.'],
        ]));
        $this->assertSame('completed', $result->status());
        $this->assertSame(['login'], $tickets->searched);
        $refused = $agent->run('x', new ScriptedClient([
            ['toolCalls' => [self::call('c1', 'search_tickets', ['query' => 7])]],
            ['text' => 'sorry'],
        ]), toolExecution: ['onError' => 'return-to-model']);
        $this->assertStringContainsString('Invalid tool input', $refused->toJson());
        $this->assertSame(['login'], $tickets->searched);
    }

    public function testToolsPageApproval(): void
    {
        $deployments = new class () {
            public array $done = [];

            public function deploy(array $input): array
            {
                $this->done[] = $input['environment'];
                return ['deployed' => $input['environment']];
            }
        };
        $deploy = new Tool(
            id: "deploy",
            execute: fn (array $input, $runtime) => $deployments->deploy($input),
            description: "Deploy the selected release",
            requireApproval: fn (array $input, $runtime) => ($input["environment"] ?? null) === "production",
        );
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'ops', tools: [$deploy]));
        $staging = $agent->run('ship', new ScriptedClient([
            ['toolCalls' => [self::call('c1', 'deploy', ['environment' => 'staging'])]],
            ['text' => 'done'],
        ]));
        $this->assertSame('completed', $staging->status());
        $paused = $agent->run('ship', new ScriptedClient([
            ['toolCalls' => [self::call('c1', 'deploy', ['environment' => 'production'])]],
        ]));
        $this->assertSame('waiting_for_human', $paused->status());
        $this->assertSame(['staging'], $deployments->done);
        $done = $agent->continueRun($paused->toJson(), new ScriptedClient([['text' => 'shipped']]), approvals: ['c1']);
        $this->assertSame('completed', $done->status());
        $this->assertSame(['staging', 'production'], $deployments->done);
    }

    public function testToolsPageProgress(): void
    {
        $tool = new Tool(
            id: 'index_repository',
            execute: function (array $input, $runtime) {
                ($runtime->emitProgress)(["stage" => "indexing"]); // tool.preliminary_result-Event
                ($runtime->setContext)(["indexed" => true]);       // Kontext für spätere Turns
                return "done";
            },
        );
        $events = [];
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'indexer', tools: [$tool]));
        $result = $agent->run(
            'index',
            new ScriptedClient([['toolCalls' => [self::call('c1', 'index_repository')]], ['text' => 'ok']]),
            context: ['indexed' => false],
            onEvent: function (array $e) use (&$events) {
                $events[] = $e;
            },
        );
        $this->assertSame(['indexed' => true], $result->context());
        $progress = array_values(array_filter($events, fn ($e) => $e['type'] === 'tool.preliminary_result'));
        $this->assertSame([['stage' => 'indexing']], array_column($progress, 'result'));
        $this->assertSame('completed', $result->status());
    }
}
