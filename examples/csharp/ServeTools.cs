// Serves two tools over MCP on standard input and output: any MCP client (an IDE, another
// agent, the Python or Node SDK's MCP client) can list and call them.
//
//     examples/csharp/run.sh ServeTools      (needs `make csharp`)
//
// addNote runs at once; deleteNotes asks the client for approval through MCP elicitation
// before it runs (docs/behaviour.md §19). The server stops when the client closes its input.
using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using PhaseoAgentSdk;

public static class ServeTools
{
    public static void Main()
    {
        var notes = new List<string>();
        var addNote = new Tool("addNote", (input, rt) =>
        {
            lock (notes)
            {
                notes.Add((string)((IDictionary<string, object>)input)["text"]);
                return Task.FromResult<object>(new Dictionary<string, object> { { "count", notes.Count } });
            }
        }, Description: "Stores a note", Parameters: new Dictionary<string, object>
        {
            { "type", "object" }, { "required", new List<object> { "text" } },
            { "properties", new Dictionary<string, object> { { "text", new Dictionary<string, object> { { "type", "string" } } } } },
        });
        var deleteNotes = new Tool("deleteNotes", (input, rt) =>
        {
            lock (notes)
            {
                var deleted = notes.Count;
                notes.Clear();
                return Task.FromResult<object>("deleted " + deleted + " notes");
            }
        }, Description: "Deletes every note") { RequireApproval = true };
        using (var server = McpServer.Serve(new ServeMcpOptions { Name = "notes", Version = "1.0.0", Tools = new[] { addNote, deleteNotes } }))
        {
            // Standard output carries the protocol: messages for people go to standard error.
            Console.Error.WriteLine("serving addNote and deleteNotes over stdio");
            server.WaitAsync().Wait();
        }
    }
}
