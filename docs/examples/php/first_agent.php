<?php

use Phaseo\AgentSdk\{AgentDefinition, AgentSdk, RuntimeContext, ScriptedClient, Tool};

$deploy = AgentSdk::defineTool(new Tool(
    id: 'deploy',
    description: 'Deploy a release',
    execute: function (array $input, RuntimeContext $runtime) { // runs in a Fiber of its own
        ($runtime->emitProgress)(['phase' => 'rolling out']);
        return ['deployed' => $input['env'], 'key' => $runtime->toolCall['id']];
    },
    parameters: ['type' => 'object', 'properties' => ['env' => ['type' => 'string']], 'required' => ['env']],
    timeoutMs: 5000,
    requireApproval: true,
));
$agent = AgentSdk::createAgent(new AgentDefinition(id: 'ops', tools: [$deploy]));
// A scripted model: the first answer calls the tool, the second is the final text.
$client = new ScriptedClient([
    ['toolCalls' => [['id' => 'c1', 'name' => 'deploy', 'arguments' => '{"env":"prod"}']]],
    ['text' => 'Deployed.'],
]);

$paused = $agent->run('deploy to prod', $client);
$stored = $paused->toJson(); // persist anywhere; any language continues it
$done = $agent->continueRun($stored, $client, approvals: ['c1']);
echo $done->output(), "\n"; // Deployed.
