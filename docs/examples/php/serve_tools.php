<?php
// Two tools served over MCP on this process's stdin and stdout: an MCP client (an IDE, a
// desktop assistant, another agent) starts this program and calls them.

use Phaseo\AgentSdk\{AgentSdk, McpServer, RuntimeContext, Tool};

$order = ['type' => 'object', 'properties' => ['order' => ['type' => 'string']], 'required' => ['order']];

$lookup = AgentSdk::defineTool(new Tool(
    id: 'lookup-order',
    description: 'Look up an order',
    parameters: $order,
    execute: fn (array $input, RuntimeContext $runtime) => ['order' => $input['order'], 'status' => 'shipped'],
));
$cancel = AgentSdk::defineTool(new Tool(
    id: 'cancel-order',
    description: 'Cancel an order',
    parameters: $order,
    execute: fn (array $input, RuntimeContext $runtime) => ['order' => $input['order'], 'cancelled' => true],
));

// stdout now speaks MCP: log to STDERR, never echo. The tools' functions run while PHP waits.
$server = McpServer::serve(name: 'orders', tools: [$lookup, $cancel]);
$server->wait(); // until the client closes stdin
