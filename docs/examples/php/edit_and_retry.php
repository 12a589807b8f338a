<?php

use Phaseo\AgentSdk\{AgentDefinition, AgentSdk, RuntimeContext, ScriptedClient, Tool, ToolDecision, ToolRetry};

$deploy = AgentSdk::defineTool(new Tool(
    id: 'deploy',
    description: 'Deploy a release',
    execute: function (array $input, RuntimeContext $runtime) {
        $env = $input['env'];
        if ($runtime->attempt === 1) { // the first attempt fails; the SDK retries it
            echo "attempt 1 to deploy to {$env}: registry busy\n";
            throw new RuntimeException('registry busy');
        }
        // The same key on every attempt and after any continue: hand it to the service.
        if (!str_ends_with($runtime->idempotencyKey, ':c1')) {
            throw new RuntimeException('unexpected key');
        }
        echo "attempt {$runtime->attempt} deployed to {$env}\n";
        return ['deployed' => $env];
    },
    parameters: [
        'type' => 'object',
        'properties' => ['env' => ['enum' => ['staging', 'production']]],
        'required' => ['env'],
    ],
    requireApproval: true,
    maxCalls: 1, // at most one deploy per run
    retry: new ToolRetry(maxAttempts: 3, backoffMs: 10),
));
$agent = AgentSdk::createAgent(new AgentDefinition(id: 'ops', tools: [$deploy]));
$client = new ScriptedClient([
    ['toolCalls' => [['id' => 'c1', 'name' => 'deploy', 'arguments' => '{"env":"production"}']]],
    ['text' => 'Deployed to staging.'],
]);

$paused = $agent->run('deploy', $client);
// The person approves, but to staging: the edited input is validated before anything runs.
$done = $agent->continueRun(
    $paused->toJson(),
    $client,
    approvals: [new ToolDecision('c1', editedInput: ['env' => 'staging'])],
);
echo $done->output(), "\n";
