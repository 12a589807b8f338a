package phaseoagent

import "context"

// MCPServer declares an MCP server whose tools the agent offers (docs/behaviour.md §11): a stdio server
// (Command, Args, Env, Cwd) or a streamable-HTTP server (URL, Headers, Bearer). The core
// starts it on first use and lists its tools; calls go through the same validation,
// approval, timeouts, concurrency and events as any tool.
type MCPServer struct {
	// Name identifies the server in errors (mcp_failed messages).
	Name string
	// Command, Args, Env and Cwd start a stdio server.
	Command string
	Args    []string          // its arguments
	Env     map[string]string // extra environment variables
	Cwd     string            // its working directory
	// URL, Headers and Bearer reach an HTTP server.
	URL     string
	Headers map[string]string // extra HTTP headers
	Bearer  string            // an Authorization bearer token
	// AllowTools and DenyTools filter the server's tools by name.
	AllowTools []string
	DenyTools  []string // tool names to hide
	// ToolPrefix is prepended to the tool ids ("<prefix>_<name>").
	ToolPrefix string
	// RequireApproval: every call needs approval.
	RequireApproval bool
	// ApprovalDestructive: calls of tools that are not read-only need approval.
	ApprovalDestructive bool
	// Approval decides per call (wins over the two above).
	Approval ApprovalPredicate
	// TimeoutMs limits each call (0 = the default); ToolTimeoutsMs per tool name.
	TimeoutMs      int64
	ToolTimeoutsMs map[string]int64 // per-tool time limits
	// OnError is "fail-run" (default) or "return-to-model".
	OnError string
	// CacheTTLMs keeps a listing this long (0 = the default).
	CacheTTLMs int64
	// Optional servers that fail to start are skipped instead of failing the run.
	Optional bool
	// DeferLoading defers all the server's tools: none is offered until the built-in
	// tool_search finds it (docs/behaviour.md §17), like Tool.DeferLoading.
	DeferLoading bool
	// Filter keeps (true) or drops a listed tool, after AllowTools/DenyTools; it runs on
	// a goroutine when the server's tools are listed. An error (or a panic) fails the
	// listing with mcp_failed, also for an Optional server.
	Filter func(tool MCPToolInfo) (bool, error)
	// OnElicitation answers the server's elicitation requests (elicitation/create), on a
	// goroutine; ctx is cancelled when the request is abandoned. Without it, requests are
	// declined; an error declines the request.
	OnElicitation func(ctx context.Context, request ElicitationRequest) (ElicitationResult, error)
}

// MCPToolInfo is what a Filter sees of a listed tool: its MCP name (before any prefix),
// description and annotations (readOnlyHint, destructiveHint, …; empty when none).
type MCPToolInfo struct {
	Name        string         `json:"name"`        // the tool's name on the server
	Description string         `json:"description"` // its description
	Annotations map[string]any `json:"annotations"` // its annotations
}

// ElicitationRequest is an MCP server's request for input from the user.
type ElicitationRequest struct {
	// Server is the name of the MCPServer that asks.
	Server string
	// Message is what the server asks for.
	Message string
	// RequestedSchema is the JSON Schema of the content the server wants.
	RequestedSchema map[string]any
	// Params are the request's MCP params as sent (message, requestedSchema, …).
	Params map[string]any
}

// ElicitationResult answers an elicitation: Action is "accept" (with Content, matching
// the requested schema), "decline" or "cancel".
type ElicitationResult struct {
	Action  string         // "accept", "decline" or "cancel"
	Content map[string]any // the user's answer (for "accept")
}

func (s *MCPServer) toJSON(cbs *callbacks) map[string]any {
	m := map[string]any{"name": s.Name}
	put := func(k string, v any, present bool) {
		if present {
			m[k] = v
		}
	}
	put("command", s.Command, s.Command != "")
	put("args", s.Args, s.Args != nil)
	put("env", s.Env, s.Env != nil)
	put("cwd", s.Cwd, s.Cwd != "")
	put("url", s.URL, s.URL != "")
	put("headers", s.Headers, s.Headers != nil)
	put("bearer", s.Bearer, s.Bearer != "")
	put("allowTools", s.AllowTools, s.AllowTools != nil)
	put("denyTools", s.DenyTools, s.DenyTools != nil)
	put("toolPrefix", s.ToolPrefix, s.ToolPrefix != "")
	switch {
	case s.Approval != nil:
		f := s.Approval
		m["requireApproval"] = cbs.add(func(c *hostCall) {
			_, _ = c.withRuntime(func(rt RuntimeContext) (any, error) { return f(c.arg(0), rt) })
		})
	case s.ApprovalDestructive:
		m["requireApproval"] = "destructive"
	case s.RequireApproval:
		m["requireApproval"] = true
	}
	put("timeoutMs", s.TimeoutMs, s.TimeoutMs > 0)
	put("toolTimeoutsMs", s.ToolTimeoutsMs, s.ToolTimeoutsMs != nil)
	put("onError", s.OnError, s.OnError != "")
	put("cacheTtlMs", s.CacheTTLMs, s.CacheTTLMs > 0)
	put("optional", s.Optional, s.Optional)
	put("deferLoading", s.DeferLoading, s.DeferLoading)
	if f := s.Filter; f != nil {
		m["filter"] = cbs.add(func(c *hostCall) {
			var info MCPToolInfo
			if err := Decode(c.arg(0), &info); err != nil {
				c.fail(err)
				return
			}
			c.finish(protect(func() (any, error) { return f(info) }))
		})
	}
	if f := s.OnElicitation; f != nil {
		m["onElicitation"] = cbs.add(func(c *hostCall) {
			params, _ := c.arg(0).(map[string]any)
			req := ElicitationRequest{Params: params}
			req.Message, _ = params["message"].(string)
			req.RequestedSchema, _ = params["requestedSchema"].(map[string]any)
			if about, ok := c.arg(1).(map[string]any); ok {
				req.Server, _ = about["server"].(string)
			}
			ctx, release := c.cancelContext()
			defer release()
			c.finish(protect(func() (any, error) {
				res, err := f(ctx, req)
				if err != nil {
					return nil, err
				}
				out := map[string]any{"action": res.Action}
				if res.Content != nil {
					out["content"] = res.Content
				}
				return out, nil
			}))
		})
	}
	return m
}
