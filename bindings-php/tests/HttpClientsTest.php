<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\GatewayAgentClientOptions;
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

    /**
     * The product's GatewayAgentClientOptions: the key and URL from snake_case
     * `clientOptions`, each named body field under its body name over `requestOptions`,
     * what the run sets winning, `false` sent.
     */
    public function testTheProductsGatewayOptionsReachTheBody(): void
    {
        $this->serve([self::responsesReply([['type' => 'message', 'role' => 'assistant', 'content' => [['type' => 'output_text', 'text' => 'ok']]]])]);
        $client = AgentSdk::createGatewayAgentClient(new GatewayAgentClientOptions(
            clientOptions: ['api_key' => self::KEY, 'base_url' => $this->url],
            preset: 'fast',
            provider: ['order' => ['openai']],
            reasoning: ['effort' => 'low'],
            temperature: 0.2,
            maxOutputTokens: 64,
            parallelToolCalls: false,
            metadata: ['team' => 'desk'],
            user: 'u-1',
            responseFormat: ['type' => 'text'],
            includeMeta: true,
            webSearchOptions: ['search_context_size' => 'low'],
            plugins: [['id' => 'web']],
            toolChoice: 'auto',
            providerOptions: ['openai' => ['service_tier' => 'flex']],
            promptCacheKey: 'cache-1',
            requestOptions: ['store' => false, 'temperature' => 0.9, 'top_logprobs' => 2],
        ));
        $result = AgentSdk::createAgent(new AgentDefinition(id: 'desk'))->run('hi', $client, maxOutputTokens: 32);
        $this->assertSame('ok', $result->output());
        $request = $this->requests()[0];
        $this->assertSame('Bearer ' . self::KEY, $request['headers']['authorization']);
        $body = $request['body'];
        $this->assertSame('@fast', $body['model']);
        $this->assertSame(['order' => ['openai']], $body['provider']);
        $this->assertSame(['effort' => 'low'], $body['reasoning']);
        $this->assertEquals(0.2, $body['temperature']);
        $this->assertSame(32, $body['max_output_tokens']);
        $this->assertFalse($body['parallel_tool_calls']);
        $this->assertSame(['phaseo_agent_id' => 'desk', 'team' => 'desk'], $body['metadata']);
        $this->assertSame('u-1', $body['user']);
        $this->assertSame(['type' => 'text'], $body['response_format']);
        $this->assertTrue($body['meta']);
        $this->assertSame(['search_context_size' => 'low'], $body['web_search_options']);
        $this->assertSame([['id' => 'web']], $body['plugins']);
        $this->assertSame('auto', $body['tool_choice']);
        $this->assertSame(['openai' => ['service_tier' => 'flex']], $body['provider_options']);
        $this->assertSame('cache-1', $body['prompt_cache_key']);
        $this->assertFalse($body['store']);
        $this->assertSame(2, $body['top_logprobs']);
    }

    public function testGatewayOptionsTheSdkCannotHonourAreRefused(): void
    {
        foreach ([
            [['gatewayTools' => [['type' => 'web_search']]], 'gatewayTools'],
            [new GatewayAgentClientOptions(client: new \stdClass()), 'client'],
            [['clientOptions' => ['api_kee' => 'k']], "'api_kee'"],
            [['apiKey' => 'a', 'clientOptions' => ['api_key' => 'b']], 'apiKey'],
        ] as [$options, $named]) {
            try {
                AgentSdk::createGatewayAgentClient($options);
                $this->fail("accepted: {$named}");
            } catch (\InvalidArgumentException $e) {
                $this->assertStringContainsString($named, $e->getMessage());
            }
        }
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
