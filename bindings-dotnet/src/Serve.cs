using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>The Streamable HTTP listener of a served MCP server.</summary>
    public sealed class McpHttpOptions
    {
        /// <summary>Interface to bind (null: 127.0.0.1).</summary>
        public string Host { get; set; }
        /// <summary>Port to bind (0: a free one; read it back from <see cref="McpToolServer.Url"/>).</summary>
        public int Port { get; set; }
        /// <summary>Path of the MCP endpoint (null: <c>/mcp</c>).</summary>
        public string Path { get; set; }
        /// <summary>When set, every request must carry <c>Authorization: Bearer &lt;token&gt;</c> (else 401).</summary>
        public string AuthToken { get; set; }
        /// <summary>Browser origins allowed to call (empty: loopback only).</summary>
        public IReadOnlyList<string> AllowedOrigins { get; set; }
        /// <summary>Names the Host header may carry (empty: loopback names and Host).</summary>
        public IReadOnlyList<string> AllowedHosts { get; set; }
    }

    /// <summary>The options of <see cref="McpServer.Serve"/> (docs/behaviour.md §19): give
    /// Tools, or Agent (with Client) to serve one agent as a single tool.</summary>
    public sealed class ServeMcpOptions
    {
        /// <summary>The server's name, as clients show it (required).</summary>
        public string Name { get; set; }
        /// <summary>The server's version (null: 0.0.0).</summary>
        public string Version { get; set; }
        /// <summary>The tools served (each needs Execute).</summary>
        public IReadOnlyList<Tool> Tools { get; set; }
        /// <summary>An agent served as one tool (docs/behaviour.md §18's defaults: its id, one
        /// string <c>input</c>).</summary>
        public Agent Agent { get; set; }
        /// <summary>What clients are told the served Agent does.</summary>
        public string Description { get; set; }
        /// <summary>The model a served Agent runs on.</summary>
        public IModelClient Client { get; set; }
        /// <summary>Serves over Streamable HTTP; null serves over standard input and output.</summary>
        public McpHttpOptions Http { get; set; }
        /// <summary>Calls served at once (Concurrency) and budgets counted over the server's lifetime.</summary>
        public ToolExecutionConfig ToolExecution { get; set; }

        internal Dictionary<string, object> ToJson(HostObject cbs)
        {
            var m = new Dictionary<string, object> { { "name", Name } };
            if (Version != null) m["version"] = Version;
            if (Agent != null) m["agent"] = Agent.Definition.ToJson(cbs);
            if (Tools != null || Agent == null)
            {
                var tools = new List<object>();
                foreach (var t in Tools ?? new Tool[0])
                {
                    if (t == null) throw new ArgumentException("Tools holds a null tool");
                    tools.Add(t.ToJson(cbs));
                }
                m["tools"] = tools;
            }
            if (Description != null) m["description"] = Description;
            if (ToolExecution != null) m["toolExecution"] = ToolExecution.ToJson();
            if (Http != null)
            {
                var t = new Dictionary<string, object> { { "type", "http" }, { "port", (long)Http.Port } };
                if (Http.Host != null) t["host"] = Http.Host;
                if (Http.Path != null) t["path"] = Http.Path;
                if (Http.AuthToken != null) t["authToken"] = Http.AuthToken;
                if (Http.AllowedOrigins != null) t["allowedOrigins"] = new List<object>(Http.AllowedOrigins);
                if (Http.AllowedHosts != null) t["allowedHosts"] = new List<object>(Http.AllowedHosts);
                m["transport"] = t;
            }
            return m;
        }
    }

    /// <summary>A running MCP server (see <see cref="McpServer.Serve"/>). It stops on
    /// <see cref="Close"/>/<see cref="Dispose"/>, at the end of standard input (stdio) and
    /// with the process: <c>using (var server = McpServer.Serve(...)) { ... }</c>.</summary>
    public sealed class McpToolServer : IDisposable
    {
        readonly object gate = new object();
        readonly TaskCompletionSource<bool> stopped = new TaskCompletionSource<bool>();
        IntPtr ptr;

        /// <summary><c>http://host:port/path</c> of a Streamable HTTP server; null on stdio.</summary>
        public string Url { get; }

        /// <summary>Whether the server has stopped.</summary>
        public bool IsClosed => stopped.Task.IsCompleted;

        internal McpToolServer(IntPtr server)
        {
            ptr = server;
            var url = Native.Take(Native.phaseo_mcp_server_url(server));
            Url = string.IsNullOrEmpty(url) ? null : url;
            var watcher = new Thread(Watch) { IsBackground = true, Name = "phaseo-mcp-server" };
            watcher.Start();
        }

        // Waits on its own thread until the server stops, then frees it.
        void Watch()
        {
            Native.phaseo_mcp_server_wait(ptr, out var err);
            if (err != IntPtr.Zero) Native.phaseo_string_free(err);
            lock (gate)
            {
                Native.phaseo_mcp_server_free(ptr);
                ptr = IntPtr.Zero;
            }
            stopped.TrySetResult(true);
        }

        /// <summary>Completes when the server stops; cancelling <paramref name="cancellationToken"/>
        /// stops waiting (the server keeps running).</summary>
        public Task WaitAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            if (!cancellationToken.CanBeCanceled) return stopped.Task;
            var waited = new TaskCompletionSource<bool>();
            var registration = cancellationToken.Register(() => waited.TrySetCanceled());
            stopped.Task.ContinueWith(_ => { registration.Dispose(); waited.TrySetResult(true); }, TaskScheduler.Default);
            return waited.Task;
        }

        /// <summary>Stops the server without waiting: no new request is accepted and calls in
        /// flight are cancelled.</summary>
        public void Close()
        {
            lock (gate)
            {
                if (ptr != IntPtr.Zero) Native.phaseo_mcp_server_close(ptr);
            }
        }

        /// <summary>Stops the server and waits until it has stopped.</summary>
        public void Dispose()
        {
            Close();
            stopped.Task.Wait();
        }
    }

}
