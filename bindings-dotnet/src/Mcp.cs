using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>An MCP server whose tools the agent offers (docs/behaviour.md §11): stdio
    /// (<see cref="Command"/>, Args, Env, Cwd) or Streamable HTTP (<see cref="Url"/>, Headers,
    /// Bearer). The core starts it on first use and lists its tools; their calls get the same
    /// validation, approval, timeouts, concurrency and events as any tool.</summary>
    public sealed class McpServer
    {
        /// <summary>Names the server in errors (<c>mcp_failed</c>).</summary>
        public string Name { get; set; }
        /// <summary>The stdio server's program.</summary>
        public string Command { get; set; }
        /// <summary>Its arguments.</summary>
        public IReadOnlyList<string> Args { get; set; }
        /// <summary>Extra environment variables.</summary>
        public Dictionary<string, string> Env { get; set; }
        /// <summary>Its working directory.</summary>
        public string Cwd { get; set; }
        /// <summary>The HTTP server's URL.</summary>
        public string Url { get; set; }
        /// <summary>Extra HTTP headers.</summary>
        public Dictionary<string, string> Headers { get; set; }
        /// <summary>An Authorization bearer token.</summary>
        public string Bearer { get; set; }
        /// <summary>Only these tools (MCP names).</summary>
        public IReadOnlyList<string> AllowTools { get; set; }
        /// <summary>Hides these tools.</summary>
        public IReadOnlyList<string> DenyTools { get; set; }
        /// <summary>Tool ids become <c>prefix_name</c>.</summary>
        public string ToolPrefix { get; set; }
        /// <summary><c>true</c>, <c>false</c> or <c>"destructive"</c> (calls of tools that are
        /// not read-only need approval).</summary>
        public object RequireApproval { get; set; }
        /// <summary>Decides approval per call (wins over RequireApproval).</summary>
        public Func<object, RuntimeContext, Task<bool>> Approval { get; set; }
        /// <summary>Limits each call.</summary>
        public TimeSpan? Timeout { get; set; }
        /// <summary>Per-tool limits (MCP names).</summary>
        public Dictionary<string, TimeSpan> ToolTimeouts { get; set; }
        /// <summary><c>"fail-run"</c> or <c>"return-to-model"</c>.</summary>
        public string OnError { get; set; }
        /// <summary>Keeps a listing this long.</summary>
        public TimeSpan? CacheTtl { get; set; }
        /// <summary>Run without the server when it cannot be listed.</summary>
        public bool Optional { get; set; }
        /// <summary>Defers all the server's tools: none is offered until the built-in
        /// <c>tool_search</c> finds it (docs/behaviour.md §17), like
        /// <see cref="Tool.DeferLoading"/>.</summary>
        public bool DeferLoading { get; set; }
        /// <summary>Decides, at listing, whether each tool is offered (after AllowTools and
        /// DenyTools); a throw fails the listing with <c>mcp_failed</c>.</summary>
        public Func<McpToolInfo, bool> Filter { get; set; }
        /// <summary>Answers the server's elicitation requests (input asked of the user while
        /// a tool runs); without it they are declined. The token is cancelled when the core
        /// stops waiting.</summary>
        public Func<ElicitationRequest, CancellationToken, Task<ElicitationResult>> OnElicitation { get; set; }

        /// <summary>A stdio server.</summary>
        public static McpServer Stdio(string name, string command, params string[] args) =>
            new McpServer { Name = name, Command = command, Args = args };

        /// <summary>A Streamable HTTP server.</summary>
        public static McpServer Http(string name, string url) => new McpServer { Name = name, Url = url };

        /// <summary>Starts an MCP server exposing <c>options.Tools</c>, or
        /// <c>options.Agent</c> as one tool (docs/behaviour.md §19). Calls run through the
        /// core's tool path: validation, approval (asked of the client through elicitation),
        /// timeouts, retries, budgets, progress and cancellation. Invalid options throw an
        /// <see cref="AgentException"/> with code <c>definition_invalid</c>.</summary>
        public static McpToolServer Serve(ServeMcpOptions options)
        {
            if (options == null) throw new ArgumentNullException(nameof(options));
            var cbs = new HostObject();
            string text;
            try { text = Json.Write(options.ToJson(cbs)); }
            catch (ArgumentException e) { throw new AgentException(ErrorCodes.DefinitionInvalid, "Invalid MCP server options: " + e.Message); }
            var client = options.Client == null ? null : ClientHandle.For(options.Client);
            try
            {
                var host = cbs.ToNative(false, false);
                // The core takes the host: its release frees the handle, also on failure.
                Native.Check(Native.phaseo_serve_mcp(Native.Utf8(text), client?.Ptr ?? IntPtr.Zero, host, out var server, out var err), err);
                return new McpToolServer(server);
            }
            finally
            {
                client?.Release();
                GC.KeepAlive(options.Client);
            }
        }

        /// <summary><see cref="Serve"/> that also closes the server when
        /// <paramref name="cancellationToken"/> is cancelled.</summary>
        public static Task<McpToolServer> ServeMcpAsync(ServeMcpOptions options, CancellationToken cancellationToken = default(CancellationToken))
        {
            var server = Serve(options);
            if (cancellationToken.CanBeCanceled) cancellationToken.Register(server.Close);
            return Task.FromResult(server);
        }

        internal Dictionary<string, object> ToJson(HostObject cbs)
        {
            var m = new Dictionary<string, object> { { "name", Name } };
            if (Command != null) m["command"] = Command;
            if (Args != null) m["args"] = Args;
            if (Env != null) m["env"] = Env;
            if (Cwd != null) m["cwd"] = Cwd;
            if (Url != null) m["url"] = Url;
            if (Headers != null) m["headers"] = Headers;
            if (Bearer != null) m["bearer"] = Bearer;
            if (AllowTools != null) m["allowTools"] = AllowTools;
            if (DenyTools != null) m["denyTools"] = DenyTools;
            if (ToolPrefix != null) m["toolPrefix"] = ToolPrefix;
            var approval = Approval;
            if (approval != null) m["requireApproval"] = cbs.Add(c => c.WithRuntime(1, rt => approval(c.Arg(0), rt)));
            else if (RequireApproval != null) m["requireApproval"] = RequireApproval;
            if (Timeout != null) m["timeoutMs"] = (long)Timeout.Value.TotalMilliseconds;
            if (ToolTimeouts != null)
            {
                var t = new Dictionary<string, object>();
                foreach (var kv in ToolTimeouts) t[kv.Key] = (long)kv.Value.TotalMilliseconds;
                m["toolTimeoutsMs"] = t;
            }
            if (OnError != null) m["onError"] = OnError;
            if (CacheTtl != null) m["cacheTtlMs"] = (long)CacheTtl.Value.TotalMilliseconds;
            if (Optional) m["optional"] = true;
            if (DeferLoading) m["deferLoading"] = true;
            var filter = Filter;
            if (filter != null)
                m["filter"] = cbs.Add(c => c.FinishSync(() => (object)filter(new McpToolInfo(V.Obj(c.Arg(0))))));
            var elicit = OnElicitation;
            if (elicit != null)
                m["onElicitation"] = cbs.Add(c =>
                {
                    var req = new ElicitationRequest(V.Obj(c.Arg(0)), V.Str(V.Obj(c.Arg(1)), "server"));
                    var cts = new CancellationTokenSource();
                    c.WithRuntimeless(cts, () => elicit(req, cts.Token), r => r == null ? throw new InvalidOperationException("OnElicitation returned no result") : r.ToJson());
                });
            return m;
        }
    }

    /// <summary>A tool an MCP server lists, as <see cref="McpServer.Filter"/> sees it.</summary>
    public sealed class McpToolInfo
    {
        /// <summary>The tool's name on the server.</summary>
        public string Name { get; }
        /// <summary>Its description (may be null).</summary>
        public string Description { get; }
        /// <summary>Its annotations (readOnlyHint, destructiveHint, …; may be null).</summary>
        public Dictionary<string, object> Annotations { get; }
        internal McpToolInfo(Dictionary<string, object> m)
        {
            Name = V.Str(m, "name"); Description = V.Str(m, "description"); Annotations = V.Obj(V.Get(m, "annotations"));
        }
    }

    /// <summary>An MCP server's request for input from the user.</summary>
    public sealed class ElicitationRequest
    {
        /// <summary>The name of the <see cref="McpServer"/> that asks.</summary>
        public string Server { get; }
        /// <summary>What the server asks for.</summary>
        public string Message { get; }
        /// <summary>The JSON Schema of the content the server wants.</summary>
        public Dictionary<string, object> RequestedSchema { get; }
        /// <summary>The request's MCP params as sent.</summary>
        public Dictionary<string, object> Params { get; }
        internal ElicitationRequest(Dictionary<string, object> p, string server)
        {
            Params = p ?? new Dictionary<string, object>();
            Server = server; Message = V.Str(Params, "message"); RequestedSchema = V.Obj(V.Get(Params, "requestedSchema"));
        }
    }

    /// <summary>The answer to an elicitation: <see cref="Action"/> is <c>accept</c> (with
    /// Content matching the requested schema), <c>decline</c> or <c>cancel</c>.</summary>
    public sealed class ElicitationResult
    {
        /// <summary>accept, decline or cancel.</summary>
        public string Action { get; }
        /// <summary>The user's answer (for accept).</summary>
        public IDictionary<string, object> Content { get; }
        /// <summary>An answer.</summary>
        public ElicitationResult(string Action, IDictionary<string, object> Content = null) { this.Action = Action; this.Content = Content; }
        internal Dictionary<string, object> ToJson()
        {
            var m = new Dictionary<string, object> { { "action", Action } };
            if (Content != null) m["content"] = Content;
            return m;
        }
    }
}
