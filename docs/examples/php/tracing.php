<?php

use Phaseo\AgentSdk\{AgentDefinition, AgentSdk, RuntimeContext, ScriptedClient, Tool};

// Every run from now on records spans. The collector's address comes from
// OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) unless `endpoint:` is given.
AgentSdk::enableTracing(serviceName: 'orders-bot');

$lookup = AgentSdk::defineTool(new Tool(
    id: 'lookup-order',
    description: 'Look up an order',
    parameters: ['type' => 'object', 'properties' => ['order' => ['type' => 'string']], 'required' => ['order']],
    execute: fn (array $input, RuntimeContext $runtime) => ['order' => $input['order'], 'status' => 'shipped'],
));
$client = new ScriptedClient([
    ['toolCalls' => [['id' => 'c1', 'name' => 'lookup-order', 'arguments' => '{"order": "A-7"}']]],
    ['text' => 'Order A-7 has shipped.'],
]);
$agent = AgentSdk::createAgent(new AgentDefinition(id: 'support', tools: [$lookup]));
echo $agent->run('where is order A-7?', $client)->output(), "\n";
AgentSdk::flushTracing(); // export now (what is left is also exported when the script ends)
