<?php

use Phaseo\AgentSdk\{AgentDefinition, AgentSdk, ScriptedClient, Tool};

$lookup = AgentSdk::defineTool(new Tool(
    id: 'lookup-order',
    description: 'Look up an order',
    execute: fn (array $input) => ['order' => $input['order'], 'status' => 'shipped'],
    parameters: ['type' => 'object', 'properties' => ['order' => ['type' => 'string']], 'required' => ['order']],
));
$agent = AgentSdk::createAgent(new AgentDefinition(id: 'support', tools: [$lookup]));
// A scripted model: the first answer calls the tool, the second is the final text.
$client = new ScriptedClient([
    ['toolCalls' => [['id' => 'c1', 'name' => 'lookup-order', 'arguments' => '{"order": "A-7"}']]],
    ['text' => 'Order A-7 has shipped.'],
]);

$stream = $agent->stream('where is order A-7?', $client);
foreach ($stream->fullStream() as $event) {
    // Text, and the tool's arguments as the model writes them, arrive as deltas.
    echo $event['type'], isset($event['delta']) ? " [{$event['delta']}]" : '', "\n";
}
echo $stream->getResult()->output(), "\n";
