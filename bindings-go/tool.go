package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"runtime"
	"time"
)

// Validator checks a value and returns it, possibly transformed, or an error saying what
// is wrong. Tools use validators for their input, output and progress values
// (InputSchema, OutputSchema, EventSchema); JSONSchemaValidator builds one from a JSON
// Schema compiled by the core.
type Validator func(value any) (any, error)

// ApprovalPredicate decides per call whether a tool call needs a person's approval.
type ApprovalPredicate func(input any, runtime RuntimeContext) (bool, error)

// RuntimeContext is what an executor (and every tool-side hook) sees of its call.
type RuntimeContext struct {
	// RunID is the run's id.
	RunID string
	// AgentID is the agent's id.
	AgentID string
	// StepIndex is the step that requested the call (0-based).
	StepIndex int
	// Context is the application context as it was when the tool phase began.
	Context any
	// ToolCall is the call: its ID is unique in the run.
	ToolCall ToolCall
	// Attempt is the number of this attempt at the call, from 1 (more than 1 only for a
	// tool with Retry; docs/behaviour.md §15).
	Attempt int
	// IdempotencyKey is "<runId>:<toolCallId>": the same for every attempt, for a call
	// approved on continue in another process or language, and for a call run again by
	// Recover. Hand it to a side-effecting service so the effect happens at most once.
	IdempotencyKey string
	// EmitProgress publishes a preliminary result (checked by EventSchema, emitted as a
	// tool.preliminary_result event). Only an executor has progress.
	EmitProgress func(value any) error
	// SetContext replaces the application context for later turns (applied after the tool
	// phase, in call order). Only an executor can set it.
	SetContext func(value any) error
	// Ctx derives from the ctx given to Run, Continue, Recover, Stream or ContinueStream:
	// its values and deadline are that ctx's. It is cancelled when the SDK stops waiting
	// for the call: its timeout elapsed, the run was cancelled (that ctx done — then Err
	// and context.Cause are the ctx's —, StreamResult.Cancel), or a sibling call failed
	// the run. A tool that honours it stops early; one that ignores it keeps its
	// goroutine, but its late result is discarded and the run does not wait for it.
	Ctx context.Context
}

// NextTurnParams overrides fields of the next model request only (docs/behaviour.md §2.6).
type NextTurnParams struct {
	Model           string   // the model
	Instructions    string   // the instructions
	Temperature     *float64 // sampling temperature
	TopP            *float64 // nucleus sampling
	MaxOutputTokens *int     // output limit
	// Tools restricts the tools offered (by ID; only the IDs of these Tools are used).
	Tools []Tool
	// ToolChoice is "auto", "required", "none" or {"toolId": id}.
	ToolChoice any
}

func (p *NextTurnParams) toJSON() map[string]any {
	m := map[string]any{}
	if p.Model != "" {
		m["model"] = p.Model
	}
	if p.Instructions != "" {
		m["instructions"] = p.Instructions
	}
	if p.Temperature != nil {
		m["temperature"] = *p.Temperature
	}
	if p.TopP != nil {
		m["topP"] = *p.TopP
	}
	if p.MaxOutputTokens != nil {
		m["maxOutputTokens"] = *p.MaxOutputTokens
	}
	if p.Tools != nil {
		ids := make([]string, 0, len(p.Tools))
		for _, t := range p.Tools {
			ids = append(ids, t.ID)
		}
		m["tools"] = ids
	}
	if p.ToolChoice != nil {
		m["toolChoice"] = p.ToolChoice
	}
	return m
}

// Tool is a tool the model can call (docs/behaviour.md §2). Only ID is required; a tool without
// Execute is a manual tool (the run pauses until the application supplies its output).
type Tool struct {
	// ID is the name the model calls the tool by.
	ID string
	// Description is sent to the model.
	Description string
	// Parameters is the JSON Schema of the arguments, sent to the model and checked by
	// the core on every call (default: any object).
	Parameters map[string]any
	// Execute runs the call, on its own goroutine; any number run at once up to the
	// concurrency limit, and blocking is fine. A returned error (or a panic) is the call's
	// error, handled by OnError.
	Execute func(input any, runtime RuntimeContext) (any, error)
	// Timeout limits each call, each attempt of a retried one (0 = none): the call fails
	// with tool_timeout and runtime.Ctx is cancelled.
	Timeout time.Duration
	// InputSchema validates (and may transform) the arguments, after Parameters.
	InputSchema Validator
	// OutputSchema validates results (and outputs supplied on continue).
	OutputSchema Validator
	// EventSchema validates progress values.
	EventSchema Validator
	// RequireApproval makes every call wait for approval.
	RequireApproval bool
	// Approval decides approval per call (wins over RequireApproval).
	Approval ApprovalPredicate
	// OnToolCalled makes the tool interactive: it runs first; completed false pauses the
	// call for human input (pending kind "hitl"), otherwise value is the call's result (nil
	// included: a null result).
	OnToolCalled func(input any, runtime RuntimeContext) (value any, completed bool, err error)
	// OnResponseReceived validates or transforms an output supplied on continue.
	OnResponseReceived func(output any, runtime RuntimeContext) (any, error)
	// NextTurn overrides the next model request after a call that produced a result.
	NextTurn *NextTurnParams
	// NextTurnFunc computes those overrides per call (wins over NextTurn).
	NextTurnFunc func(input any, runtime RuntimeContext) (*NextTurnParams, error)
	// OnError is "fail-run" (default) or "return-to-model".
	OnError string
	// Strict asks the model for schema-exact arguments (docs/behaviour.md §12).
	Strict bool
	// InputExamples are example argument objects sent with the tool.
	InputExamples []any
	// MaxCalls bounds how many calls of this tool a run admits (nil = no limit; the core
	// refuses a value below 1 with definition_invalid). A call beyond it is not run: its
	// tool message is an error and the model goes on without it (docs/behaviour.md §15).
	MaxCalls *int
	// Retry runs a call again when an attempt fails or times out (nil = one attempt).
	Retry *ToolRetry
	// DeferLoading keeps the tool out of the offer until the built-in tool_search finds
	// it; from the next model request on it is offered to the end of the run, and the
	// state keeps it loaded across a pause (docs/behaviour.md §17). A large tool set stays
	// out of the prompt until the model asks for it.
	DeferLoading bool
	// Annotations are the MCP hints of a tool served with ServeMCP: "readOnlyHint",
	// "destructiveHint", "idempotentHint", "openWorldHint", "title" (docs/behaviour.md §19).
	Annotations map[string]any
	// agent is the definition an agent tool runs (Agent.AsTool).
	agent *AgentDefinition

	// inputJSONSchema is InputSchema's description when NewTool generated it from a type:
	// sent as the tool's parameters when Parameters is nil (the strict form with Strict).
	inputJSONSchema map[string]any
	// outputJSONSchema is OutputSchema's description when NewTool generated it from the
	// result type: a served tool lists it as its outputSchema (docs/behaviour.md §19).
	outputJSONSchema map[string]any
}

// AsToolOptions are the options of Agent.AsTool; every field is optional.
type AsToolOptions struct {
	// ID is the tool id (default: the agent's id).
	ID string
	// Description is what the model is told the tool does.
	Description string
	// Parameters is the tool's JSON Schema (default: one string "input").
	Parameters map[string]any
}

// AsTool returns a tool that runs this agent (docs/behaviour.md §18): the call's "input"
// is the nested run's input and the nested run's output is the tool's output. When the
// nested run pauses, the outer run pauses too and lists its calls with ids
// "<outerCallId>/<nestedCallId>"; decisions for those ids on the outer Continue go to the
// nested run. The tool may be given further options (Timeout, RequireApproval, OnError…)
// like any tool; it is checked when the outer agent is created (nesting deeper than 8 is
// definition_invalid).
func (a *Agent) AsTool(opts AsToolOptions) Tool {
	def := a.def
	id := opts.ID
	if id == "" {
		id = a.id
	}
	return Tool{ID: id, Description: opts.Description, Parameters: opts.Parameters, agent: &def}
}

// ToolRetry retries a tool's failed attempts (docs/behaviour.md §15): MaxAttempts counts
// every attempt (at least 1, checked by the core); the wait before the n-th retry is
// Backoff × n. Input validation, approval and an output that fails OutputSchema are never
// retried; Timeout applies to each attempt; the last error follows OnError.
type ToolRetry struct {
	MaxAttempts int           // attempts in all, the first included
	Backoff     time.Duration // wait unit between attempts (0 = none)
}

func (r *ToolRetry) toJSON() map[string]any {
	return map[string]any{"maxAttempts": r.MaxAttempts, "backoffMs": durationMs(r.Backoff)}
}

// DefineTool returns the tool (as the product's Go SDK); definitions are checked when the
// agent is created.
func DefineTool(tool Tool) Tool { return tool }

// ToolExecutionConfig sets how tool calls run (docs/behaviour.md §2.7–2.9). Zero fields are unset.
type ToolExecutionConfig struct {
	// Concurrency is how many calls of one model turn run at once (default 1).
	Concurrency int
	// OnError is the default error policy: "fail-run" or "return-to-model".
	OnError string
	// MaxOutputChars truncates longer tool messages (0 = no limit; a negative number is
	// refused with CodeDefinitionInvalid).
	MaxOutputChars int
	// MaxToolCalls bounds all the tool calls of a run (nil = no limit; the core refuses a
	// value below 1). Calls beyond it are not run (docs/behaviour.md §15).
	MaxToolCalls *int
}

func (c *ToolExecutionConfig) toJSON() map[string]any {
	m := map[string]any{}
	if c.Concurrency > 0 {
		m["toolConcurrency"] = c.Concurrency
	}
	if c.OnError != "" {
		m["onError"] = c.OnError
	}
	if c.MaxOutputChars != 0 {
		m["maxOutputChars"] = c.MaxOutputChars
	}
	if c.MaxToolCalls != nil {
		m["maxToolCalls"] = *c.MaxToolCalls
	}
	return m
}

// ModelRetryConfig retries failed model requests: MaxRetries extra attempts, sleeping
// Backoff × attempt between them (default 250ms when zero).
type ModelRetryConfig struct {
	MaxRetries int           // extra attempts
	Backoff    time.Duration // sleep unit between attempts
}

func (c *ModelRetryConfig) toJSON() map[string]any {
	m := map[string]any{"maxRetries": c.MaxRetries}
	if c.Backoff > 0 {
		m["backoffMs"] = durationMs(c.Backoff)
	}
	return m
}

func durationMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// schemaHandle owns a compiled JSON Schema of the core.
type schemaHandle struct{ ptr *C.PhaseoSchema }

// JSONSchemaValidator compiles a JSON Schema (draft 2020-12) in the core and returns a
// Validator backed by it; its messages are the core's (`<instance path>: <reason>`), the
// same in every language. An invalid schema is a definition_invalid error.
func JSONSchemaValidator(schema any) (Validator, error) {
	text, err := encodeValue(schema)
	if err != nil {
		return nil, definitionError("Invalid JSON Schema: %v", err)
	}
	cs := cString(text)
	defer freeC(cs)
	h := &schemaHandle{}
	if _, err := status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_schema_new(cs, &h.ptr, e) }); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(h, func(h *schemaHandle) { C.phaseo_schema_free(h.ptr) })
	return func(value any) (any, error) {
		text, err := encodeValue(value)
		if err != nil {
			return nil, err
		}
		cv := cString(text)
		defer freeC(cv)
		_, err = status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_schema_validate(h.ptr, cv, nil, e) })
		runtime.KeepAlive(h)
		if err != nil {
			if perr, ok := err.(*Error); ok {
				return nil, errorString(perr.Message)
			}
			return nil, err
		}
		return value, nil
	}, nil
}

// errorString is an error whose text is exactly the core's message.
type errorString string

// Error returns the message.
func (e errorString) Error() string { return string(e) }
