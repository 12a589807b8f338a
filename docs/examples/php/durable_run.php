<?php

use Phaseo\AgentSdk\{Agent, AgentDefinition, AgentSdk, ContinueError, RunStore, ScriptedClient, Tool};

$refund = AgentSdk::defineTool(new Tool(
    id: 'refund',
    description: 'Refund an order',
    execute: fn (array $input) => ['refunded' => $input['amount']],
    parameters: [
        'type' => 'object',
        'properties' => ['order' => ['type' => 'string'], 'amount' => ['type' => 'number']],
        'required' => ['order', 'amount'],
    ],
    requireApproval: true,
));
// Every worker builds the same agent over the same store (another process, another day).
$supportDesk = fn (RunStore $store): Agent =>
    AgentSdk::createAgent(new AgentDefinition(id: 'support-desk', tools: [$refund], store: $store));

$client = new ScriptedClient([
    ['toolCalls' => [['id' => 'c1', 'name' => 'refund', 'arguments' => '{"order": "A-17", "amount": 42}']]],
    ['text' => 'Refunded 42 on order A-17.'],
]);
$path = sys_get_temp_dir() . '/phaseo-' . bin2hex(random_bytes(4)) . '.db';

// The chat worker: the run pauses on the refund; its state is saved in the store.
$paused = $supportDesk(RunStore::sqlite($path))->run('Refund order A-17', $client);
echo "run status: {$paused->status()}\n";

// The approval desk, later: its inbox lists the waiting runs; it continues one by run id.
$store = RunStore::sqlite($path);
foreach ($store->list(['statuses' => ['waiting_for_human']])['runs'] as $run) {
    foreach ($run['state']->pending() as ['call' => $call]) {
        echo "inbox: {$call['name']} {$call['input']['order']} {$call['input']['amount']}\n";
    }
    $done = $supportDesk($store)->continueRunById($run['runId'], $client, approvals: ['c1']);
    echo $done->output(), "\n";
    echo "stored status: {$store->load($run['runId'])['status']}\n";
    // Any other continue of that pause, by any worker, is refused: the refund ran once.
    try {
        $supportDesk($store)->continueRunById($run['runId'], $client, approvals: ['c1']);
    } catch (ContinueError $e) {
        echo "again: {$e->errorCode()}\n";
    }
}
unlink($path);
