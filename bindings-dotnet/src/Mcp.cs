using System;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>An MCP server whose tools the agent offers (SPEC §11): stdio
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

        /// <summary>A stdio server.</summary>
        public static McpServer Stdio(string name, string command, params string[] args) =>
            new McpServer { Name = name, Command = command, Args = args };

        /// <summary>A Streamable HTTP server.</summary>
        public static McpServer Http(string name, string url) => new McpServer { Name = name, Url = url };

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
            return m;
        }
    }
}
