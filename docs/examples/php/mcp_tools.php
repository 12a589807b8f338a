<?php

use Phaseo\AgentSdk\{AgentDefinition, AgentSdk, McpServer, ScriptedClient};

// An MCP server started as a child process and spoken to over stdio: here the protocol's
// reference server, installed under tests/mcp; any server's command works the same way.
$everything = McpServer::stdio(
    name: 'everything',
    command: 'node',
    args: ['tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'],
    allowTools: ['echo'], // offer only these of the server's tools
);
// A scripted model: the first answer calls the server's tool, the second is the final text.
$client = new ScriptedClient([
    ['toolCalls' => [['id' => 'c1', 'name' => 'echo', 'arguments' => '{"message": "hello"}']]],
    ['text' => 'The server said hello.'],
]);

// The server starts when a run first needs its tools and stops with the agent.
$agent = AgentSdk::createAgent(new AgentDefinition(id: 'assistant', mcpServers: [$everything]));
$result = $agent->run('say hello through the server', $client, onEvent: function (array $event) {
    if ($event['type'] === 'tool.completed') {
        echo "{$event['toolName']} -> {$event['output']}\n";
    }
});
echo $result->output(), "\n";
