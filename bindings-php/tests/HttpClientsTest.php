<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\ModelError;
use Phaseo\AgentSdk\Tool;
use PHPUnit\Framework\TestCase;

/** The HTTP model clients against a local server (PHP's built-in server, started here). */
final class HttpClientsTest extends TestCase
{
    private const KEY = 'sk-test-secret-123';
    private const JSON = ['content-type' => 'application/json'];

    /** @var resource|null */
    private $server = null;
    private string $dir = '';
    private string $url = '';

    /** Starts the server with these replies (`[status, headers, body]`). */
    private function serve(array $replies): void
    {
        $this->dir = sys_get_temp_dir() . '/phaseo-php-http-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
        file_put_contents("{$this->dir}/replies.json", json_encode($replies));
        $sock = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr(strrchr(stream_socket_get_name($sock, false), ':'), 1);
        fclose($sock);
        $cmd = [PHP_BINARY, '-n', '-S', "127.0.0.1:{$port}", __DIR__ . '/fixtures/http_router.php'];
        $this->server = proc_open($cmd, [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes, null, ['PHASEO_HTTP_DIR' => $this->dir]);
        $this->url = "http://127.0.0.1:{$port}/v1";
        for ($i = 0; $i < 200; $i++) {
            $c = @fsockopen('127.0.0.1', $port);
            if ($c !== false) {
                fclose($c);
                return;
            }
            usleep(10_000);
        }
        $this->fail('the PHP built-in server did not start');
    }

    private function requests(): array
    {
        return json_decode((string) file_get_contents("{$this->dir}/requests.json"), true);
    }

    protected function tearDown(): void
    {
        if ($this->server !== null) {
            proc_terminate($this->server);
            proc_close($this->server);
            array_map('unlink', glob("{$this->dir}/*"));
            rmdir($this->dir);
        }
    }

    private static function responsesReply(array $output): array
    {
        return [200, self::JSON, json_encode(['id' => 'resp_1', 'status' => 'completed', 'output' => $output,
            'usage' => ['input_tokens' => 3, 'output_tokens' => 2, 'total_tokens' => 5]])];
    }

    public function testGatewayRoundTripKeepsTheKeyOutOfState(): void
    {
        $this->serve([
            self::responsesReply([['type' => 'function_call', 'call_id' => 'c1', 'name' => 'lookup', 'arguments' => '{"id": 7}']]),
            self::responsesReply([['type' => 'message', 'role' => 'assistant', 'content' => [['type' => 'output_text', 'text' => 'Found 7.']]]]),
        ]);
        $lookup = new Tool(id: 'lookup', execute: fn (array $input, $rt) => ['found' => $input['id']], parameters: ['type' => 'object']);
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'desk', instructions: 'Be brief.', tools: [$lookup]));
        $client = AgentSdk::createGatewayAgentClient(['apiKey' => self::KEY, 'baseUrl' => $this->url, 'model' => 'phaseo/test',
            'bodyDefaults' => ['temperature' => 0.3]]);
        $result = $agent->run('find 7', $client, context: ['secret_context' => 'do-not-send']);
        $this->assertSame('Found 7.', $result->output());
        $this->assertSame(10, $result->usage['totalTokens']);
        $requests = $this->requests();
        $this->assertSame(['/v1/responses', '/v1/responses'], array_column($requests, 'path'));
        $this->assertSame('Bearer ' . self::KEY, $requests[0]['headers']['authorization']);
        $this->assertSame('phaseo/test', $requests[0]['body']['model']);
        $this->assertSame('Be brief.', $requests[0]['body']['instructions']);
        $this->assertEquals(0.3, $requests[0]['body']['temperature']);
        $this->assertStringNotContainsString('do-not-send', json_encode($requests[0]['body']));
        $this->assertContains(['type' => 'function_call_output', 'call_id' => 'c1', 'output' => '{"found":7}'], $requests[1]['body']['input']);
        $this->assertStringNotContainsString(self::KEY, $result->toJson());
    }

    public function testOpenAICompatibleCompletion(): void
    {
        $reply = ['id' => 'x', 'choices' => [['index' => 0, 'message' => ['role' => 'assistant', 'content' => 'Hello there'], 'finish_reason' => 'stop']]];
        $this->serve([[200, self::JSON, json_encode($reply)]]);
        $client = AgentSdk::createOpenAICompatibleClient(['baseUrl' => $this->url, 'model' => 'local-model']);
        $result = AgentSdk::createAgent(new AgentDefinition(id: 'a'))->run('hi', $client);
        $this->assertSame('Hello there', $result->output());
        $request = $this->requests()[0];
        $this->assertSame('/v1/chat/completions', $request['path']);
        $this->assertSame('local-model', $request['body']['model']);
        $this->assertArrayNotHasKey('authorization', $request['headers']);
    }

    public function testServerErrorsAreGatewayErrorsAfterRetries(): void
    {
        $this->serve(array_fill(0, 3, [500, self::JSON + ['x-request-id' => 'req_9'], json_encode(['error' => ['message' => 'boom']])]));
        $client = AgentSdk::createGatewayAgentClient(['apiKey' => self::KEY, 'baseUrl' => $this->url]);
        try {
            AgentSdk::createAgent(new AgentDefinition(id: 'a', modelRetry: ['maxRetries' => 2, 'backoffMs' => 1]))->run('x', $client);
            $this->fail('expected a gateway error');
        } catch (ModelError $e) {
            $this->assertSame('gateway', $e->getCode());
            $this->assertSame(500, $e->status());
            $this->assertSame('req_9', $e->requestId());
            $this->assertStringContainsString('500', $e->getMessage());
            $this->assertStringContainsString('boom', $e->getMessage());
            $this->assertStringNotContainsString(self::KEY, $e->getMessage());
            $this->assertSame('failed', $e->result->status());
        }
        $this->assertCount(3, $this->requests());
    }

    public function testConnectionRefusedIsModelFailed(): void
    {
        $sock = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr(strrchr(stream_socket_get_name($sock, false), ':'), 1);
        fclose($sock);
        $client = AgentSdk::createOpenAICompatibleClient(['baseUrl' => "http://127.0.0.1:{$port}/v1"]);
        try {
            AgentSdk::createAgent(new AgentDefinition(id: 'a'))->run('x', $client);
            $this->fail('expected model_failed');
        } catch (ModelError $e) {
            $this->assertSame('model_failed', $e->getCode());
        }
    }

    public function testUnknownClientOptionsAreRefused(): void
    {
        $this->expectException(DefinitionError::class);
        AgentSdk::createGatewayAgentClient(['colour' => 'red']);
    }
}
