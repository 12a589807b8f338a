<?php

// Serves two tools over MCP on standard input and output: any MCP client (an IDE, another
// agent, the Python or Node SDK's MCP client) can list and call them.
//
//     php -d extension=bindings-php/php/phaseo_agent.so examples/php/serve_tools.php   (needs `make php`)
//
// addNote runs at once; deleteNotes asks the client for approval through MCP elicitation
// before it runs (docs/behaviour.md §19). The server stops when the client closes its input.

declare(strict_types=1);

require __DIR__ . '/../../bindings-php/php/autoload.php';

use Phaseo\AgentSdk\McpServer;
use Phaseo\AgentSdk\Tool;

$notes = [];
$addNote = new Tool(
    id: 'addNote',
    description: 'Stores a note',
    parameters: ['type' => 'object', 'required' => ['text'], 'properties' => ['text' => ['type' => 'string']]],
    execute: function (array $input) use (&$notes): array {
        $notes[] = $input['text'];
        return ['count' => count($notes)];
    },
);
$deleteNotes = new Tool(
    id: 'deleteNotes',
    description: 'Deletes every note',
    requireApproval: true,
    execute: function () use (&$notes): string {
        $deleted = count($notes);
        $notes = [];
        return "deleted {$deleted} notes";
    },
);

$server = McpServer::serve('notes', [$addNote, $deleteNotes], version: '1.0.0');
// Standard output carries the protocol: messages for people go to standard error.
fwrite(STDERR, "serving addNote and deleteNotes over stdio\n");
// The tools' PHP functions run while the script waits here.
$server->wait();
