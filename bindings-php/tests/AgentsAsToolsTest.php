<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\ContinueError;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\Tool;
use Phaseo\AgentSdk\ToolDecision;
use PHPUnit\Framework\TestCase;

/** An agent as a tool of another (docs/behaviour.md §18). */
final class AgentsAsToolsTest extends TestCase
{
    use Helpers;

    public function testANestedApprovalSurfacesAndIsDecidedOnTheOuterContinue(): void
    {
        $lookup = new Tool(id: 'lookup', execute: fn (array $input, $rt) => 'fact', requireApproval: true);
        $researcher = AgentSdk::createAgent(new AgentDefinition(id: 'researcher', tools: [$lookup]));
        $boss = AgentSdk::createAgent(new AgentDefinition(id: 'boss', tools: [$researcher->asTool(description: 'Researches')]));
        $client = new ScriptedClient([
            ['toolCalls' => [self::call('c1', 'researcher', ['input' => 'topic'])]],
            ['toolCalls' => [self::call('n1', 'lookup')]],
            ['text' => 'inner done'],
            ['text' => 'All done.'],
        ]);
        $paused = $boss->run('study', $client);
        $pending = $paused->jsonSerialize()['run']['pause']['pendingToolCalls'];
        $this->assertSame([['c1/n1', 'lookup', 'approval']], array_map(fn ($p) => [$p['call']['id'], $p['call']['name'], $p['kind']], $pending));
        try {
            $boss->continueRun(RunResult::fromJson($paused->toJson()), $client, approvals: [new ToolDecision('c1/n9')]);
            $this->fail('refused');
        } catch (ContinueError $e) {
            $this->assertSame('Unknown tool call c1/n9', $e->getMessage());
        }
        $events = [];
        $done = $boss->continueRun(
            RunResult::fromJson($paused->toJson()),
            $client,
            approvals: [new ToolDecision('c1/n1')],
            onEvent: function (array $e) use (&$events) {
                $events[] = $e;
            },
        );
        $this->assertSame('All done.', $done->output());
        $nested = array_values(array_filter($events, fn ($e) => ($e['parentToolCallId'] ?? null) === 'c1'));
        $this->assertSame('run.completed', end($nested)['type']);
    }
}
