<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\McpServer;
use Phaseo\AgentSdk\McpToolServer;
use Phaseo\AgentSdk\Tool;
use PHPUnit\Framework\TestCase;

require_once __DIR__ . '/fixtures/served_tools.php';

/**
 * Tools served over MCP (docs/behaviour.md §19), called by the official MCP Python client
 * (PyPI `mcp`, in the dev venv) over stdio and Streamable HTTP. A missing venv or package
 * fails these tests.
 */
final class ServeTest extends TestCase
{
    private const ROOT = __DIR__ . '/../..';

    /** Runs the Python client's `tools` scenario, serving `$server`'s calls meanwhile. */
    private function drive(?McpToolServer $server, string $approve, string ...$target): array
    {
        $python = self::ROOT . '/.venvs/py/bin/python';
        if (!is_file($python)) {
            $this->fail("the Python venv with the mcp package is missing (make python mcp-servers): {$python}");
        }
        $proc = proc_open(['timeout', '180', $python, self::ROOT . '/tests/mcp/served_client.py', 'tools', $approve, ...$target],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        stream_set_blocking($pipes[1], false);
        stream_set_blocking($pipes[2], false);
        $out = $err = '';
        // proc_get_status reports the exit code once only: on the call that sees the end.
        while (($status = proc_get_status($proc))['running']) {
            $server?->wait(0.05);
            if ($server === null) {
                usleep(50_000);
            }
            $out .= stream_get_contents($pipes[1]);
            $err .= stream_get_contents($pipes[2]);
        }
        $out .= stream_get_contents($pipes[1]);
        $err .= stream_get_contents($pipes[2]);
        proc_close($proc);
        $this->assertSame(0, $status['exitcode'], "the MCP client failed: {$err}");
        $lines = explode("\n", trim($out));
        return json_decode(end($lines), true, 512, JSON_THROW_ON_ERROR);
    }

    /** @return list<string> the stdio server: this PHP with the extension, on the fixture */
    private function stdio(): array
    {
        return ['--', PHP_BINARY, '-n', '-d', 'extension=' . __DIR__ . '/../php/phaseo_agent.so', __DIR__ . '/fixtures/served_tools.php'];
    }

    public function testToolsAnswerThePythonClientOverHttpAndStdio(): void
    {
        $deleted = 0;
        $server = McpServer::serve('php-tools', served_tools($deleted), http: []);
        $this->assertMatchesRegularExpression('#^http://127\.0\.0\.1:\d+/mcp$#', $server->url());
        foreach ([[$server, ['--url', $server->url()]], [null, $this->stdio()]] as [$srv, $target]) {
            $seen = $this->drive($srv, 'none', ...$target);
            $this->assertEqualsCanonicalizing(['add', 'slow', 'steps', 'delete', 'sleepy'], array_keys($seen['tools']));
            $this->assertSame(['a', 'b'], $seen['tools']['add']['inputSchema']['required']);
            $this->assertTrue($seen['tools']['delete']['annotations']['destructiveHint']);
            $this->assertTrue($seen['tools']['add']['annotations']['readOnlyHint']);
            $this->assertSame('Add numbers', $seen['tools']['add']['title']);
            $this->assertSame(['sum' => ['type' => 'number']], $seen['tools']['add']['outputSchema']['properties']);
            $this->assertEquals([[1, 2, 'half'], [2, null, 'almost']], $seen['progress']);
            $this->assertFalse($seen['add']['isError']);
            $this->assertEquals(['sum' => 5], $seen['add']['structured']);
            $this->assertTrue($seen['invalid']['isError']);
            $this->assertStringStartsWith('Invalid tool input', $seen['invalid']['text']);
            $this->assertSame('Tool sleepy timed out after 200ms', $seen['sleepy']['text']);
            $this->assertTrue($seen['delete']['isError']);
            $this->assertSame('Tool delete requires approval and this client cannot be asked', $seen['delete']['text']);
        }
        $this->assertSame(0, $deleted);
        $server->close();
        $this->assertTrue($server->isClosed());
    }

    public function testApprovalIsAskedThroughElicitation(): void
    {
        $deleted = 0;
        $server = McpServer::serve('php-tools', served_tools($deleted), http: []);
        foreach ([[$server, ['--url', $server->url()]], [null, $this->stdio()]] as [$srv, $target]) {
            $yes = $this->drive($srv, 'yes', ...$target);
            $this->assertFalse($yes['delete']['isError']);
            $this->assertSame('deleted /x', $yes['delete']['text']);
            $this->assertStringContainsString('{"path":"/x"}', implode(' ', $yes['asked']));
            $no = $this->drive($srv, 'no', ...$target);
            $this->assertTrue($no['delete']['isError']);
            $this->assertSame('Tool call rejected by human', $no['delete']['text']);
        }
        $this->assertSame(1, $deleted, 'approved once over HTTP (the stdio server counts in its own process)');
        $server->close();
    }

    public function testBadOptionsAreRefused(): void
    {
        try {
            McpServer::serve('x', [new Tool(id: 'ask', description: 'Asks a person')]);
            $this->fail('a manual tool was served');
        } catch (DefinitionError $e) {
            $this->assertSame('Tool ask has no execute and cannot be served over MCP', $e->getMessage());
        }
        try {
            McpServer::serve('x', [new Tool(id: 't', execute: fn () => 1, annotations: ['readOnlyHint' => 'yes'])]);
            $this->fail('a bad annotation was served');
        } catch (DefinitionError $e) {
            $this->assertStringContainsString('annotations.readOnlyHint must be a boolean', $e->getMessage());
        }
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'researcher'));
        try {
            McpServer::serve('x', agent: $agent);
            $this->fail('an agent was served without a client');
        } catch (DefinitionError $e) {
            $this->assertStringContainsString('needs a model client', $e->getMessage());
        }
    }
}
