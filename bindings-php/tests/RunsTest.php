<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentError;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\CancelToken;
use Phaseo\AgentSdk\ContinueError;
use Phaseo\AgentSdk\MaxStepsError;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\StateError;
use Phaseo\AgentSdk\Tool;
use Phaseo\AgentSdk\ToolDecision;
use Phaseo\AgentSdk\ToolError;
use Phaseo\AgentSdk\ToolOutput;
use Phaseo\AgentSdk\RunStore;
use PHPUnit\Framework\TestCase;

/** Timeouts, overlap, pause → JSON → continue, refused continues, streams, exceptions. */
final class RunsTest extends TestCase
{
    use Helpers;

    private static function sleeper(string $id, int $ms, array &$log, ?int $timeoutMs = null): Tool
    {
        return new Tool(id: $id, execute: function (array $input, RuntimeContext $rt) use ($ms, &$log) {
            $log[] = ['start', $rt->toolCall['id'], hrtime(true)];
            $finished = $rt->sleep($ms);
            $log[] = [$finished ? 'end' : 'cancelled', $rt->toolCall['id'], hrtime(true)];
            return $finished ? 'slept' : 'cut short';
        }, timeoutMs: $timeoutMs);
    }

    public function testCallsOverlapUpToTheConcurrencyLimit(): void
    {
        $log = [];
        $calls = [self::call('c1', 'nap'), self::call('c2', 'nap'), self::call('c3', 'nap'), self::call('c4', 'nap')];
        $agent = AgentSdk::createAgent(new AgentDefinition(
            id: 'a',
            tools: [self::sleeper('nap', 200, $log)],
            toolExecution: ['toolConcurrency' => 2],
        ));
        $t = hrtime(true);
        $result = $agent->run('go', new ScriptedClient([['toolCalls' => $calls], ['text' => 'rested']]));
        $wall = self::ms($t);
        $this->assertSame('rested', $result->output());
        // Two at a time: at least two rounds of 200 ms; the peak below shows it was two at a
        // time (not one, not four). The upper bound only catches a hang, with room for a
        // loaded machine.
        $this->assertGreaterThanOrEqual(390, $wall);
        $this->assertLessThan(2500, $wall);
        $running = 0;
        $max = 0;
        foreach ($log as [$what]) {
            $running += $what === 'start' ? 1 : -1;
            $max = max($max, $running);
        }
        $this->assertSame(2, $max);
        $starts = array_values(array_filter($log, fn ($e) => $e[0] === 'start'));
        $this->assertSame(['c1', 'c2', 'c3', 'c4'], array_column($starts, 1), 'calls start in call order');
    }

    public function testAnAgentUsedAsAToolWaitsInItsFiberWhileOtherCallsRun(): void
    {
        $log = [];
        $inner = AgentSdk::createAgent(new AgentDefinition(id: 'inner', tools: [self::sleeper('nap', 200, $log)]));
        $delegate = new Tool(id: 'delegate', execute: function (array $input, RuntimeContext $rt) use ($inner) {
            $client = new ScriptedClient([['toolCalls' => [self::call('n-' . $rt->toolCall['id'], 'nap')]], ['text' => 'inner done']]);
            return $inner->run('nap please', $client)->output();
        });
        $outer = AgentSdk::createAgent(new AgentDefinition(id: 'outer', tools: [$delegate], toolExecution: ['toolConcurrency' => 2]));
        $model = new RecordingModel([['toolCalls' => [self::call('c1', 'delegate'), self::call('c2', 'delegate')]], ['text' => 'all done']]);
        $t = hrtime(true);
        $result = $outer->run('go', $model);
        $this->assertSame('all done', $result->output());
        // The log below shows the overlap; the bound only catches a hang (loaded machines).
        $this->assertLessThan(2500, self::ms($t));
        $this->assertSame(['inner done', 'inner done'], array_column(self::toolMessages($model->requests[1]), 'content'));
        $this->assertSame(['start', 'start', 'end', 'end'], array_column($log, 0));
    }

    public function testATimeoutEndsTheRunOnTimeAndTheSleepingToolSeesCancellation(): void
    {
        $log = [];
        // A 1 s deadline: the tool has begun by then even on a loaded machine, so it is there
        // to see the cancellation.
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [self::sleeper('slow', 5000, $log, 1000)]));
        $t = hrtime(true);
        try {
            $agent->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 'slow')]], ['text' => 'x']]));
            $this->fail('expected a timeout');
        } catch (ToolError $e) {
            $this->assertSame('tool_timeout', $e->getCode());
            $this->assertSame('failed', $e->result->status());
        }
        $this->assertLessThan(2500, self::ms($t));
        AgentSdk::settle(1000);
        $this->assertSame(['start', 'cancelled'], array_column($log, 0));
    }

    public function testATimeoutReturnedToTheModelLetsTheRunGoOn(): void
    {
        $log = [];
        $tool = new Tool(id: 'slow', execute: function (array $input, RuntimeContext $rt) {
            while (!$rt->cancelled()) {
                $rt->sleep(10);
            }
            return 'late';
        }, timeoutMs: 50, onError: 'return-to-model');
        $model = new RecordingModel([['toolCalls' => [self::call('c1', 'slow')]], ['text' => 'gave up']]);
        $result = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool]))->run('go', $model);
        $this->assertSame('gave up', $result->output());
        $message = self::toolMessages($model->requests[1])[0];
        $this->assertTrue($message['isError']);
        $this->assertStringContainsString('timed out', $message['content']);
    }

    public function testAResultReadsItsStateWhenAskedAndKeepsItReadOnly(): void
    {
        $add = new Tool(id: 'add', execute: fn (array $in) => $in['a'] + $in['b']);
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$add]));
        $turns = [];
        for ($i = 0; $i < 3; $i++) {
            $turns[] = ['toolCalls' => [['id' => "c{$i}", 'name' => 'add', 'arguments' => ['a' => $i, 'b' => 1]]]];
        }
        $result = $agent->run('go', new ScriptedClient([...$turns, ['text' => 'sum']]));
        $this->assertSame('completed', $result->status());
        $this->assertSame('sum', $result->output());
        $this->assertTrue(isset($result->usage));
        $this->assertCount(8, $result->messages, 'user, three assistant + tool pairs, the final text');
        $this->assertSame('3', $result->messages[6]['content']);
        $this->assertSame($result->runId(), $result->run['id']);
        $this->assertSame('completed', $result->run['status']);
        $this->assertSame('sum', $result->run['result']);
        $this->assertNull($result->pause());
        $again = RunResult::fromJson($result->toJson());
        $this->assertSame($result->run, $again->run);
        $this->assertSame($result->messages, $again->messages);
        try {
            $result->run = [];
            $this->fail('a result is read-only');
        } catch (\Error $e) {
            $this->assertStringContainsString('readonly', $e->getMessage());
        }
        // A state read back after a run: its properties come from the text at once.
        $this->assertSame('sum', json_decode($result->toJson(), true)['run']['result']);
    }

    public function testARunsStateIsWrittenWhenFirstReadAndLetGoOfWithItsResult(): void
    {
        $agent = AgentSdk::createAgent(new AgentDefinition(
            id: 'held',
            tools: [new Tool(id: 'add', execute: fn (array $in) => $in['a'] + $in['b'])],
        ));
        $run = fn () => $agent->run('go', new ScriptedClient([
            ['toolCalls' => [['id' => 'c1', 'name' => 'add', 'arguments' => ['a' => 1, 'b' => 2]]]],
            ['text' => 'done'],
        ]));
        // The run handle whose state the extension holds for the result.
        $handle = function (RunResult $result): int {
            $state = (new \ReflectionProperty(RunResult::class, 'state'))->getValue($result);
            $this->assertInstanceOf(\Phaseo\AgentSdk\Internal\EndedState::class, $state);
            return (new \ReflectionProperty($state, 'run'))->getValue($state);
        };
        $unheld = function (int $run): void {
            $message = null;
            try {
                phaseo_run_state($run);
            } catch (\Exception $e) {
                $message = $e->getMessage();
            }
            $this->assertNotNull($message, "run {$run}'s state is still held");
            $this->assertStringContainsString('no state to take', $message);
        };

        // Read whole: written once, the same text from a copy made before.
        $result = $run();
        $id = $handle($result);
        $copy = clone $result;
        $this->assertSame('done', $result->output());
        $text = $result->toJson();
        $this->assertStringContainsString('"items":[{"type":"tool_call"', $text);
        $this->assertSame($text, $copy->toJson());
        $this->assertSame($text, (string) $copy);
        $this->assertSame('3', $copy->messages[2]['content']);
        $unheld($id);

        // Never read whole: let go of with the last copy of the result.
        $result = $run();
        $id = $handle($result);
        $copy = clone $result;
        $this->assertSame('completed', $result->status());
        unset($result);
        $this->assertSame('done', $copy->output());
        unset($copy);
        $unheld($id);
    }

    public function testABlockingToolDelaysTheRunAndItsLateResultIsDiscarded(): void
    {
        $tool = new Tool(id: 'block', execute: function (array $input, $rt) {
            usleep(2_500_000);
            return 'late result';
        }, timeoutMs: 1000, onError: 'return-to-model');
        $model = new RecordingModel([['toolCalls' => [self::call('c1', 'block')]], ['text' => 'done']]);
        $t = hrtime(true);
        $result = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool]))->run('go', $model);
        // The deadline (1 s) comes after the tool began even on a loaded machine; the run still
        // waits for the blocking call to return.
        $this->assertGreaterThanOrEqual(2490, self::ms($t), 'PHP cannot interrupt a blocking callback');
        $content = self::toolMessages($model->requests[1])[0]['content'];
        $this->assertStringContainsString('timed out', $content);
        $this->assertStringNotContainsString('late result', $content);
        $this->assertSame('done', $result->output());
    }

    public function testPauseToJsonToContinueWithApprovalsRejectionsAndOutputs(): void
    {
        $ran = [];
        $deploy = new Tool(
            id: 'deploy',
            execute: function (array $input, $runtime) use (&$ran) {
                $ran[] = $input['environment'];
                return ['deployed' => $input['environment']];
            },
            description: 'Deploy the selected release',
            requireApproval: fn (array $input, $runtime) => ($input['environment'] ?? null) === 'production',
        );
        $ticket = new Tool(id: 'ticket', execute: null, description: 'Filed by a person');
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'ops', tools: [$deploy, $ticket]));
        $client = new ScriptedClient([
            ['toolCalls' => [
                self::call('c1', 'deploy', ['environment' => 'production']),
                self::call('c2', 'deploy', ['environment' => 'staging']),
                self::call('c3', 'deploy', ['environment' => 'production']),
                self::call('c4', 'ticket', ['title' => 'check']),
            ]],
            ['text' => 'All handled.'],
        ]);
        $paused = $agent->run('ship it', $client);
        $this->assertSame('waiting_for_human', $paused->status());
        $this->assertSame(['staging'], $ran);
        $pending = array_map(fn ($p) => [$p['call']['id'], $p['kind']], $paused->pending());
        $this->assertSame([['c1', 'approval'], ['c3', 'approval'], ['c4', 'manual']], $pending);

        $stored = $paused->toJson();
        $again = AgentSdk::createAgent(new AgentDefinition(id: 'ops', tools: [$deploy, $ticket]));
        $done = $again->continueRun(
            RunResult::fromJson($stored),
            $client,
            approvals: ['c1'],
            rejections: [new ToolDecision('c3', 'not today')],
            toolOutputs: [new ToolOutput('c4', ['ticket' => 42])],
        );
        $this->assertSame('completed', $done->status());
        $this->assertSame('All handled.', $done->output());
        $this->assertSame(['staging', 'production'], $ran);
    }

    public function testRefusedContinuesLoseNothing(): void
    {
        $tool = new Tool(id: 'deploy', execute: fn ($i, $rt) => 'ok', requireApproval: true);
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool]));
        $client = new ScriptedClient([['toolCalls' => [self::call('c1', 'deploy')]], ['text' => 'done']]);
        $paused = $agent->run('go', $client);
        try {
            $agent->continueRun($paused, $client, approvals: ['nope']);
            $this->fail('expected a refused continue');
        } catch (ContinueError $e) {
            $this->assertSame('continue_invalid', $e->getCode());
            $this->assertNull($e->result);
        }
        try {
            $agent->continueRun('{"version": 1, "run": 7}', $client, approvals: ['c1']);
            $this->fail('expected a state error');
        } catch (StateError $e) {
            $this->assertSame('state_invalid', $e->getCode());
        }
        $done = $agent->continueRun(self::roundTrip($paused), $client, approvals: ['c1']);
        $this->assertSame('completed', $done->status());
        $this->expectException(ContinueError::class);
        $agent->continueRun($done, $client, approvals: ['c1']);
    }

    public function testInteractiveToolsPauseAndTransformTheResponse(): void
    {
        $tool = new Tool(
            id: 'ask',
            execute: null,
            onToolCalled: fn (array $input, $runtime) => null,
            onResponseReceived: fn ($output, $runtime) => ['answer' => strtoupper($output)],
        );
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool]));
        $model = new RecordingModel([['toolCalls' => [self::call('c1', 'ask', ['q' => 'ok?'])]], ['text' => 'thanks']]);
        $paused = $agent->run('go', $model);
        $this->assertSame('hitl', $paused->pending()[0]['kind']);
        $done = $agent->continueRun($paused->toJson(), $model, toolOutputs: [['toolCallId' => 'c1', 'output' => 'yes']]);
        $this->assertSame('thanks', $done->output());
        $this->assertSame(['answer' => 'YES'], json_decode(self::toolMessages($model->requests[1])[0]['content'], true));
    }

    public function testStreamYieldsEventsAsAGeneratorThenTheResult(): void
    {
        $log = [];
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [self::sleeper('nap', 20, $log)]));
        $stream = $agent->stream('go', new ScriptedClient([['toolCalls' => [self::call('c1', 'nap')]], ['text' => 'Hello stream']]));
        $types = [];
        foreach ($stream->fullStream() as $event) {
            $types[] = $event['type'];
        }
        $this->assertSame('run.started', $types[0]);
        $this->assertContains('tool.started', $types);
        $this->assertSame('run.completed', end($types));
        $this->assertSame('Hello stream', $stream->getResult()->output());

        $text = $agent->stream('go', new ScriptedClient([['text' => 'abc']]));
        $this->assertSame('abc', implode('', iterator_to_array($text->textStream(), false)));
        $this->assertSame('completed', $text->getResult()->status());
    }

    public function testAStreamingPhpClientFeedsTheRunsStreamAsItYields(): void
    {
        $client = new class () implements \Phaseo\AgentSdk\StreamingModelClient {
            public function generate(array $request): array
            {
                return ['text' => 'whole'];
            }

            public function stream(array $request): iterable
            {
                yield ['type' => 'text-delta', 'delta' => 'Hel'];
                yield ['type' => 'text-delta', 'delta' => 'lo'];
                yield ['type' => 'response', 'response' => ['text' => 'Hello']];
            }
        };
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a'));
        $stream = $agent->stream('hi', $client);
        $this->assertSame(['Hel', 'lo'], iterator_to_array($stream->textStream(), false));
        $this->assertSame('Hello', $stream->getResult()->output());
        $this->assertSame('whole', $agent->run('hi', $client)->output(), 'a run that is not streamed calls generate');
    }

    public function testCancellingARunEndsItCancelled(): void
    {
        $log = [];
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [self::sleeper('nap', 5000, $log)]));
        $token = new CancelToken();
        $token->cancelAfter(100);
        $t = hrtime(true);
        $result = $agent->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 'nap')]]]), cancel: $token);
        $this->assertSame('cancelled', $result->status());
        $this->assertLessThan(2500, self::ms($t));
        AgentSdk::settle(1000);
        $this->assertSame(['start', 'cancelled'], array_column($log, 0));
    }

    /** @return iterable<string, array{\Closure}> */
    public static function throwers(): iterable
    {
        yield 'RuntimeException' => [fn () => throw new \RuntimeException('plain failure')];
        yield 'Error' => [fn () => throw new \Error('engine error')];
        yield 'TypeError' => [fn () => strlen([])];
        yield 'DivisionByZeroError' => [fn () => intdiv(1, 0)];
        yield 'ArgumentCountError' => [fn () => (fn (int $a, int $b) => $a)(1)];
        yield 'custom, empty message' => [fn () => throw new class ('') extends \LogicException {
        }];
        yield 'JsonException' => [fn () => json_decode('{', false, 512, JSON_THROW_ON_ERROR)];
    }

    /** @dataProvider throwers */
    public function testExceptionsOfAnyClassInAnyCallableNeverCrash(\Closure $throw): void
    {
        $tool = new Tool(id: 'boom', execute: fn (array $input, $rt) => $throw());
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool]));
        try {
            $agent->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 'boom')]], ['text' => 'x']]));
            $this->fail('expected the tool to fail the run');
        } catch (ToolError $e) {
            $this->assertSame('tool_failed', $e->getCode());
            $this->assertNotSame('', $e->getMessage());
        }
        // The same exception from a validator, a predicate, a hook, the model and a listener.
        $hooks = new Tool(
            id: 'hooked',
            execute: fn ($i, $rt) => 'ok',
            inputSchema: fn ($v) => $throw(),
        );
        $this->assertFailsWithoutCrash(new AgentDefinition(id: 'b', tools: [$hooks]), self::call('c1', 'hooked'));
        $approval = new Tool(id: 'gated', execute: fn ($i, $rt) => 'ok', requireApproval: fn ($i, $rt) => $throw());
        $this->assertFailsWithoutCrash(new AgentDefinition(id: 'c', tools: [$approval]), self::call('c1', 'gated'));
        $model = new RecordingModel([fn () => $throw()]);
        try {
            AgentSdk::createAgent(new AgentDefinition(id: 'd'))->run('go', $model);
            $this->fail('expected a model failure');
        } catch (AgentError $e) {
            $this->assertSame('model_failed', $e->getCode());
        }
        // A listener's exceptions are reported (error_log), never raised into the run.
        $log = tempnam(sys_get_temp_dir(), 'phaseo-php-log');
        $previous = ini_set('error_log', $log);
        try {
            $result = AgentSdk::createAgent(new AgentDefinition(id: 'e'))
                ->run('go', new ScriptedClient([['text' => 'fine']]), onEvent: fn ($e) => $throw());
        } finally {
            ini_set('error_log', (string) $previous);
        }
        $this->assertSame('fine', $result->output());
        $this->assertStringContainsString('event listener threw', (string) file_get_contents($log));
        unlink($log);
    }

    private function assertFailsWithoutCrash(AgentDefinition $def, array $call): void
    {
        try {
            AgentSdk::createAgent($def)->run('go', new ScriptedClient([['toolCalls' => [$call]], ['text' => 'x']]));
            $this->fail('expected the run to fail');
        } catch (AgentError $e) {
            $this->assertNotNull($e->result);
            $this->assertSame('failed', $e->result->status());
        }
    }

    public function testMaxStepsAndStopConditions(): void
    {
        $loop = new Tool(id: 'again', execute: fn ($i, $rt) => 'more');
        $replies = array_fill(0, 5, ['toolCalls' => [self::call('c', 'again')]]);
        try {
            AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$loop], maxSteps: 2))->run('go', new ScriptedClient($replies));
            $this->fail('expected max_steps');
        } catch (MaxStepsError $e) {
            $this->assertSame('max_steps', $e->getCode());
            $this->assertSame('failed', $e->result->status());
        }
        $stopped = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$loop], stopWhen: [
            AgentSdk::stepCountIs(10),
            fn (array $state) => $state['stepCount'] >= 2 ? 'enough' : null,
        ]))->run('go', new ScriptedClient($replies));
        $this->assertSame('enough', $stopped->stopReason());
    }

    /** @return array{0: string, 1: int} the output of tests/fixtures/ignores_cancellation_child.php in `$mode` and its exit code */
    private function ignoringChild(string $mode): array
    {
        $ext = __DIR__ . '/../php/phaseo_agent.so';
        // `timeout` ends a child that spins (the defect) so that the test fails, not hangs.
        $child = proc_open(['timeout', '30', PHP_BINARY, '-n', '-d', "extension={$ext}", __DIR__ . '/fixtures/ignores_cancellation_child.php', $mode],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $code = proc_close($child);
        return [$out . $err, $code];
    }

    public function testASleepLoopThatIgnoresItsTimeoutIsParkedAndUnwound(): void
    {
        [$out, $code] = $this->ignoringChild('sleep-loop');
        $this->assertSame(0, $code, $out);
        $this->assertSame("UNWOUND\ngave up\n", $out);
    }

    public function testAGeneratorThatNeverEndsStopsAtItsTimeout(): void
    {
        [$out, $code] = $this->ignoringChild('generator');
        $this->assertSame(0, $code, $out);
        $this->assertSame("gave up\n", $out);
    }

    /**
     * Runs tests/fixtures/interrupt_child.php in `$mode`, sends it SIGINT once its tool
     * started, and returns [its output lines, its final status, seconds from the signal to
     * its end, the stored run's status].
     */
    private function interruptChild(string $mode): array
    {
        $this->assertTrue(function_exists('pcntl_signal'), 'the pcntl extension is not loaded');
        $db = sys_get_temp_dir() . '/phaseo-php-sigint-' . bin2hex(random_bytes(4)) . '.db';
        $ext = __DIR__ . '/../php/phaseo_agent.so';
        $child = proc_open([PHP_BINARY, '-n', '-d', "extension={$ext}", __DIR__ . '/fixtures/interrupt_child.php', $mode, $db],
            [1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        try {
            $this->assertSame("READY\n", fgets($pipes[1]));
            $sent = microtime(true);
            proc_terminate($child, SIGINT);
            $lines = [];
            while (($line = fgets($pipes[1])) !== false) {
                $lines[] = rtrim($line);
            }
            do {
                $status = proc_get_status($child);
                usleep(10_000);
            } while ($status['running']);
            $elapsed = microtime(true) - $sent;
            $runs = RunStore::sqlite($db)->list()['runs'];
            $this->assertCount(1, $runs);
            return [$lines, $status, $elapsed, $runs[0]['status']];
        } finally {
            fclose($pipes[1]);
            proc_close($child);
            @unlink($db);
        }
    }

    /**
     * Ctrl-C during a blocking run with SIGINT at its default: the run is cancelled (the
     * tool's sleep is cut short, the store keeps `cancelled`), then the script ends by SIGINT
     * as usual — promptly, not after the tool's 20 s.
     */
    public function testCtrlCStopsABlockingRunCleanly(): void
    {
        [$lines, $status, $elapsed, $stored] = $this->interruptChild('default');
        $this->assertSame(['CUT SHORT'], $lines);
        $this->assertTrue($status['signaled'], 'the script did not end by SIGINT: ' . json_encode($status));
        $this->assertSame(SIGINT, $status['termsig']);
        $this->assertLessThan(5, $elapsed);
        $this->assertSame('cancelled', $stored);
    }

    /** An application's own SIGINT handler runs during a blocking run and may cancel it. */
    public function testAnOwnSigintHandlerRunsDuringABlockingRun(): void
    {
        [$lines, $status, $elapsed, $stored] = $this->interruptChild('own-handler');
        $this->assertSame(['HANDLER', 'CUT SHORT', 'STATUS cancelled'], $lines);
        $this->assertFalse($status['signaled']);
        $this->assertSame(0, $status['exitcode']);
        $this->assertLessThan(5, $elapsed);
        $this->assertSame('cancelled', $stored);
    }
}
