<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\Tool;
use PHPUnit\Framework\TestCase;

/**
 * Tracing from PHP against a real OTLP/HTTP receiver on 127.0.0.1 (tests/otlp/receiver.py,
 * decoding with opentelemetry-proto in .venvs/py, installed by `make .venvs/py/.otel`): the
 * span tree of a run, its GenAI attributes, content capture, a continue in the same trace,
 * a caller's `traceparent`. A missing receiver FAILS. Tracing is process-wide: every test
 * turns it off at the end.
 */
final class TracingTest extends TestCase
{
    use Helpers;

    private const ROOT = __DIR__ . '/../..';

    /** @var resource|null */
    private $receiver = null;
    /** @var array<int, resource> */
    private array $pipes = [];
    private string $base = '';

    protected function setUp(): void
    {
        if (!file_exists(self::ROOT . '/.venvs/py/.otel')) {
            $this->fail('opentelemetry-proto (.venvs/py) is not installed: run `make .venvs/py/.otel`');
        }
        $this->receiver = proc_open(
            [self::ROOT . '/.venvs/py/bin/python', self::ROOT . '/tests/otlp/receiver.py'],
            [0 => ['pipe', 'r'], 1 => ['pipe', 'w']],
            $this->pipes,
        );
        $line = fgets($this->pipes[1]);
        if ($line === false || !str_starts_with($line, 'PORT ')) {
            $this->fail('the OTLP receiver did not start');
        }
        $this->base = 'http://127.0.0.1:' . trim(substr($line, 5));
    }

    protected function tearDown(): void
    {
        if (AgentSdk::tracingEnabled()) {
            AgentSdk::shutdownTracing();
        }
        if ($this->receiver !== null) {
            fclose($this->pipes[0]);
            fclose($this->pipes[1]);
            proc_close($this->receiver);
        }
    }

    private function enable(bool $captureContent = false): void
    {
        AgentSdk::enableTracing(endpoint: $this->base, headers: ['x-collector-token' => 'php-token'],
            serviceName: 'php-tests', captureContent: $captureContent);
    }

    /** @return array{string, string} the trace id and span id of a run's traceparent */
    private function ids(RunResult $result): array
    {
        [$version, $traceId, $spanId, $flags] = explode('-', $result->run['traceparent']);
        $this->assertSame(['00', '01'], [$version, $flags]);
        return [$traceId, $spanId];
    }

    /** @return list<array> the spans of the run's trace, once there are at least `$count` */
    private function spansOf(RunResult $result, int $count): array
    {
        AgentSdk::flushTracing();
        [$traceId] = $this->ids($result);
        for ($i = 0; $i < 500; $i++) {
            $all = json_decode((string) file_get_contents($this->base . '/spans'), true);
            $found = array_values(array_filter($all, static fn ($s) => $s['traceId'] === $traceId));
            if (count($found) >= $count) {
                return $found;
            }
            usleep(20_000);
        }
        $this->fail("fewer than {$count} spans in trace {$traceId}");
    }

    private function one(array $spans, string $name): array
    {
        $found = array_values(array_filter($spans, static fn ($s) => $s['name'] === $name));
        $this->assertCount(1, $found, $name . ': ' . implode(', ', array_column($spans, 'name')));
        return $found[0];
    }

    private function runCalculator(mixed ...$options): RunResult
    {
        $add = AgentSdk::defineTool(new Tool(id: 'add', execute: fn (array $i) => $i['a'] + $i['b']));
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'calculator', tools: [$add]));
        return $agent->run('what is 2+3?', new RecordingModel([
            ['toolCalls' => [self::call('c1', 'add', ['a' => 2, 'b' => 3])]],
            ['text' => 'the sum is 5'],
        ]), ...['model' => 'm-1', ...$options]);
    }

    public function testARunWithAToolStepIsOneTreeOfGenAiSpansContentOff(): void
    {
        $this->enable();
        $this->assertTrue(AgentSdk::tracingEnabled());
        $result = $this->runCalculator();
        $spans = $this->spansOf($result, 4);
        $names = array_column($spans, 'name');
        sort($names);
        $this->assertSame(['chat m-1', 'chat m-1', 'execute_tool add', 'invoke_agent calculator'], $names);
        $run = $this->one($spans, 'invoke_agent calculator');
        $this->assertSame($this->ids($result)[1], $run['spanId']);
        $this->assertSame('', $run['parentSpanId']);
        $this->assertSame($result->run['id'], $run['attributes']['phaseo.run.id']);
        $this->assertSame('php-tests', $run['service']);
        $this->assertSame('php-token', $run['headers']['x-collector-token']);
        $tool = $this->one($spans, 'execute_tool add');
        $this->assertSame($run['spanId'], $tool['parentSpanId']);
        $this->assertSame('c1', $tool['attributes']['gen_ai.tool.call.id']);
        foreach ($spans as $s) {
            $text = json_encode($s['attributes']);
            $this->assertStringNotContainsString('what is 2+3?', $text);
            $this->assertStringNotContainsString('php-token', $text);
        }
    }

    public function testContentIsRecordedWhenOptedIn(): void
    {
        $this->enable(captureContent: true);
        $tool = $this->one($this->spansOf($this->runCalculator(), 4), 'execute_tool add');
        $this->assertSame(['a' => 2, 'b' => 3], json_decode($tool['attributes']['gen_ai.tool.call.arguments'], true));
        $this->assertSame('5', $tool['attributes']['gen_ai.tool.call.result']);
    }

    public function testACallersTraceparentIsTheRunSpansParent(): void
    {
        $this->enable();
        $parentTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
        $parentSpan = '00f067aa0ba902b7';
        $result = $this->runCalculator(traceparent: "00-{$parentTrace}-{$parentSpan}-01");
        [$traceId] = $this->ids($result);
        $this->assertSame($parentTrace, $traceId);
        $run = $this->one($this->spansOf($result, 4), 'invoke_agent calculator');
        $this->assertSame($parentSpan, $run['parentSpanId']);
    }

    public function testAContinueFromTheJsonStateLandsInTheSameTraceLinked(): void
    {
        $this->enable();
        $send = AgentSdk::defineTool(new Tool(id: 'send', execute: fn () => 'sent', requireApproval: true));
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'mailer', tools: [$send]));
        $paused = $agent->run('mail', new RecordingModel([['toolCalls' => [self::call('c1', 'send')]]]));
        $done = $agent->continueRun($paused->toJson(), new RecordingModel([['text' => 'done']]), approvals: ['c1']);
        [$traceId, $pausedSpan] = $this->ids($paused);
        [$sameTrace, $doneSpan] = $this->ids($done);
        $this->assertSame($traceId, $sameTrace);
        $runs = [];
        foreach ($this->spansOf($done, 2) as $s) {
            if ($s['name'] === 'invoke_agent mailer') {
                $runs[$s['spanId']] = $s;
            }
        }
        $this->assertSame($pausedSpan, $runs[$doneSpan]['parentSpanId']);
        $this->assertContains(['traceId' => $traceId, 'spanId' => $pausedSpan], $runs[$doneSpan]['links']);
    }

    public function testBadOptionsAreRefusedByName(): void
    {
        try {
            AgentSdk::enableTracing(endpoint: $this->base, headers: ['bad header' => 'x']);
            $this->fail('a bad header name was accepted');
        } catch (DefinitionError $e) {
            $this->assertStringContainsString('bad header', $e->getMessage());
        }
        try {
            AgentSdk::enableTracing(headers: ['x-n' => 5]);
            $this->fail('a header value that is not a string was accepted');
        } catch (DefinitionError $e) {
            $this->assertStringContainsString("'x-n'", $e->getMessage());
        }
        $this->assertFalse(AgentSdk::tracingEnabled());
    }
}
