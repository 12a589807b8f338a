package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"errors"
	"runtime"
	"runtime/cgo"
	"sync"
)

// ModelClient is a model: any type with Generate can drive runs. The SDK's own clients
// (NewScriptedClient, NewTestClient, NewGatewayClient, NewOpenAICompatibleClient) run in
// the core; any other implementation is called on a goroutine for each model request,
// with a ctx cancelled when the run stops waiting for it.
type ModelClient interface {
	// Generate answers one model request (an error fails the attempt: model_failed after
	// the retries).
	Generate(ctx context.Context, request ModelRequest) (ModelResponse, error)
}

// ToolSpec is a tool as a model request describes it.
type ToolSpec struct {
	ID            string `json:"id"`                      // the tool id
	Description   string `json:"description"`             // its description
	Parameters    any    `json:"parameters"`              // the JSON Schema of its arguments
	Strict        bool   `json:"strict,omitempty"`        // schema-exact arguments requested
	InputExamples []any  `json:"inputExamples,omitempty"` // example argument objects
}

// ModelRequest is one request to the model.
type ModelRequest struct {
	AgentID           string     `json:"agentId"`           // the agent's id
	Model             *string    `json:"model"`             // the model (nil = the client's default)
	Instructions      *string    `json:"instructions"`      // the instructions (nil = none)
	Messages          []Message  `json:"messages"`          // the conversation
	Tools             []ToolSpec `json:"tools"`             // the tools offered
	Context           any        `json:"context"`           // the application context
	Temperature       *float64   `json:"temperature"`       // sampling temperature (nil = unset)
	MaxOutputTokens   *int       `json:"maxOutputTokens"`   // output limit (nil = unset)
	TopP              *float64   `json:"topP"`              // nucleus sampling (nil = unset)
	Stream            bool       `json:"stream"`            // the run is streamed
	ToolChoice        any        `json:"toolChoice"`        // which tool the model must call (nil = unset)
	ParallelToolCalls *bool      `json:"parallelToolCalls"` // whether several calls per turn are allowed (nil = unset)
}

// ModelToolCall is a call in a model response: Arguments is the raw JSON text the model
// sent (the core parses and validates it).
type ModelToolCall struct {
	ID        string `json:"id"`        // the call id
	Name      string `json:"name"`      // the tool id
	Arguments string `json:"arguments"` // the raw JSON text of the arguments
}

// ModelResponse is a model's answer.
type ModelResponse struct {
	Text         string          `json:"text,omitempty"`         // the assistant text
	ToolCalls    []ModelToolCall `json:"toolCalls,omitempty"`    // the calls requested
	Reasoning    string          `json:"reasoning,omitempty"`    // reasoning text, if any
	Usage        *UsageSummary   `json:"usage,omitempty"`        // token usage (nil = unknown)
	Cost         float64         `json:"cost,omitempty"`         // the response's cost
	FinishReason string          `json:"finishReason,omitempty"` // why the model stopped (default: tool_calls or stop)
	Model        string          `json:"model,omitempty"`        // the model that answered
	RequestID    string          `json:"requestId,omitempty"`    // the endpoint's request id
	Provider     string          `json:"provider,omitempty"`     // the provider that answered
}

// nativeClient is a client living in the core.
type nativeClient struct {
	mu  sync.Mutex
	ptr *C.PhaseoClient
}

func newNativeClient(ptr *C.PhaseoClient) *nativeClient {
	n := &nativeClient{ptr: ptr}
	runtime.SetFinalizer(n, (*nativeClient).close)
	return n
}

func (n *nativeClient) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ptr != nil {
		C.phaseo_client_free(n.ptr)
		n.ptr = nil
	}
}

// errNativeGenerate: the core's clients are driven by runs, not called from Go.
var errNativeGenerate = errors.New("phaseoagent: the SDK's clients are driven by runs (pass them in RunOptions.Client)")

// ScriptedClient answers with scripted responses, in order, across every run and continue
// it serves (tests, demos, conformance).
type ScriptedClient struct{ native *nativeClient }

// NewScriptedClient makes a scripted client; skip is how many entries an earlier process
// already consumed. Each entry is {text?, toolCalls?: [{id, name, arguments}], usage?,
// cost?, finishReason?, fail?}.
func NewScriptedClient(responses []map[string]any, skip int) (*ScriptedClient, error) {
	if responses == nil {
		responses = []map[string]any{}
	}
	text, err := encodeValue(responses)
	if err != nil {
		return nil, definitionError("ScriptedClient: %v", err)
	}
	ct := cString(text)
	defer freeC(ct)
	var ptr *C.PhaseoClient
	if _, err := status(func(e **C.char) C.enum_PhaseoStatus {
		return C.phaseo_client_scripted(ct, C.size_t(skip), &ptr, e)
	}); err != nil {
		return nil, err
	}
	return &ScriptedClient{native: newNativeClient(ptr)}, nil
}

// Cursor is how many entries have been consumed.
func (c *ScriptedClient) Cursor() int {
	c.native.mu.Lock()
	defer c.native.mu.Unlock()
	return int(C.phaseo_client_cursor(c.native.ptr))
}

// Generate is not called directly: the client runs in the core.
func (c *ScriptedClient) Generate(context.Context, ModelRequest) (ModelResponse, error) {
	return ModelResponse{}, errNativeGenerate
}

// TestClient is the offline client: no network, deterministic answers.
type TestClient struct{ native *nativeClient }

// NewTestClient makes the offline test client.
func NewTestClient() *TestClient {
	var ptr *C.PhaseoClient
	C.phaseo_client_test(&ptr, nil)
	return &TestClient{native: newNativeClient(ptr)}
}

// Generate is not called directly: the client runs in the core.
func (c *TestClient) Generate(context.Context, ModelRequest) (ModelResponse, error) {
	return ModelResponse{}, errNativeGenerate
}

// HTTPClientOptions configure the HTTP clients. Empty fields take the environment
// (PHASEO_API_KEY, PHASEO_BASE_URL for the gateway) or the defaults.
type HTTPClientOptions struct {
	APIKey  string // the API key (never written to state, events or errors)
	BaseURL string // the endpoint's base URL
	Model   string // the model used when the agent names none
	// TimeoutMs limits each request (0 = the default).
	TimeoutMs float64
	Headers   map[string]string // extra request headers
	// Preset and BodyDefaults are gateway options.
	Preset       string
	BodyDefaults map[string]any // body fields sent unless the request sets them
}

// HTTPClient is one of the SDK's HTTP model clients (gateway or OpenAI-compatible).
type HTTPClient struct{ native *nativeClient }

// Generate is not called directly: the client runs in the core.
func (c *HTTPClient) Generate(context.Context, ModelRequest) (ModelResponse, error) {
	return ModelResponse{}, errNativeGenerate
}

func newHTTPClient(kind string, o HTTPClientOptions) (*HTTPClient, error) {
	m := map[string]any{}
	if o.APIKey != "" {
		m["apiKey"] = o.APIKey
	}
	if o.BaseURL != "" {
		m["baseUrl"] = o.BaseURL
	}
	if o.Model != "" {
		m["model"] = o.Model
	}
	if o.TimeoutMs > 0 {
		m["timeoutMs"] = o.TimeoutMs
	}
	headers := map[string]string{"X-Phaseo-Client": "phaseo-agent-go"}
	for k, v := range o.Headers {
		headers[k] = v
	}
	m["headers"] = headers
	if o.Preset != "" {
		m["preset"] = o.Preset
	}
	if o.BodyDefaults != nil {
		m["bodyDefaults"] = o.BodyDefaults
	}
	text, err := encodeValue(m)
	if err != nil {
		return nil, definitionError("HTTP client options: %v", err)
	}
	ck, ct := cString(kind), cString(text)
	defer freeC(ck)
	defer freeC(ct)
	var ptr *C.PhaseoClient
	if _, err := status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_client_http(ck, ct, &ptr, e) }); err != nil {
		return nil, err
	}
	return &HTTPClient{native: newNativeClient(ptr)}, nil
}

// NewGatewayClient is the Phaseo gateway client (Responses API).
func NewGatewayClient(o HTTPClientOptions) (*HTTPClient, error) { return newHTTPClient("gateway", o) }

// NewOpenAICompatibleClient is a Chat Completions client for any OpenAI-compatible server.
func NewOpenAICompatibleClient(o HTTPClientOptions) (*HTTPClient, error) {
	return newHTTPClient("openai-compatible", o)
}

// clientHost serves a Go ModelClient's Generate calls.
type clientHost struct {
	callbacks
}

// clientFor returns the native client of c, or a host client wrapping it; release frees
// what clientFor made.
func clientFor(c ModelClient) (ptr *C.PhaseoClient, keep any, release func(), err error) {
	switch n := c.(type) {
	case nil:
		return nil, nil, nil, &Error{Code: CodeDefinitionInvalid, Message: "RunOptions.Client is required"}
	case *ScriptedClient:
		return n.native.ptr, n, func() {}, nil
	case *TestClient:
		return n.native.ptr, n, func() {}, nil
	case *HTTPClient:
		return n.native.ptr, n, func() {}, nil
	}
	h := &clientHost{}
	h.add(func(call *hostCall) {
		req, err := readRequest(call)
		if err != nil {
			call.fail(err)
			return
		}
		ctx, release := call.cancelContext()
		defer release()
		call.finish(protect(func() (any, error) {
			resp, err := c.Generate(ctx, req)
			if err != nil {
				return nil, err
			}
			return resp, nil
		}))
	})
	var streamID C.uint64_t
	if sc, ok := c.(StreamingModelClient); ok {
		h.add(func(call *hostCall) { serveStream(call, sc) })
		streamID = 2
	}
	handle := cgo.NewHandle(h)
	if _, err := status(func(e **C.char) C.enum_PhaseoStatus {
		return C.phaseo_go_client_host_stream(C.uintptr_t(handle), 1, streamID, &ptr, e)
	}); err != nil {
		return nil, nil, nil, err
	}
	return ptr, nil, func() { C.phaseo_client_free(ptr) }, nil
}

// readRequest reads a Generate or Stream call's request.
func readRequest(call *hostCall) (ModelRequest, error) {
	var req ModelRequest
	if err := Decode(call.arg(0), &req); err != nil {
		return req, err
	}
	if m, ok := call.arg(0).(map[string]any); ok {
		req.Context = m["context"]
	}
	return req, nil
}
