<?php

// The support-desk demo in PHP: three tools on the offline test client (or a real model
// when PHASEO_API_KEY / OPENAI_BASE_URL is set), a pause for approval and a manual step,
// and a continue from the state's JSON text.
//
//   php -d extension=bindings-php/php/phaseo_agent.so examples/php/support_desk.php   (after `make php`)

declare(strict_types=1);

require __DIR__ . '/../../bindings-php/php/autoload.php';

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\RunResult;
use Phaseo\AgentSdk\RuntimeContext;
use Phaseo\AgentSdk\TestClient;
use Phaseo\AgentSdk\Tool;
use Phaseo\AgentSdk\ToolOutput;

$lookup = AgentSdk::defineTool(new Tool(
    id: 'lookup_ticket',
    execute: function (array $input, RuntimeContext $runtime) {
        ($runtime->emitProgress)(['phase' => 'searching']);
        $runtime->sleep(20); // other calls run meanwhile
        ($runtime->emitProgress)(['phase' => 'found']);
        return ['ticket_id' => $input['ticketId'], 'customer' => 'Ana', 'status' => 'open', 'paid' => 150];
    },
    description: 'Load a support ticket by id.',
    parameters: [
        'type' => 'object',
        'properties' => ['ticketId' => ['type' => 'string', 'examples' => ['T-1001']]],
        'required' => ['ticketId'],
        'additionalProperties' => false,
    ],
    timeoutMs: 2000,
));

$refund = AgentSdk::defineTool(new Tool(
    id: 'issue_refund',
    execute: fn (array $input, RuntimeContext $runtime) => ['refunded' => $input['amount'], 'idempotency_key' => $runtime->toolCall['id']],
    description: "Refund a ticket's customer. Amounts over 100 need a person's approval.",
    parameters: [
        'type' => 'object',
        'properties' => [
            'ticketId' => ['type' => 'string', 'examples' => ['T-1001']],
            'amount' => ['type' => 'number', 'minimum' => 0, 'examples' => [150]],
        ],
        'required' => ['ticketId', 'amount'],
        'additionalProperties' => false,
    ],
    requireApproval: fn (array $input, $runtime) => $input['amount'] > 100,
));

$escalate = AgentSdk::defineTool(new Tool(
    id: 'escalate',
    execute: null, // manual: a specialist answers later
    description: 'Hand the ticket to a human specialist, who answers later.',
    parameters: [
        'type' => 'object',
        'properties' => [
            'ticketId' => ['type' => 'string', 'examples' => ['T-1001']],
            'reason' => ['type' => 'string', 'examples' => ['customer asked for a manager']],
        ],
        'required' => ['ticketId', 'reason'],
    ],
));

function print_event(array $event): void
{
    $detail = '';
    if (str_starts_with($event['type'], 'tool.')) {
        $detail = ' ' . $event['toolName'];
        if (array_key_exists('result', $event)) {
            $detail .= ' progress ' . json_encode($event['result']);
        }
        if (array_key_exists('output', $event)) {
            $detail .= ' -> ' . json_encode($event['output']);
        }
    } elseif ($event['type'] === 'run.waiting_for_human') {
        $detail = " ({$event['pause']['kind']})";
    }
    echo "  event {$event['type']}{$detail}\n";
}

function show(mixed $value): string
{
    return is_string($value) ? $value : json_encode($value, JSON_UNESCAPED_UNICODE);
}

function client_from_env(): object
{
    if (getenv('PHASEO_API_KEY')) {
        echo "model: Phaseo gateway\n";
        return AgentSdk::createGatewayAgentClient(array_filter(['model' => getenv('PHASEO_MODEL') ?: null]));
    }
    if (getenv('OPENAI_BASE_URL')) {
        echo "model: OpenAI-compatible server\n";
        return AgentSdk::createOpenAICompatibleClient(array_filter(['model' => getenv('OPENAI_MODEL') ?: null]));
    }
    echo "model: offline test client (set PHASEO_API_KEY or OPENAI_BASE_URL for a real one)\n";
    return new TestClient();
}

$agent = AgentSdk::createAgent(new AgentDefinition(
    id: 'support-desk',
    instructions: 'You resolve support tickets.',
    tools: [$lookup, $refund, $escalate],
    toolExecution: ['toolConcurrency' => 4],
));
$client = client_from_env();
echo "== run\n";
$paused = $agent->run('Ticket T-1001: the customer wants a refund of 150.', $client,
    context: ['operator' => 'demo'], onEvent: print_event(...));
echo "status: {$paused->status()}\n";
if ($paused->status() !== 'waiting_for_human') {
    echo 'answer: ' . show($paused->output()) . "\n";
    exit(0);
}
foreach ($paused->pending() as $p) {
    echo "pending: {$p['call']['id']} {$p['call']['name']} " . json_encode($p['call']['input']) . " ({$p['kind']})\n";
}

$stored = $paused->toJson(); // an application stores this text and continues later, anywhere
echo 'stored state: ' . strlen($stored) . " bytes\n";
$restored = RunResult::fromJson($stored);
$approvals = [];
$outputs = [];
foreach ($restored->pending() as $p) {
    if ($p['call']['name'] === 'issue_refund') {
        $approvals[] = $p['call']['id'];
    } elseif ($p['call']['name'] === 'escalate') {
        $outputs[] = new ToolOutput($p['call']['id'], ['assigned_to' => 'Berta', 'eta' => '2h']);
    }
}
echo "== continue\n";
$done = $agent->continueRun($restored, $client, approvals: $approvals, toolOutputs: $outputs, onEvent: print_event(...));
echo "status: {$done->status()}\n";
echo 'answer: ' . show($done->output()) . "\n";
