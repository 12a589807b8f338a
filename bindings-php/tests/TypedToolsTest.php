<?php

declare(strict_types=1);

namespace Phaseo\AgentSdk\Tests;

require_once __DIR__ . '/typed/RefundTypes.php';

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\DefinitionError;
use Phaseo\AgentSdk\Description;
use Phaseo\AgentSdk\Internal\TypeSchema;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\Tests\Typed\Category;
use Phaseo\AgentSdk\Tests\Typed\Receipt;
use Phaseo\AgentSdk\Tests\Typed\Refund;
use Phaseo\AgentSdk\Tests\Typed\RefundReason;
use Phaseo\AgentSdk\Tests\Typed\RefundTool;
use Phaseo\AgentSdk\Tool;
use Phaseo\AgentSdk\ToolError;
use PHPUnit\Framework\TestCase;

/** Tools from PHP types (docs/behaviour.md §20). */
final class TypedToolsTest extends TestCase
{
    use Helpers;

    private const ARGS = ['order_id' => 'A-17', 'amount' => 25, 'reason' => 'damaged',
        'lines' => [['sku' => 'MUG-1', 'quantity' => 2], ['sku' => 'CUP-9', 'quantity' => 1]],
        'customer' => ['email' => 'ana@example.com']];

    private static function fixture(string $name): array
    {
        return json_decode(file_get_contents(__DIR__ . '/../../tests/typed-tools/' . $name), true, 512, JSON_THROW_ON_ERROR);
    }

    /** A JSON value with every object's keys sorted, to compare schemas. */
    private static function sorted(mixed $v): mixed
    {
        if (is_array($v)) {
            if (!array_is_list($v)) {
                ksort($v);
            }
            return array_map(self::sorted(...), $v);
        }
        return $v;
    }

    private static function plainJson(mixed $v): mixed
    {
        return json_decode(json_encode($v), true);
    }

    private static function agent(Tool ...$tools): \Phaseo\AgentSdk\Agent
    {
        return AgentSdk::createAgent(new AgentDefinition(id: 'desk', tools: $tools));
    }

    private static function error(array $message): string
    {
        return json_decode($message['content'], true)['error'];
    }

    public function testTheGeneratedSchemaMatchesTheCheckedInFile(): void
    {
        $this->assertSame(self::sorted(self::fixture('refund_schema.json')), self::sorted(self::plainJson(TypeSchema::ofClass(Refund::class))));
        $this->assertSame(self::sorted(self::fixture('category_schema.json')), self::sorted(self::plainJson(TypeSchema::ofClass(Category::class))));
    }

    public function testTheModelGetsTheSchemaAndExecuteGetsTheDecodedClassAfterApproval(): void
    {
        $executions = [];
        $agent = self::agent(RefundTool::create($executions));
        $model = new RecordingModel([['toolCalls' => [self::call('c1', 'refund', self::ARGS)]], ['text' => 'Refunded.']]);
        $paused = $agent->run('refund A-17', $model);
        $this->assertSame('waiting_for_human', $paused->status());
        $this->assertSame([], $executions);
        $sent = $model->requests[0]['tools'][0];
        $this->assertSame(self::sorted(self::fixture('refund_schema.json')), self::sorted($sent['parameters']));

        $done = $agent->continueRun(RunResult::fromJson($paused->toJson()), $model, approvals: ['c1']);
        $this->assertSame('completed', $done->status());
        $refund = $executions[0];
        $this->assertInstanceOf(Refund::class, $refund);
        $this->assertSame(25.0, $refund->amount);
        $this->assertSame(RefundReason::Damaged, $refund->reason);
        $this->assertSame(['MUG-1', 'CUP-9'], array_map(fn ($l) => $l->sku, $refund->lines));
        $this->assertSame('ana@example.com', $refund->customer->email);
        $this->assertFalse($refund->customer->vip);
        $this->assertNull($refund->note);
        $this->assertSame(['order_id' => 'A-17', 'refunded' => 25, 'lines' => 3], json_decode(self::toolMessages($model->requests[1])[0]['content'], true));
    }

    public function testWrongTypesGoBackToTheModelWhichRetries(): void
    {
        $executions = [];
        $tool = Tool::fromClass('refund', Refund::class, function (Refund $r) use (&$executions) {
            $executions[] = $r;
            return 'ok';
        }, description: 'Refunds', onError: 'return-to-model');
        $bad = self::ARGS;
        $bad['lines'][0]['quantity'] = 'two';
        $model = new RecordingModel([
            ['toolCalls' => [self::call('c1', 'refund', $bad)]],
            ['toolCalls' => [self::call('c2', 'refund', ['reason' => 'broken'] + self::ARGS)]],
            ['toolCalls' => [self::call('c3', 'refund', self::ARGS)]],
            ['text' => 'Refunded.'],
        ]);
        $done = self::agent($tool)->run('refund', $model);
        $this->assertSame('completed', $done->status());
        $this->assertSame('Invalid tool input: /lines/0/quantity: "two" is not of type "integer"', self::error(self::toolMessages($model->requests[1])[0]));
        $this->assertStringStartsWith('Invalid tool input: /reason: ', self::error(self::toolMessages($model->requests[2])[0]));
        $this->assertCount(1, $executions, 'only the valid call ran');
    }

    public function testTheExecutorsOwnTypedParametersAndReturnClass(): void
    {
        $seen = [];
        $tool = Tool::fromFunction('receipt', function (
            #[Description('The order')] string $order_id,
            RuntimeContext $runtime,
            float $amount = 1.5,
            ?RefundReason $reason = null,
        ) use (&$seen): Receipt {
            $seen[] = [$order_id, $amount, $reason, $runtime->toolCall->id];
            return new Receipt($order_id, $amount, 1);
        }, description: 'Makes a receipt');
        $this->assertSame(['type' => 'object', 'properties' => [
            'order_id' => ['type' => 'string', 'description' => 'The order'],
            'amount' => ['type' => 'number', 'default' => 1.5],
            'reason' => ['type' => 'string', 'enum' => ['damaged', 'late', 'other']],
        ], 'required' => ['order_id']], $tool->parameters);
        $this->assertSame(['order_id', 'refunded', 'lines'], $tool->outputSchema['required']);
        $model = new RecordingModel([
            ['toolCalls' => [self::call('a', 'receipt', ['order_id' => 'A-1']), self::call('b', 'receipt', ['order_id' => 'A-2', 'amount' => 3, 'reason' => 'late'])]],
            ['text' => 'ok'],
        ]);
        $done = self::agent($tool)->run('go', $model);
        $this->assertSame('completed', $done->status());
        $this->assertSame([['A-1', 1.5, null, 'a'], ['A-2', 3.0, RefundReason::Late, 'b']], $seen);
    }

    public function testTheDecoderNamesThePointerOfWhatDoesNotFit(): void
    {
        $cases = [
            [['order_id' => 1] + self::ARGS, '/order_id: expected a string, got an integer'],
            [['amount' => 1], '/: missing required property "order_id"'],
            [['reason' => 'bored'] + self::ARGS, '/reason: "bored" is not one of ["damaged","late","other"]'],
            [['lines' => [['sku' => 'a', 'quantity' => PHP_INT_MAX + 1]]] + self::ARGS, '/lines/0/quantity: expected an integer, got a number'],
        ];
        foreach ($cases as [$value, $message]) {
            try {
                TypeSchema::decode(Refund::class, $value);
                $this->fail("decoded $message");
            } catch (\InvalidArgumentException $e) {
                $this->assertSame($message, $e->getMessage());
            }
        }
    }

    public function testStrictAsksTheCoreForTheStrictFormAndNullMeansLeftOut(): void
    {
        $executions = [];
        $tool = Tool::fromClass('refund', Refund::class, function (Refund $r) use (&$executions) {
            $executions[] = $r;
            return 'ok';
        }, description: 'Refunds', strict: true);
        $this->assertFalse($tool->parameters['additionalProperties']);
        $this->assertSame(['order_id', 'amount', 'reason', 'lines', 'customer', 'note'], $tool->parameters['required']);
        $args = ['lines' => null, 'customer' => ['email' => 'b@x', 'vip' => null], 'note' => null] + self::ARGS;
        $model = new RecordingModel([['toolCalls' => [self::call('c1', 'refund', $args)]], ['text' => 'ok']]);
        $done = self::agent($tool)->run('go', $model);
        $this->assertSame('completed', $done->status());
        $this->assertTrue($model->requests[0]['tools'][0]['strict']);
        $this->assertNull($executions[0]->lines);
        $this->assertFalse($executions[0]->customer->vip);
    }

    public function testARecursiveTypeIsReferencedAndDecodedAtEveryDepth(): void
    {
        $seen = [];
        $tool = Tool::fromClass('file', Category::class, function (Category $c) use (&$seen) {
            $seen[] = $c;
            return array_map(fn (Category $x) => $x->name, $c->children);
        }, description: 'Files a tree', onError: 'return-to-model');
        $model = new RecordingModel([
            ['toolCalls' => [
                self::call('c1', 'file', ['name' => 'home', 'children' => [['name' => 'kitchen', 'children' => [['name' => 'mugs']]], ['name' => 'garden']]]),
                self::call('c2', 'file', ['name' => 'home', 'children' => [['name' => 'kitchen', 'children' => [['name' => 7]]]]]),
            ]],
            ['text' => 'ok'],
        ]);
        $done = self::agent($tool)->run('go', $model);
        $this->assertSame('completed', $done->status());
        $this->assertSame('mugs', $seen[0]->children[0]->children[0]->name);
        $this->assertInstanceOf(Category::class, $seen[0]->children[0]->children[0]);
        $messages = self::toolMessages($model->requests[1]);
        $this->assertSame(['kitchen', 'garden'], json_decode($messages[0]['content'], true));
        $this->assertStringStartsWith('Invalid tool input: /children/0/children/0/name: ', self::error($messages[1]));
    }

    public function testADeclaredReturnClassChecksTheResult(): void
    {
        $tool = Tool::fromClass('refund', Refund::class, fn (Refund $r): Receipt => new Receipt('', 1.0, 1), output: null, description: 'Refunds');
        $this->assertSame(TypeSchema::ofClass(Receipt::class), $tool->outputSchema);
        $bad = Tool::fromClass('refund', Refund::class, fn (Refund $r) => ['order_id' => 'A'], output: Receipt::class, description: 'Refunds');
        $model = new RecordingModel([['toolCalls' => [self::call('c1', 'refund', self::ARGS)]], ['text' => 'ok']]);
        try {
            self::agent($bad)->run('go', $model);
            $this->fail('the result was accepted');
        } catch (ToolError $e) {
            $this->assertSame('tool_output_invalid', $e->getCode());
            $this->assertStringContainsString('refunded', $e->getMessage());
        }
    }

    public function testTypedPlainAndManualToolsMix(): void
    {
        $plain = new Tool(id: 'deploy', execute: fn (array $input) => ['deployed' => $input['env']],
            parameters: ['type' => 'object', 'properties' => ['env' => ['type' => 'string']]]);
        $typed = Tool::fromClass('file', Category::class, fn (Category $c) => strtoupper($c->name), description: 'Files');
        $manual = Tool::fromClass('ask', Category::class, description: 'Asks a person');
        $agent = self::agent($plain, $typed, $manual);
        $model = new RecordingModel([
            ['toolCalls' => [self::call('a', 'deploy', ['env' => 'prod']), self::call('b', 'file', ['name' => 'mugs']), self::call('c', 'ask', ['name' => 'cups'])]],
            ['text' => 'ok'],
        ]);
        $paused = $agent->run('go', $model);
        $this->assertSame('waiting_for_human', $paused->status());
        $this->assertSame(['deploy', 'file', 'ask'], array_map(fn ($t) => $t['id'], $model->requests[0]['tools']));
        $done = $agent->continueRun($paused, $model, toolOutputs: [['toolCallId' => 'c', 'output' => 'noted']]);
        $this->assertSame(['{"deployed":"prod"}', 'MUGS', 'noted'], array_map(fn ($m) => $m['content'], self::toolMessages($model->requests[1])));
    }

    public function testDefinitionErrorsAreClear(): void
    {
        $cases = [
            [fn () => Tool::fromFunction('x', fn (array $tags) => 1), 'execute::$tags: an array needs #[ListOf(<type>)] for its items'],
            [fn () => Tool::fromFunction('x', fn ($anything) => 1), '$anything has no type: declare one (mixed for any value)'],
            [fn () => Tool::fromFunction('x', fn (int|string $id) => 1), 'union and intersection types have no JSON Schema form'],
            [fn () => Tool::fromFunction('x', fn (\DateTimeInterface $when) => 1), 'the type DateTimeInterface has no JSON Schema form'],
            [fn () => Tool::fromClass('x', 'NoSuchClass'), "the input type must be a class with constructor parameters, got 'NoSuchClass'"],
            [fn () => Tool::fromClass('x', Category::class, parameters: []), 'a typed tool sets parameters itself'],
        ];
        foreach ($cases as [$define, $message]) {
            try {
                $define();
                $this->fail("defined: $message");
            } catch (DefinitionError $e) {
                $this->assertStringContainsString($message, $e->getMessage());
            }
        }
    }
}
