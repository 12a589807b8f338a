<?php

// One side of the trace handoff check, in PHP (as step.py): `pause <state file>` runs the
// mailer agent until it pauses on an approval and writes the state; `continue <state file>`
// approves and finishes the run written by the other language. Tracing goes to
// OTEL_EXPORTER_OTLP_ENDPOINT (the check's receiver); spans are exported at exit.
// Run with `php -d extension=bindings-php/php/phaseo_agent.so` (tests/trace-handoff/php.sh).

declare(strict_types=1);

require __DIR__ . '/../../bindings-php/php/autoload.php';

use Phaseo\AgentSdk\AgentDefinition;
use Phaseo\AgentSdk\AgentSdk;
use Phaseo\AgentSdk\ScriptedClient;
use Phaseo\AgentSdk\Tool;

[, $mode, $path] = $argv;
AgentSdk::enableTracing(serviceName: 'handoff-php');
$send = AgentSdk::defineTool(new Tool(id: 'send', execute: fn () => 'sent', requireApproval: true));
$agent = AgentSdk::createAgent(new AgentDefinition(id: 'mailer', tools: [$send]));
if ($mode === 'pause') {
    $state = $agent->run('mail bob', new ScriptedClient([['toolCalls' => [['id' => 'c1', 'name' => 'send', 'arguments' => '{}']]]]));
    if ($state->status() !== 'waiting_for_human') {
        throw new RuntimeException("expected a pause, got {$state->status()}");
    }
    file_put_contents($path, $state->toJson());
} else {
    $state = $agent->continueRun((string) file_get_contents($path), new ScriptedClient([['text' => 'done']]), approvals: ['c1']);
    if ($state->status() !== 'completed') {
        throw new RuntimeException("expected completed, got {$state->status()}");
    }
    file_put_contents("{$path}.done", $state->toJson());
}
echo $state->run['traceparent'], "\n";
