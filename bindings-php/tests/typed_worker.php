<?php

// One half of a typed tool's cross-language handoff (docs/behaviour.md §4, §20), run by
// tests/typed-handoff/run.sh:
//   php typed_worker.php pause FILE     the model asks for a refund; the run pauses for
//                                       approval and its state is written to FILE
//   php typed_worker.php continue FILE  the stored run is approved and continued here
// Prints one JSON line: the status and, after continuing, the output and the tool message.

declare(strict_types=1);

require __DIR__ . '/../php/autoload.php';
require __DIR__ . '/typed/RefundTypes.php';

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\Tests\Typed\RefundTool;

[, $mode, $path] = $argv + [null, null, null];
$executions = [];
$agent = AgentSdk::createAgent(new AgentDefinition(id: 'desk', tools: [RefundTool::create($executions)]));
if ($mode === 'pause') {
    $args = ['order_id' => 'A-17', 'amount' => 25, 'reason' => 'damaged',
        'lines' => [['sku' => 'MUG-1', 'quantity' => 2], ['sku' => 'CUP-9', 'quantity' => 1]],
        'customer' => ['email' => 'ana@example.com']];
    $client = new ScriptedClient([['toolCalls' => [['id' => 'c1', 'name' => 'refund', 'arguments' => json_encode($args)]]]]);
    $paused = $agent->run('refund A-17', $client);
    file_put_contents($path, $paused->toJson());
    echo json_encode(['status' => $paused->status(), 'pending' => array_map(fn ($p) => $p['call']['id'], $paused->pending())]), "\n";
} elseif ($mode === 'continue') {
    $done = $agent->continueRun(file_get_contents($path), new ScriptedClient([['text' => 'Refunded.']]), approvals: ['c1']);
    $tool = array_values(array_filter($done->messages, fn ($m) => $m['role'] === 'tool'))[0];
    echo json_encode(['status' => $done->status(), 'output' => $done->output(), 'tool' => json_decode($tool['content'], true)]), "\n";
} else {
    fwrite(STDERR, "usage: typed_worker.php pause|continue FILE\n");
    exit(2);
}
