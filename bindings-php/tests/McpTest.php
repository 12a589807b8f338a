<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\McpServer;
use PHPUnit\Framework\TestCase;

/**
 * MCP servers (SPEC §11) through the PHP binding, against @modelcontextprotocol/server-everything
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

    public function testBadDeclarationsAreRefused(): void
    {
        $this->expectException(DefinitionError::class);
        AgentSdk::createAgent(new AgentDefinition(id: 'a', mcpServers: [McpServer::stdio('x', 'cmd', timeoutMs: -1)]));
    }
}
