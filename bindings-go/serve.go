package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"runtime"
	"runtime/cgo"
	"sync"
)

// MCPHTTPOptions is the Streamable HTTP listener of a served MCP server.
type MCPHTTPOptions struct {
	// Host is the interface to bind ("" = 127.0.0.1).
	Host string
	// Port to bind (0 = a free one; read it back from URL).
	Port int
	// Path of the MCP endpoint ("" = "/mcp").
	Path string
	// AuthToken, when set, makes every request carry "Authorization: Bearer <token>"
	// (else 401).
	AuthToken string
	// AllowedOrigins are the browser origins allowed to call (empty: loopback only).
	AllowedOrigins []string
	// AllowedHosts are the names the Host header may carry (empty: loopback and Host).
	AllowedHosts []string
}

// MCPServeOptions are the options of ServeMCP (docs/behaviour.md §19). Give Tools, or
// Agent to serve one agent as a single tool.
type MCPServeOptions struct {
	// Name is the server's name, as clients show it (required).
	Name string
	// Version is the server's version ("" = "0.0.0").
	Version string
	// Tools are the tools served (each needs Execute).
	Tools []Tool
	// Agent is served as one tool (docs/behaviour.md §18's defaults: the agent's id, one
	// string "input"); its runs use Client.
	Agent *Agent
	// Description is what clients are told the served Agent does.
	Description string
	// Client is the model a served Agent runs on.
	Client ModelClient
	// HTTP serves over Streamable HTTP; nil serves over the process's stdin and stdout.
	HTTP *MCPHTTPOptions
	// ToolExecution sets the calls served at once (Concurrency) and the budgets
	// (MaxToolCalls, counted over the server's lifetime).
	ToolExecution ToolExecutionConfig
	// OnEvent receives the tool.* events of every served call.
	OnEvent EventHandler
}

// MCPToolServer is a running MCP server. It stops on Close, when the ctx given to ServeMCP
// is done, at the end of standard input (stdio) and with the process.
type MCPToolServer struct {
	mu   sync.Mutex
	ptr  *C.PhaseoMcpServer
	url  string
	done chan struct{}
	keep []any
}

// ServeMCP starts an MCP server exposing opts.Tools, or opts.Agent as one tool
// (docs/behaviour.md §19). Calls run through the core's tool path: validation, approval
// (asked of the client through elicitation), timeouts, retries, budgets, progress and
// cancellation. Invalid options (no tools, a tool without Execute, an agent without a
// client) are an *Error with code definition_invalid. Cancelling ctx closes the server.
//
//	srv, err := phaseoagent.ServeMCP(ctx, phaseoagent.MCPServeOptions{Name: "notes", Tools: tools})
//	if err != nil { ... }
//	defer srv.Close()
//	srv.Wait(ctx)
func ServeMCP(ctx context.Context, opts MCPServeOptions) (*MCPToolServer, error) {
	h := newRunHost(nil, opts.OnEvent) // served calls belong to no caller's run: no parent ctx
	text, err := encodeValue(serveJSON(&opts, &h.callbacks))
	if err != nil {
		return nil, definitionError("Invalid MCP server options: %v", err)
	}
	srv := &MCPToolServer{done: make(chan struct{})}
	var client *C.PhaseoClient
	if opts.Client != nil {
		ptr, keep, release, err := clientFor(opts.Client)
		if err != nil {
			return nil, err
		}
		client = ptr
		srv.keep = append(srv.keep, keep)
		defer release()
	}
	handle := cgo.NewHandle(h)
	events := C.bool(h.events != nil)
	ct := cString(text)
	defer freeC(ct)
	// The core takes the host: its release deletes the handle, also on failure.
	var ptr *C.PhaseoMcpServer
	if _, err := status(func(e **C.char) C.enum_PhaseoStatus {
		return C.phaseo_go_serve_mcp(ct, client, C.uintptr_t(handle), events, &ptr, e)
	}); err != nil {
		return nil, err
	}
	runtime.KeepAlive(opts.Client)
	srv.ptr = ptr
	srv.url = takeString(C.phaseo_mcp_server_url(ptr))
	go srv.watch()
	go func() {
		select {
		case <-ctx.Done():
			srv.stop()
		case <-srv.done:
		}
	}()
	return srv, nil
}

// watch waits for the server to stop, then frees it.
func (s *MCPToolServer) watch() {
	var cerr *C.char
	C.phaseo_mcp_server_wait(s.ptr, &cerr)
	if cerr != nil {
		C.phaseo_string_free(cerr)
	}
	s.mu.Lock()
	C.phaseo_mcp_server_free(s.ptr)
	s.ptr = nil
	s.keep = nil
	s.mu.Unlock()
	close(s.done)
}

func (s *MCPToolServer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr != nil {
		C.phaseo_mcp_server_close(s.ptr)
	}
}

// URL is "http://host:port/path" of a Streamable HTTP server; "" on stdio.
func (s *MCPToolServer) URL() string { return s.url }

// Wait returns when the server stops (nil), or when ctx is done (ctx's error; the server
// keeps running).
func (s *MCPToolServer) Wait(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the server (calls in flight are cancelled) and returns once it has
// stopped. Calling it again does nothing.
func (s *MCPToolServer) Close() error {
	s.stop()
	<-s.done
	return nil
}

func serveJSON(o *MCPServeOptions, cbs *callbacks) map[string]any {
	m := map[string]any{"name": o.Name}
	if o.Version != "" {
		m["version"] = o.Version
	}
	if o.Agent != nil {
		m["agent"] = agentJSON(&o.Agent.def, cbs)
	}
	if o.Tools != nil || o.Agent == nil {
		tools := make([]any, 0, len(o.Tools))
		for i := range o.Tools {
			tools = append(tools, toolJSON(&o.Tools[i], cbs))
		}
		m["tools"] = tools
	}
	if o.Description != "" {
		m["description"] = o.Description
	}
	if o.ToolExecution != (ToolExecutionConfig{}) {
		m["toolExecution"] = o.ToolExecution.toJSON()
	}
	if h := o.HTTP; h != nil {
		t := map[string]any{"type": "http", "port": h.Port}
		if h.Host != "" {
			t["host"] = h.Host
		}
		if h.Path != "" {
			t["path"] = h.Path
		}
		if h.AuthToken != "" {
			t["authToken"] = h.AuthToken
		}
		if h.AllowedOrigins != nil {
			t["allowedOrigins"] = h.AllowedOrigins
		}
		if h.AllowedHosts != nil {
			t["allowedHosts"] = h.AllowedHosts
		}
		m["transport"] = t
	}
	return m
}
