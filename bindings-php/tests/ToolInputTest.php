<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentError;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\StreamingModelClient;
use Phaseo\AgentSdk\Tool;
use PHPUnit\Framework\TestCase;

/** Tool input as the model writes it (docs/behaviour.md §16) in a streamed run's events. */
final class ToolInputTest extends TestCase
{
    use Helpers;

    private const PIECES = ['{"a":', '2,"b"', ':3}'];

    private static function calculator(?array $modelRetry = null): \Phaseo\AgentSdk\Agent
    {
        $add = AgentSdk::defineTool(new Tool(id: 'add', execute: fn (array $input, $runtime) => $input['a'] + $input['b']));
        return AgentSdk::createAgent(new AgentDefinition(id: 'calc', tools: [$add], modelRetry: $modelRetry));
    }

    /** @return list<string> */
    private static function deltas(array $events, string $id): array
    {
        return array_values(array_map(
            fn ($e) => $e['delta'],
            array_filter($events, fn ($e) => $e['type'] === 'tool.input_delta' && $e['toolCallId'] === $id),
        ));
    }

    public function testAStreamingClientsInputReachesTheStreamAndAFailedAttemptsInputStays(): void
    {
        $client = new class (self::PIECES) implements StreamingModelClient {
            private int $attempts = 0;

            public function __construct(private readonly array $pieces)
            {
            }

            public function generate(array $request): array
            {
                throw new \LogicException('a streamed run uses stream()');
            }

            public function stream(array $request): iterable
            {
                $this->attempts++;
                if ($this->attempts === 1) {
                    yield ['type' => 'tool-input-start', 'toolCallId' => 'lost', 'toolName' => 'add'];
                    yield ['type' => 'tool-input-delta', 'toolCallId' => 'lost', 'delta' => '{"a":'];
                    throw new \RuntimeException('connection reset');
                }
                if ($this->attempts === 2) {
                    yield ['type' => 'tool-input-start', 'toolCallId' => 'c2', 'toolName' => 'add'];
                    foreach ($this->pieces as $piece) {
                        yield ['type' => 'tool-input-delta', 'toolCallId' => 'c2', 'delta' => $piece];
                    }
                    yield ['type' => 'response', 'response' => ['toolCalls' => [
                        ['id' => 'c2', 'name' => 'add', 'arguments' => implode('', $this->pieces)],
                    ]]];
                    return;
                }
                yield ['type' => 'response', 'response' => ['text' => '5']];
            }
        };
        $stream = self::calculator(['maxRetries' => 1, 'backoffMs' => 1])->stream('2+3?', $client);
        $events = iterator_to_array($stream->fullStream(), false);
        $this->assertSame('5', $stream->getResult()->output());
        $this->assertSame(['{"a":'], self::deltas($events, 'lost'));
        $this->assertSame(self::PIECES, self::deltas($events, 'c2'));
        $types = array_column($events, 'type');
        $lastDelta = max(array_keys($types, 'tool.input_delta', true));
        $this->assertLessThan(array_search('model.completed', $types, true), $lastDelta);
        $started = array_values(array_filter($events, fn ($e) => $e['type'] === 'tool.started'));
        $this->assertSame(['c2'], array_column($started, 'toolCallId'));
        $first = array_values(array_filter($events, fn ($e) => $e['type'] === 'tool.input_started' && $e['toolCallId'] === 'c2'))[0];
        $this->assertSame(['add', 0], [$first['toolName'], $first['stepIndex']]);
    }

    public function testTheScriptedClientStreamsInputInPiecesAndAPlainRunReportsNone(): void
    {
        $script = fn () => new ScriptedClient([['toolCalls' => [self::call('c1', 'add', ['a' => 2, 'b' => 3])]], ['text' => '5']]);
        $stream = self::calculator()->stream('2+3?', $script());
        $events = iterator_to_array($stream->fullStream(), false);
        $this->assertSame('5', $stream->getResult()->output());
        $deltas = self::deltas($events, 'c1');
        $this->assertGreaterThan(1, count($deltas));
        $this->assertSame('{"a":2,"b":3}', implode('', $deltas));

        $seen = [];
        self::calculator()->run('2+3?', $script(), onEvent: function (array $e) use (&$seen) {
            $seen[] = $e['type'];
        });
        $this->assertContains('tool.completed', $seen);
        $this->assertSame([], array_values(array_filter($seen, fn ($t) => str_starts_with($t, 'tool.input_'))));
    }

    public function testAMalformedToolInputEventFailsTheAttemptClearly(): void
    {
        $client = new class () implements StreamingModelClient {
            public function generate(array $request): array
            {
                return ['text' => 'unused'];
            }

            public function stream(array $request): iterable
            {
                yield ['type' => 'tool-input-start', 'toolCallId' => 'c1'];
            }
        };
        try {
            self::calculator()->stream('x', $client)->getResult();
            $this->fail('expected a model failure');
        } catch (AgentError $e) {
            $this->assertStringContainsString('model stream event "tool-input-start" has no "toolName"', $e->getMessage());
        }
    }
}
