<?php

use Phaseo\AgentSdk\{AgentDefinition, AgentSdk, RuntimeContext, ScriptedClient, Tool};

$checkService = AgentSdk::defineTool(new Tool(
    id: 'check-service',
    description: 'Check one service',
    execute: function (array $input, RuntimeContext $runtime) {
        ($runtime->emitProgress)(['checking' => $input['service']]); // a tool.preliminary_result event
        $runtime->sleep(20); // while one call waits here, the others run
        return ['service' => $input['service'], 'up' => $input['service'] !== 'db'];
    },
    parameters: ['type' => 'object', 'properties' => ['service' => ['type' => 'string']], 'required' => ['service']],
    timeoutMs: 3000,
));
// The three calls of one turn run side by side; results keep the model's call order.
$agent = AgentSdk::createAgent(new AgentDefinition(
    id: 'status',
    tools: [$checkService],
    toolExecution: ['toolConcurrency' => 3],
));
$calls = [];
foreach (['api', 'db', 'queue'] as $i => $service) {
    $calls[] = ['id' => 'c' . ($i + 1), 'name' => 'check-service', 'arguments' => json_encode(['service' => $service])];
}
$client = new ScriptedClient([
    ['toolCalls' => $calls],
    ['text' => 'api and queue are up; db is down.'],
]);

$progress = [];
$result = $agent->run('status?', $client, onEvent: function (array $event) use (&$progress) {
    if ($event['type'] === 'tool.preliminary_result') {
        $progress[] = "{$event['toolCallId']} progress: checking {$event['result']['checking']}";
    }
});
sort($progress); // the calls overlap: their progress arrives in any order
echo implode("\n", $progress), "\n";
echo $result->output(), "\n";
