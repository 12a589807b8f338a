<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\BigInt;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\RunStore;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\StateError;
use Phaseo\AgentSdk\Tool;
use PHPUnit\Framework\TestCase;

require_once __DIR__ . '/fixtures/places.php';

/**
 * Hostile values where the application hands them to the SDK: too deep, cyclic, not UTF-8,
 * of the wrong kind. Each is refused with the SDK's error of that place (docs/behaviour.md
 * §7) and never crashes the process; cases that crashed it run in a child process
 * (tests/fixtures/hostile_child.php) so that a crash fails the test, not the suite.
 */
final class HostileValuesTest extends TestCase
{
    use Helpers;

    /** @return array{0: string, 1: int} the child's output line and exit status */
    private function child(string ...$args): array
    {
        $ext = __DIR__ . '/../php/phaseo_agent.so';
        // `timeout` ends a child that hangs, so that the test fails instead.
        $child = proc_open(['timeout', '60', PHP_BINARY, '-n', '-d', "extension={$ext}", __DIR__ . '/fixtures/hostile_child.php', ...$args],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $code = proc_close($child);
        $this->assertSame(0, $code, "the child exited with {$code}: {$out}{$err}");
        return [rtrim($out), $code];
    }

    public static function values(): iterable
    {
        foreach (Places::REFUSED as $place => $code) {
            foreach (['deep-arrays', 'deep-objects', 'cyclic-reference', 'cyclic-object'] as $kind) {
                yield "{$kind} {$place}" => [$kind, $place, $code];
            }
        }
    }

    /**
     * @dataProvider values
     */
    public function testAValueTooDeepOrCyclicIsRefusedWithTheCodeOfItsPlace(string $kind, string $place, string $code): void
    {
        [$out] = $this->child('value', $kind, $place);
        $message = str_starts_with($kind, 'deep') ? 'value is nested more than 64 levels deep' : 'value contains a cycle';
        $this->assertMatchesRegularExpression('/^\w+Error ' . $code . ' (.*: )?' . $message . '$/', $out);
    }

    public static function schemaFields(): iterable
    {
        foreach (['parameters', 'inputSchema', 'outputSchema', 'eventSchema'] as $field) {
            yield $field => [$field, "DefinitionError definition_invalid Invalid definition of tool 't': {$field}: value contains a cycle"];
        }
        yield 'jsonSchemaValidator' => ['jsonSchemaValidator', 'DefinitionError definition_invalid Invalid JSON Schema: value contains a cycle'];
    }

    /**
     * @dataProvider schemaFields
     */
    public function testACyclicSchemaIsADefinitionErrorNamingTheField(string $field, string $expected): void
    {
        $this->assertSame($expected, $this->child('cyclic-schema', $field)[0]);
    }

    public function testAValueBuiltFarTooDeepInsideAToolIsRefusedAndFreedSafely(): void
    {
        $this->assertSame(
            'ToolError tool_output_invalid Invalid tool output: value is nested more than 64 levels deep',
            $this->child('deep-built')[0],
        );
    }

    public static function arguments(): iterable
    {
        yield 'deep input' => ['input', 'deep', 'InvalidArgumentException 0 input: value is nested more than 64 levels deep'];
        yield 'cyclic input' => ['input', 'cyclic', 'InvalidArgumentException 0 input: value contains a cycle'];
        yield 'deep context' => ['context', 'deep', 'InvalidArgumentException 0 context: value is nested more than 64 levels deep'];
        yield 'cyclic context' => ['context', 'cyclic', 'InvalidArgumentException 0 context: value contains a cycle'];
    }

    /**
     * A run's own arguments are the caller's: PHP's error for a bad argument, naming it.
     *
     * @dataProvider arguments
     */
    public function testARunArgumentJsonCannotHoldIsAnInvalidArgumentNamingIt(string $name, string $kind, string $expected): void
    {
        $this->assertSame($expected, $this->child('argument', $name, $kind)[0]);
    }

    public function testAnExceptionMessageThatIsNotUtf8BecomesTheErrorsMessage(): void
    {
        $this->assertSame("ToolError tool_failed bad \u{FFFD}\u{FFFD} bytes", $this->child('bytes-message', 'tool')[0]);
        $this->assertSame("ModelError model_failed bad \u{FFFD}\u{FFFD} bytes", $this->child('bytes-message', 'client')[0]);
    }

    private static function pausedState(): array
    {
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [new Tool(id: 't', requireApproval: true, execute: fn ($input) => $input)]));
        $paused = $agent->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 't', ['a' => 1])]], ['text' => 'done']]));
        return [$agent, $paused];
    }

    public function testStateTextThatIsNotUtf8IsAStateError(): void
    {
        [$agent, $paused] = self::pausedState();
        $text = str_replace('"go"', "\"g\xFFo\"", $paused->toJson());
        foreach ([
            'fromJson' => fn () => RunResult::fromJson("\xFF"),
            'fromJson of a state' => fn () => RunResult::fromJson($text),
            'continueRun' => fn () => $agent->continueRun($text, new ScriptedClient([['text' => 'x']]), approvals: ['c1']),
            'continueStream' => fn () => $agent->continueStream($text, new ScriptedClient([['text' => 'x']]), approvals: ['c1'])->getResult(),
        ] as $what => $f) {
            try {
                $f();
                $this->fail("{$what}: accepted");
            } catch (StateError $e) {
                $this->assertSame('state_invalid', $e->getCode(), $what);
                $this->assertStringStartsWith('Invalid state: text is not valid UTF-8', $e->getMessage(), $what);
            }
        }
        $this->assertSame('done', $agent->continueRun($paused->toJson(), new ScriptedClient([['text' => 'done']]), approvals: ['c1'])->output());
    }

    public function testARunIdThatIsNotUtf8IsNoStoredRun(): void
    {
        $store = RunStore::memory();
        $this->assertNull($store->load("\xFF"));
        $this->assertFalse($store->delete("\xFF"));
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', store: $store));
        try {
            $agent->continueRunById("\xFF", new ScriptedClient([['text' => 'x']]));
            $this->fail('accepted');
        } catch (\Phaseo\AgentSdk\AgentError $e) {
            $this->assertContains($e->getCode(), ['continue_invalid', 'state_invalid'], $e->getMessage());
        }
    }

    public function testAStateArrayContinuesAndOneJsonCannotHoldIsAStateError(): void
    {
        [$agent, $paused] = self::pausedState();
        $state = $paused->jsonSerialize();
        $this->assertSame($paused->toJson(), RunResult::fromArray($state)->toJson());
        $done = $agent->continueRun($state, new ScriptedClient([['text' => 'done']]), approvals: ['c1']);
        $this->assertSame('completed', $done->status());
        $cyclic = $state;
        $cyclic['run']['context'] = ['n' => 1];
        $cyclic['run']['context']['self'] = &$cyclic['run']['context'];
        $deep = $state;
        $value = 1;
        for ($i = 0; $i < 10_000; $i++) {
            $value = [$value];
        }
        $deep['run']['context'] = $value;
        foreach (['cyclic' => [$cyclic, 'value contains a cycle'], 'deep' => [$deep, 'value is nested more than 64 levels deep']] as $what => [$bad, $message]) {
            foreach (['fromArray' => fn () => RunResult::fromArray($bad), 'continueRun' => fn () => $agent->continueRun($bad, new ScriptedClient([['text' => 'x']]), approvals: ['c1'])] as $how => $f) {
                try {
                    $f();
                    $this->fail("{$what} {$how}: accepted");
                } catch (StateError $e) {
                    $this->assertSame('state_invalid', $e->getCode());
                    $this->assertSame("Invalid state: {$message}", $e->getMessage());
                }
            }
        }
        // A state holds values 64 levels deep below its own structure (64 + 8 from its root).
        $value = 'x';
        for ($i = 0; $i < 64; $i++) {
            $value = ['k' => $value];
        }
        $state['run']['context'] = $value;
        $this->assertSame('completed', $agent->continueRun($state, new ScriptedClient([['text' => 'done']]), approvals: ['c1'])->status());
    }

    public function testIntegersAbovePhpsIntReadFromAStateAreBigInts(): void
    {
        $max = new BigInt('18446744073709551615');
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [
            new Tool(id: 't', execute: fn () => ['max' => $max, 'padded' => new BigInt('007'), 'int' => PHP_INT_MAX, 'text' => '18446744073709551615']),
        ]));
        $result = $agent->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 't')]], ['text' => 'done']]), context: ['n' => $max]);
        foreach ([$result, self::roundTrip($result)] as $r) {
            $this->assertEquals(['n' => $max], $r->context());
            $this->assertEquals(
                ['max' => $max, 'padded' => 7, 'int' => PHP_INT_MAX, 'text' => '18446744073709551615'],
                $r->jsonSerialize()['stepResults'][0]['toolResults'][0]['result'],
            );
        }
    }

    public function testABigIntBeyond64BitsCannotBeMade(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('BigInt: 18446744073709551616 does not fit in 64 bits');
        new BigInt('18446744073709551616');
    }

    /** @return iterable<string, array{0: \Closure, 1: string}> */
    public static function badDefinitions(): iterable
    {
        $tool = fn (array $extra) => new Tool(...['id' => 't', 'execute' => fn () => 'ok'] + $extra);
        $agent = fn (array $extra) => AgentSdk::createAgent(new AgentDefinition(...['id' => 'a'] + $extra));
        yield 'a tools entry that is not a Tool' => [fn () => $agent(['tools' => [$tool([]), 5]]),
            'Invalid agent definition: tools[1] must be a Phaseo\AgentSdk\Tool, got int'];
        yield 'an execute that is not callable' => [fn () => new Tool(id: 't', execute: 'no_such_function'),
            "Invalid definition of tool 't': execute must be callable or null, got string"];
        yield 'a hook that is not callable' => [fn () => AgentSdk::defineTool($tool(['onToolCalled' => 'no_such_function'])),
            "Invalid definition of tool 't': onToolCalled must be callable or null, got string"];
        yield 'a requireApproval that is neither bool nor callable' => [fn () => AgentSdk::defineTool($tool(['requireApproval' => 'yes'])),
            "Invalid definition of tool 't': requireApproval must be a bool or callable, got string"];
        yield 'NaN in parameters' => [fn () => AgentSdk::defineTool($tool(['parameters' => ['type' => 'object', 'maximum' => NAN]])),
            "Invalid definition of tool 't': parameters: Inf and NaN cannot be JSON encoded"];
        yield 'an INF timeoutMs' => [fn () => AgentSdk::defineTool($tool(['timeoutMs' => INF])),
            "Invalid definition of tool 't': timeoutMs: Inf and NaN cannot be JSON encoded"];
        yield 'a description that is not UTF-8' => [fn () => AgentSdk::defineTool($tool(['description' => "\xFF"])),
            "Invalid definition of tool 't': description: Malformed UTF-8 characters, possibly incorrectly encoded"];
        yield 'parameters nested too deep' => [fn () => AgentSdk::defineTool($tool(['parameters' => array_reduce(range(1, 70), fn ($s) => ['type' => 'array', 'items' => $s], ['type' => 'string'])])),
            "Invalid definition of tool 't': parameters: value is nested more than 64 levels deep"];
        yield 'an agent requireApproval that is not callable' => [fn () => $agent(['requireApproval' => true]),
            'Invalid agent definition: requireApproval must be callable or null, got bool'];
        yield 'a cyclic toolExecution' => [fn () => $agent(['toolExecution' => (function () {
            $o = ['toolConcurrency' => 2];
            $o['again'] = &$o;
            return $o;
        })()]), 'Invalid agent definition: toolExecution: value contains a cycle'];
        yield 'a NaN temperature override' => [fn () => $agent([])->run('go', new ScriptedClient([['text' => 'x']]), temperature: NAN),
            'Invalid run options: temperature: Inf and NaN cannot be JSON encoded'];
    }

    /**
     * Anything wrong that PHP's types let through is a DefinitionError naming the field.
     *
     * @dataProvider badDefinitions
     */
    public function testWrongDefinitionsAreDefinitionErrorsNamingTheField(\Closure $define, string $message): void
    {
        try {
            $define();
            $this->fail('accepted');
        } catch (DefinitionError $e) {
            $this->assertSame('definition_invalid', $e->getCode());
            $this->assertSame($message, $e->getMessage());
        }
    }

    /** Typed constructor parameters keep PHP's own TypeError, which names the parameter (see Tool). */
    public function testAnArgumentOfTheWrongPhpTypeIsPhpsTypeError(): void
    {
        foreach ([
            '$id' => fn () => new Tool(...['id' => 5]),
            '$timeoutMs' => fn () => new Tool(...['id' => 't', 'timeoutMs' => 'x']),
            '$parameters' => fn () => new Tool(...['id' => 't', 'parameters' => 'notarray']),
            '$tools' => fn () => new AgentDefinition(...['id' => 'a', 'tools' => 'nope']),
        ] as $parameter => $f) {
            try {
                $f();
                $this->fail("{$parameter}: accepted");
            } catch (\TypeError $e) {
                $this->assertStringContainsString("({$parameter})", $e->getMessage());
            }
        }
    }

    /**
     * What the fuzzer (tests/FuzzTest.php, property `options`) found: a duration too long for
     * a clock is the longest wait, so the tool runs and its timeout never fires.
     */
    public function testADurationTooLongForAClockIsNoLimit(): void
    {
        $tool = new Tool(id: 't', execute: fn () => 'ok', timeoutMs: 1e300);
        $agent = AgentSdk::createAgent(new AgentDefinition(id: 'a', tools: [$tool], modelRetry: ['maxRetries' => 1, 'backoffMs' => 1e300]));
        $result = $agent->run('go', new ScriptedClient([['toolCalls' => [self::call('c1', 't')]], ['text' => 'done']]));
        $this->assertSame('completed', $result->status());
        $this->assertSame('done', $result->output());
    }

    /**
     * What the hostile probe (tests/FuzzTest.php, property `callbacks`) found: each run ends
     * on time with a documented error, or completes.
     */
    public static function probeCases(): iterable
    {
        yield 'a stop condition that calls Fiber::suspend() fails the call' => ['suspend', 'ToolError tool_failed stopWhen failed: the PHP function called Fiber::suspend() outside a Fiber of its own'];
        yield 'an endless generator tool sees CancelToken::cancelAfter' => ['generator', 'ok "cancelled"'];
        yield 'a listener exception whose message is not text is only logged' => ['listener', 'ok "completed"'];
        yield 'a cycle through a reference no variable holds is named a cycle' => ['invisible-cycle', 'ToolError tool_output_invalid Invalid tool output: value contains a cycle'];
    }

    /**
     * @dataProvider probeCases
     */
    public function testWhatTheHostileProbeFoundEndsOnTimeWithADocumentedOutcome(string $case, string $expected): void
    {
        [$out] = $this->child('probe', $case);
        $this->assertStringStartsWith($expected, $out);
    }
}
