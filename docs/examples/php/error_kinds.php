<?php

use Phaseo\AgentSdk\{AgentDefinition, AgentError, AgentSdk, ScriptedClient, Tool};

$lookup = AgentSdk::defineTool(new Tool(
    id: 'lookup-order',
    description: 'Look up an order',
    execute: function (array $input) {
        if ($input['order'] === 'B-0') {
            throw new RuntimeException('order service down');
        }
        return ['order' => $input['order'], 'status' => 'shipped'];
    },
    parameters: ['type' => 'object', 'properties' => ['order' => ['type' => 'string']], 'required' => ['order']],
));
$agent = AgentSdk::createAgent(new AgentDefinition(id: 'support', tools: [$lookup], maxSteps: 2));

/** One scripted model answer: a call of tool $name. */
function call(string $name, string $arguments): array
{
    return ['toolCalls' => [['id' => 'c1', 'name' => $name, 'arguments' => $arguments]]];
}

$attempts = [
    'arguments that fail the schema' => [call('lookup-order', '{"order": 7}')],
    'a tool the agent does not have' => [call('delete-everything', '{}')],
    'a tool that raises' => [call('lookup-order', '{"order": "B-0"}')],
    'a model that never answers' => [call('lookup-order', '{"order": "A-7"}'), call('lookup-order', '{"order": "A-7"}')],
];
foreach ($attempts as $what => $answers) {
    try {
        $agent->run('where is my order?', new ScriptedClient($answers));
    } catch (AgentError $error) { // one family; the code is the same in every language
        echo "$what\n  {$error->getCode()}: {$error->getMessage()}\n";
        if ($error->result?->status() !== 'failed') {
            throw new LogicException("the error carries the run's final state");
        }
    }
}
