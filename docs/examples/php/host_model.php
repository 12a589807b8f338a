<?php

use Phaseo\AgentSdk\{AgentDefinition, AgentSdk, ModelClient};

/** A model client of your own (StreamingModelClient adds `stream`); this one answers without a real model. */
final class EchoModel implements ModelClient
{
    public function generate(array $request): array
    {
        $question = end($request['messages'])['content'];
        return ['message' => ['content' => "{$request['agentId']} heard: $question"]];
    }
}

$agent = AgentSdk::createAgent(new AgentDefinition(id: 'support'));
echo $agent->run('where is order A-7?', new EchoModel())->output(), "\n";
