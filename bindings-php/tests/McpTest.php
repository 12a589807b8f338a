<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentError;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\McpServer;
use PHPUnit\Framework\TestCase;

/**
 * MCP servers (docs/behaviour.md §11) through the PHP binding, against @modelcontextprotocol/server-everything
 * over stdio (installed by `make php-tests`: tests/mcp/node_modules).
 */
final class McpTest extends TestCase
{
    use Helpers;

    private const EVERYTHING = __DIR__ . '/../../tests/mcp/node_modules/.bin/mcp-server-everything';

    public function testServerEverythingOverStdio(): void
    {
        if (!file_exists(self::EVERYTHING)) {
            $this->fail('@modelcontextprotocol/server-everything is not installed: run `make mcp-servers`');
        }
        $approvals = [];
        $server = McpServer::stdio('everything', self::EVERYTHING, ['stdio'], toolPrefix: 'ev',
            requireApproval: function ($input, $runtime) use (&$approvals) {
                $approvals[] = $runtime->toolCall['name'];
                return false;
            });
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'everything', mcpServers: [$server]));
        $model = new RecordingModel([
            ['toolCalls' => [self::call('c1', 'ev_echo', ['message' => 'hi']), self::call('c2', 'ev_get-sum', ['a' => 2, 'b' => 3])]],
            ['text' => 'done'],
        ]);
        $result = $agent->run('go', $model);
        $this->assertSame('completed', $result->status());
        $this->assertContains('ev_echo', array_column($model->requests[0]['tools'], 'id'));
        $contents = array_column(self::toolMessages($model->requests[1]), 'content');
        $this->assertStringContainsString('Echo: hi', $contents[0]);
        $this->assertStringContainsString('The sum of 2 and 3 is 5.', $contents[1]);
        $this->assertSame(['ev_echo', 'ev_get-sum'], $approvals);
    }

    /**
     * The filter sees each listed tool with its annotations and decides what the model is
     * offered; the reference server's elicitation request reaches `onElicitation` and its
     * answer reaches the tool's result.
     */
    public function testFilterAndElicitation(): void
    {
        if (!file_exists(self::EVERYTHING)) {
            $this->fail('@modelcontextprotocol/server-everything is not installed: run `make mcp-servers`');
        }
        $seen = [];
        $asked = [];
        $server = McpServer::stdio('everything', self::EVERYTHING, ['stdio'],
            filter: function (array $tool) use (&$seen): bool {
                $seen[] = $tool;
                return $tool['name'] === 'echo' || str_contains($tool['name'], 'elicitation');
            },
            onElicitation: function (array $request, array $info) use (&$asked): array {
                $asked[] = [$request, $info];
                return ['action' => 'accept', 'content' => ['name' => 'Ada Lovelace']];
            });
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'eli', mcpServers: [$server]));
        $model = new RecordingModel([
            ['toolCalls' => [self::call('c1', 'trigger-elicitation-request', new \stdClass())]],
            ['text' => 'ok'],
        ]);
        $result = $agent->run('go', $model);
        $this->assertSame('completed', $result->status());
        $this->assertSame(['echo', 'trigger-elicitation-request'], array_column($model->requests[0]['tools'], 'id'));
        $this->assertGreaterThanOrEqual(3, count($seen));
        $this->assertArrayHasKey('annotations', $seen[0]);
        $this->assertCount(1, $asked);
        [$request, $info] = $asked[0];
        $this->assertSame(['server' => 'everything'], $info);
        $this->assertSame('Please provide inputs for the following fields:', $request['message']);
        $this->assertSame('object', $request['requestedSchema']['type']);
        $contents = array_column(self::toolMessages($model->requests[1]), 'content');
        $this->assertStringContainsString('Ada Lovelace', $contents[0]);
    }

    /** A filter that throws fails the listing with `mcp_failed`, naming the cause. */
    public function testFailingFilterFailsTheRun(): void
    {
        if (!file_exists(self::EVERYTHING)) {
            $this->fail('@modelcontextprotocol/server-everything is not installed: run `make mcp-servers`');
        }
        $server = McpServer::stdio('everything', self::EVERYTHING, ['stdio'],
            filter: fn (array $tool) => throw new \RuntimeException('no listing today'));
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'eli2', mcpServers: [$server]));
        try {
            $agent->run('go', new RecordingModel([['text' => 'never']]));
            $this->fail('the run did not fail');
        } catch (AgentError $e) {
            $this->assertSame('mcp_failed', $e->getCode());
            $this->assertStringContainsString('no listing today', $e->getMessage());
        }
    }

    public function testBadDeclarationsAreRefused(): void
    {
        $this->expectException(DefinitionError::class);
        AgentSdk::createAgent(new AgentDefinition(id: 'a', mcpServers: [McpServer::stdio('x', 'cmd', timeoutMs: -1)]));
    }
}
