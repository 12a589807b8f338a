// The application's tools served to any MCP client (Claude Code, Cursor, ...) over stdio.
//
//     node examples/node/serve-tools.mjs            (an MCP client starts it)
//     claude mcp add notes -- node examples/node/serve-tools.mjs
//
// Two tools: `addNote` (its input is validated by its schema, its result is structured) and
// `deleteNotes`, which needs a person's approval: the server asks the client through MCP
// elicitation before it runs, and a client that cannot ask gets an error instead. Every
// call keeps the tool's timeout and `toolConcurrency`. The server stops when the client
// closes its input.
import { defineTool, serveMcp } from '../../bindings-node/index.mjs';

const notes = [];

const addNote = defineTool({
  id: 'addNote',
  description: 'Stores a note',
  parameters: {
    type: 'object',
    properties: { text: { type: 'string', minLength: 1 } },
    required: ['text'],
    additionalProperties: false,
  },
  outputSchema: { type: 'object', properties: { id: { type: 'integer' }, count: { type: 'integer' } } },
  timeoutMs: 5_000,
  execute: ({ text }) => {
    notes.push(text);
    return { id: notes.length, count: notes.length };
  },
});

const deleteNotes = defineTool({
  id: 'deleteNotes',
  description: 'Deletes every note',
  requireApproval: true,
  execute: () => {
    const deleted = notes.length;
    notes.length = 0;
    return `deleted ${deleted} notes`;
  },
});

const server = await serveMcp({
  tools: [addNote, deleteNotes],
  name: 'notes',
  version: '1.0.0',
  toolExecution: { toolConcurrency: 4 },
});
await server.closed;
