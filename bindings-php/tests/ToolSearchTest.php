<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\McpServer;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\Tool;
use PHPUnit\Framework\TestCase;

/** Deferred tools and the core's built-in tool_search (docs/behaviour.md §17). */
final class ToolSearchTest extends TestCase
{
    use Helpers;

    private const EVERYTHING = __DIR__ . '/../../tests/mcp/node_modules/.bin/mcp-server-everything';

    /** The ids of the tools each request offered. */
    private static function offered(RecordingModel $model): array
    {
        return array_map(static fn (array $r) => array_column($r['tools'], 'id'), $model->requests);
    }

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

    /** A deferred weather tool recording the cities it was asked about. */
    private static function weather(array &$ran): Tool
    {
        return new Tool(
            id: 'get_weather',
            execute: function (array $input, RuntimeContext $rt) use (&$ran) {
                $ran[] = $input['city'];
                return "sunny in {$input['city']}";
            },
            description: 'Current weather of a city',
            parameters: ['type' => 'object', 'properties' => ['city' => ['type' => 'string']]],
            deferLoading: true,
        );
    }

    public function testADeferredToolIsFoundByToolSearchAndThenRuns(): void
    {
        $ran = [];
        $echo = new Tool(id: 'echo', execute: fn (array $input) => $input, description: 'Echo the input');
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'deferred', tools: [$echo, self::weather($ran)]));
        $model = new RecordingModel([
            ['toolCalls' => [self::call('c1', 'tool_search', ['query' => 'weather in a city'])]],
            ['toolCalls' => [self::call('c2', 'get_weather', ['city' => 'Oslo'])]],
            ['text' => 'Sunny in Oslo.'],
        ]);
        $done = $agent->run('weather?', $model);
        $this->assertSame('completed', $done->status());
        $this->assertSame('Sunny in Oslo.', $done->output());
        $this->assertSame(['Oslo'], $ran);
        // Not offered at first; tool_search comes after the always-loaded tools and the
        // found tool joins at the end of the list.
        $this->assertSame([
            ['echo', 'tool_search'],
            ['echo', 'tool_search', 'get_weather'],
            ['echo', 'tool_search', 'get_weather'],
        ], self::offered($model));
        $this->assertSame(
            ['tools' => [['id' => 'get_weather', 'description' => 'Current weather of a city']]],
            json_decode(self::toolMessage($done, 'c1')['content'], true),
        );
        $this->assertSame(['get_weather'], json_decode($done->toJson(), true)['run']['loadedTools']);
    }

    public function testADeferredToolThatWasNotLoadedIsAnUnknownTool(): void
    {
        $ran = [];
        $agent = AgentSdk::createAgent(new AgentDefinition(
            id: 'deferred',
            tools: [self::weather($ran)],
            toolExecution: ['onError' => 'return-to-model'],
        ));
        $model = new RecordingModel([
            ['toolCalls' => [self::call('c1', 'get_weather', ['city' => 'Oslo'])]],
            ['text' => 'no'],
        ]);
        $done = $agent->run('weather?', $model);
        $this->assertSame([], $ran);
        $this->assertSame([['tool_search'], ['tool_search']], self::offered($model));
        $this->assertStringContainsString("Unknown tool 'get_weather'", self::toolMessage($done, 'c1')['content']);
    }

    public function testLoadedToolsSurviveAPauseAndAContinueFromJson(): void
    {
        $ran = [];
        $gate = new Tool(id: 'gate', execute: fn () => 'opened', requireApproval: true);
        $tools = [$gate, self::weather($ran)];
        $model = new RecordingModel([
            ['toolCalls' => [self::call('c1', 'tool_search', ['query' => 'weather']), self::call('c2', 'gate')]],
            ['toolCalls' => [self::call('c3', 'get_weather', ['city' => 'Rome'])]],
            ['text' => 'done'],
        ]);
        $paused = AgentSdk::createAgent(new AgentDefinition(id: 'deferred', tools: $tools))->run('go', $model);
        $this->assertSame('waiting_for_human', $paused->status());
        $this->assertSame(['get_weather'], json_decode($paused->toJson(), true)['run']['loadedTools']);
        // A new agent (as another process would have) continues from the JSON text.
        $again = AgentSdk::createAgent(new AgentDefinition(id: 'deferred', tools: $tools));
        $done = $again->continueRun(self::roundTrip($paused), $model, approvals: ['c2']);
        $this->assertSame('completed', $done->status());
        $this->assertSame(['Rome'], $ran);
        $this->assertSame([
            ['gate', 'tool_search'],
            ['gate', 'tool_search', 'get_weather'],
            ['gate', 'tool_search', 'get_weather'],
        ], self::offered($model));
    }

    public function testAnAgentWithDeferredToolsCannotDefineItsOwnToolSearch(): void
    {
        try {
            AgentSdk::createAgent(new AgentDefinition(id: 'bad', tools: [
                new Tool(id: 'tool_search', execute: fn () => 1),
                new Tool(id: 'later', execute: fn () => 2, deferLoading: true),
            ]));
            $this->fail('the definition was accepted');
        } catch (DefinitionError $e) {
            $this->assertSame('definition_invalid', $e->getCode());
            $this->assertStringContainsString("'tool_search'", $e->getMessage());
        }
    }

    public function testADeferredMcpServerOffersItsToolsOnlyOnceToolSearchFindsThem(): void
    {
        if (!file_exists(self::EVERYTHING)) {
            $this->fail('@modelcontextprotocol/server-everything is not installed: run `make mcp-servers`');
        }
        $server = McpServer::stdio('everything', self::EVERYTHING, ['stdio'], deferLoading: true);
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'deferred', mcpServers: [$server]));
        $model = new RecordingModel([
            ['toolCalls' => [self::call('c1', 'tool_search', ['query' => 'echo', 'limit' => 1])]],
            ['toolCalls' => [self::call('c2', 'echo', ['message' => 'found me'])]],
            ['text' => 'done'],
        ]);
        $done = $agent->run('go', $model);
        $this->assertSame('completed', $done->status());
        $this->assertSame([['tool_search'], ['tool_search', 'echo'], ['tool_search', 'echo']], self::offered($model));
        $found = json_decode(self::toolMessage($done, 'c1')['content'], true);
        $this->assertSame(['echo'], array_column($found['tools'], 'id'));
        $this->assertStringContainsString('Echo: found me', self::toolMessage($done, 'c2')['content']);
        $this->assertSame(['echo'], json_decode($done->toJson(), true)['run']['loadedTools']);
    }
}
