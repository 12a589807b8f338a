<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\Agent;
use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\ContinueError;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\Tool;
use Phaseo\AgentSdk\ToolDecision;
use Phaseo\AgentSdk\ToolOutput;
use PHPUnit\Framework\TestCase;

/** Human decisions beyond yes and no (docs/behaviour.md §14): edited approvals and responses. */
final class DecisionsTest extends TestCase
{
    use Helpers;

    private const ENVIRONMENT = [
        'type' => 'object',
        'properties' => ['env' => ['type' => 'string', 'enum' => ['staging', 'production']]],
        'required' => ['env'],
        'additionalProperties' => false,
    ];

    /** @param list<array> $ran receives each input the tool ran with */
    private static function deployAgent(array &$ran): Agent
    {
        $deploy = new Tool(
            id: 'deploy',
            execute: function (array $input, $rt) use (&$ran) {
                $ran[] = $input;
                return ['deployed' => $input['env']];
            },
            description: 'Deploy',
            parameters: self::ENVIRONMENT,
            requireApproval: true,
        );
        return AgentSdk::createAgent(new AgentDefinition(id: 'ops', tools: [$deploy]));
    }

    private static function client(string $final): ScriptedClient
    {
        return new ScriptedClient([['toolCalls' => [self::call('c1', 'deploy', ['env' => 'production'])]], ['text' => $final]]);
    }

    public function testAnEditedApprovalRunsTheToolWithTheEditedInput(): void
    {
        $ran = [];
        $agent = self::deployAgent($ran);
        $client = self::client('Deployed to staging.');
        $paused = $agent->run('deploy', $client);
        $this->assertSame('waiting_for_human', $paused->status());
        $events = [];
        $done = $agent->continueRun(
            RunResult::fromJson($paused->toJson()),
            $client,
            approvals: [new ToolDecision('c1', editedInput: ['env' => 'staging'])],
            onEvent: function (array $e) use (&$events) {
                $events[] = $e;
            },
        );
        $this->assertSame('completed', $done->status());
        $this->assertSame([['env' => 'staging']], $ran);
        $assistant = array_values(array_filter($done->messages, fn ($m) => $m['role'] === 'assistant' && !empty($m['toolCalls'])))[0];
        $this->assertSame(['env' => 'staging'], $assistant['toolCalls'][0]['input']);
        $result = $done->jsonSerialize()['stepResults'][0]['toolResults'][0];
        $this->assertSame(['env' => 'staging'], $result['input']);
        $this->assertSame(['env' => 'production'], $result['originalInput']);
        $started = array_values(array_filter($events, fn ($e) => $e['type'] === 'tool.started'))[0];
        $this->assertTrue($started['inputEdited']);
    }

    public function testAnEditedApprovalAsAnArray(): void
    {
        $ran = [];
        $agent = self::deployAgent($ran);
        $client = self::client('ok');
        $paused = $agent->run('deploy', $client);
        $done = $agent->continueRun($paused, $client, approvals: [['toolCallId' => 'c1', 'editedInput' => ['env' => 'staging']]]);
        $this->assertSame('completed', $done->status());
        $this->assertSame([['env' => 'staging']], $ran);
    }

    public function testAnInvalidEditedInputIsRefusedAndTheStateStaysUsable(): void
    {
        $ran = [];
        $agent = self::deployAgent($ran);
        $client = self::client('Deployed.');
        $paused = $agent->run('deploy', $client);
        try {
            $agent->continueRun($paused, $client, approvals: [new ToolDecision('c1', editedInput: ['env' => 'moon'])]);
            $this->fail('expected a refused continue');
        } catch (ContinueError $e) {
            $this->assertSame('continue_invalid', $e->getCode());
            $this->assertStringContainsString('Edited input for tool call c1 is invalid: ', $e->getMessage());
        }
        $this->assertSame([], $ran);
        $done = $agent->continueRun($paused, $client, approvals: ['c1']);
        $this->assertSame('completed', $done->status());
        $this->assertSame([['env' => 'production']], $ran);
    }

    public function testAResponseAnswersInTheToolsPlace(): void
    {
        $ran = [];
        $agent = self::deployAgent($ran);
        $client = self::client('Done by hand.');
        $paused = $agent->run('deploy', $client);
        $events = [];
        $done = $agent->continueRun(
            $paused,
            $client,
            responses: [new ToolOutput('c1', ['deployed' => 'by hand'])],
            onEvent: function (array $e) use (&$events) {
                $events[] = $e;
            },
        );
        $this->assertSame('completed', $done->status());
        $this->assertSame([], $ran);
        $tool = array_values(array_filter($done->messages, fn ($m) => $m['role'] === 'tool'))[0];
        $this->assertSame(['deployed' => 'by hand'], json_decode($tool['content'], true));
        $this->assertFalse($tool['isError'] ?? false);
        $toolEvents = array_values(array_filter($events, fn ($e) => str_starts_with($e['type'], 'tool.')));
        $this->assertSame(['tool.completed'], array_column($toolEvents, 'type'));
        $this->assertTrue($toolEvents[0]['respondedByHuman']);
    }

    public function testAResponseForACallNotWaitingForApprovalIsRefused(): void
    {
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'm', tools: [new Tool(id: 'ask')]));
        $client = new ScriptedClient([['toolCalls' => [self::call('q', 'ask')]], ['text' => 'got it']]);
        $waiting = $agent->run('go', $client);
        $this->expectException(ContinueError::class);
        $this->expectExceptionMessage('Tool call q is not waiting for approval');
        $agent->continueRun($waiting, $client, responses: [['toolCallId' => 'q', 'output' => 'x']]);
    }

    public function testResponsesOnAStreamedContinue(): void
    {
        $ran = [];
        $agent = self::deployAgent($ran);
        $client = self::client('Answered.');
        $paused = $agent->run('deploy', $client);
        $stream = $agent->continueStream($paused, $client, responses: [['toolCallId' => 'c1', 'output' => 'manual']]);
        $types = [];
        foreach ($stream->fullStream() as $event) {
            $types[] = $event['type'];
        }
        $this->assertSame('completed', $stream->getResult()->status());
        $this->assertSame([], $ran);
        $this->assertContains('tool.completed', $types);
        $this->assertNotContains('tool.started', $types);
    }
}
