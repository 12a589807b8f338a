package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
)

// TurnContext is what per-turn functions (DynamicModel, Temperature, …) see.
type TurnContext struct {
	NumberOfTurns int       `json:"numberOfTurns"` // model requests made so far in the run
	StepIndex     int       `json:"stepIndex"`     // the step about to run
	Messages      []Message `json:"messages"`      // the conversation so far
	Context       any       `json:"context"`       // the application context
}

// HumanReviewContext is what the human-review hook sees after each step that did not
// pause (IsFinal for a final answer).
type HumanReviewContext struct {
	RunID     string         `json:"runId"`     // the run's id
	AgentID   string         `json:"agentId"`   // the agent's id
	StepIndex int            `json:"stepIndex"` // the step just finished
	Input     any            `json:"input"`     // the run's input
	Context   any            `json:"context"`   // the application context
	Messages  []Message      `json:"messages"`  // the conversation, with this step's assistant message
	Response  map[string]any `json:"response"`  // the model response of this step, as JSON
	IsFinal   bool           `json:"isFinal"`   // the step gave the final answer
}

// HumanReviewRequest pauses the run for review (pause kind "human_review").
type HumanReviewRequest struct {
	Reason  string // why the run pauses
	Payload any    // application data for the reviewer
}

// LeaseConfig is how long a worker holds a store-backed run and how often it renews the
// hold (docs/behaviour.md §10).
type LeaseConfig struct {
	Duration   int64 // milliseconds
	RenewEvery int64 // milliseconds
}

// AgentDefinition defines an agent (docs/behaviour.md §3). Only ID is required.
type AgentDefinition struct {
	// ID is the agent's id (stored in every state it produces).
	ID string
	// Model is the model name sent in each request.
	Model string
	// Instructions are sent with each request.
	Instructions string
	// Tools are the tools the model may call.
	Tools []Tool
	// MaxSteps limits the model responses of a run (0: the default, 12; a negative number
	// is refused with CodeDefinitionInvalid).
	MaxSteps int
	// HumanReview may pause the run after any step that did not pause.
	HumanReview func(HumanReviewContext) *HumanReviewRequest
	// ModelRetry retries failed model requests.
	ModelRetry ModelRetryConfig
	// ToolExecution sets concurrency, the error policy and output truncation.
	ToolExecution ToolExecutionConfig
	// StopWhen ends the run early (checked after every step that did not pause).
	StopWhen []StopCondition
	// RequireApproval decides approval for every call of every tool (overrides the
	// tools' own settings).
	RequireApproval func(call ToolCall, runtime RuntimeContext) (bool, error)
	// OutputSchema validates the final output.
	OutputSchema Validator
	// DynamicModel and DynamicInstructions compute Model and Instructions per turn.
	DynamicModel        func(TurnContext) string
	DynamicInstructions func(TurnContext) string // computes Instructions per turn
	// Temperature, TopP and MaxOutputTokens are computed per turn (nil = unset).
	Temperature     func(TurnContext) *float64
	TopP            func(TurnContext) *float64 // nucleus sampling per turn (nil = unset)
	MaxOutputTokens func(TurnContext) *int     // output limit per turn (nil = unset)
	// ToolChoice is "auto", "required", "none" or {"toolId": id} (docs/behaviour.md §12).
	ToolChoice any
	// ParallelToolCalls tells the model whether it may request several calls per turn.
	ParallelToolCalls *bool
	// ActiveTools restricts the tools offered (by id).
	ActiveTools []string
	// StateSecret signs every state the agent produces; StateSecrets adds older secrets
	// still accepted on continue.
	StateSecret  string
	StateSecrets []string // older secrets still accepted on continue
	// Store makes runs durable (docs/behaviour.md §10).
	Store *RunStore
	// Lease configures store-backed runs' worker leases.
	Lease *LeaseConfig
	// MCPServers adds the tools of MCP servers (docs/behaviour.md §11).
	MCPServers []MCPServer
}

// Agent runs an AgentDefinition. It is safe for concurrent use.
type Agent struct {
	mu     sync.RWMutex // held for reading while a run starts, so Close cannot free it then
	ptr    *C.PhaseoAgent
	id     string
	stores []*RunStore
	def    AgentDefinition
}

// ID is the agent's id.
func (a *Agent) ID() string { return a.id }

// CreateAgent checks the definition and builds the agent. An invalid definition (a bad
// schema, a duplicate tool id, a negative timeout…) is an *Error with code
// definition_invalid.
func CreateAgent(def AgentDefinition) (*Agent, error) {
	cbs := &callbacks{}
	text, err := encodeValue(agentJSON(&def, cbs))
	if err != nil {
		return nil, definitionError("Invalid agent definition: %v", err)
	}
	handle := cgo.NewHandle(cbs)
	ct := cString(text)
	defer freeC(ct)
	a := &Agent{id: def.ID, def: def}
	var store *C.PhaseoStore
	if def.Store != nil {
		store = def.Store.ptr
		a.stores = append(a.stores, def.Store)
	}
	// The core takes the host made from the handle: its release deletes the handle, also on
	// failure.
	var ptr *C.PhaseoAgent
	if _, err := status(func(e **C.char) C.enum_PhaseoStatus {
		return C.phaseo_go_agent_new(ct, store, C.uintptr_t(handle), &ptr, e)
	}); err != nil {
		return nil, err
	}
	a.ptr = ptr
	runtime.KeepAlive(def.Store)
	runtime.SetFinalizer(a, (*Agent).Close)
	return a, nil
}

// Close frees the agent's native resources (MCP servers stop once no run uses them).
// Runs in flight finish normally. Calling Close is optional (a finalizer does it).
func (a *Agent) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ptr != nil {
		C.phaseo_agent_free(a.ptr)
		a.ptr = nil
	}
}

func agentJSON(def *AgentDefinition, cbs *callbacks) map[string]any {
	m := map[string]any{"id": def.ID}
	tools := make([]any, 0, len(def.Tools))
	for i := range def.Tools {
		tools = append(tools, toolJSON(&def.Tools[i], cbs))
	}
	m["tools"] = tools
	if def.DynamicModel != nil {
		f := def.DynamicModel
		m["model"] = turnCallback(cbs, func(t TurnContext) any { return nonEmpty(f(t)) })
	} else if def.Model != "" {
		m["model"] = def.Model
	}
	if def.DynamicInstructions != nil {
		f := def.DynamicInstructions
		m["instructions"] = turnCallback(cbs, func(t TurnContext) any { return nonEmpty(f(t)) })
	} else if def.Instructions != "" {
		m["instructions"] = def.Instructions
	}
	if f := def.Temperature; f != nil {
		m["temperature"] = turnCallback(cbs, func(t TurnContext) any { return deref(f(t)) })
	}
	if f := def.TopP; f != nil {
		m["topP"] = turnCallback(cbs, func(t TurnContext) any { return deref(f(t)) })
	}
	if f := def.MaxOutputTokens; f != nil {
		m["maxOutputTokens"] = turnCallback(cbs, func(t TurnContext) any { return deref(f(t)) })
	}
	if def.MaxSteps != 0 {
		m["maxSteps"] = def.MaxSteps
	}
	if def.StopWhen != nil {
		m["stopWhen"] = stopJSON(def.StopWhen, cbs)
	}
	if def.ModelRetry != (ModelRetryConfig{}) {
		m["modelRetry"] = def.ModelRetry.toJSON()
	}
	if def.ToolExecution != (ToolExecutionConfig{}) {
		m["toolExecution"] = def.ToolExecution.toJSON()
	}
	if def.OutputSchema != nil {
		m["outputSchema"] = validatorCallback(cbs, def.OutputSchema)
	}
	if f := def.RequireApproval; f != nil {
		m["requireApproval"] = cbs.add(func(c *hostCall) {
			var call ToolCall
			if err := Decode(c.arg(0), &call); err != nil {
				c.fail(err)
				return
			}
			_, _ = c.withRuntime(func(rt RuntimeContext) (any, error) {
				call.Input = rt.ToolCall.Input
				return f(call, rt)
			})
		})
	}
	if f := def.HumanReview; f != nil {
		m["humanReview"] = cbs.add(func(c *hostCall) {
			var ctx HumanReviewContext
			if err := Decode(c.arg(0), &ctx); err != nil {
				c.fail(err)
				return
			}
			if m, ok := c.arg(0).(map[string]any); ok {
				ctx.Input, ctx.Context = m["input"], m["context"]
			}
			c.finish(protect(func() (any, error) {
				req := f(ctx)
				if req == nil {
					return nil, nil
				}
				return map[string]any{"reason": req.Reason, "payload": req.Payload}, nil
			}))
		})
	}
	if def.ToolChoice != nil {
		m["toolChoice"] = def.ToolChoice
	}
	if def.ParallelToolCalls != nil {
		m["parallelToolCalls"] = *def.ParallelToolCalls
	}
	if def.ActiveTools != nil {
		m["activeTools"] = def.ActiveTools
	}
	var secrets []string
	if def.StateSecret != "" {
		secrets = append(secrets, def.StateSecret)
	}
	secrets = append(secrets, def.StateSecrets...)
	if len(secrets) > 0 {
		m["stateSecrets"] = secrets
	}
	if def.Lease != nil {
		m["lease"] = map[string]any{"durationMs": def.Lease.Duration, "renewEveryMs": def.Lease.RenewEvery}
	}
	if len(def.MCPServers) > 0 {
		servers := make([]any, 0, len(def.MCPServers))
		for i := range def.MCPServers {
			servers = append(servers, def.MCPServers[i].toJSON(cbs))
		}
		m["mcpServers"] = servers
	}
	return m
}

func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func turnCallback(cbs *callbacks, f func(TurnContext) any) map[string]any {
	return cbs.add(func(c *hostCall) {
		var turn TurnContext
		if err := Decode(c.arg(0), &turn); err != nil {
			c.fail(err)
			return
		}
		if m, ok := c.arg(0).(map[string]any); ok {
			turn.Context = m["context"]
		}
		c.finish(protect(func() (any, error) { return f(turn), nil }))
	})
}

func validatorCallback(cbs *callbacks, v Validator) map[string]any {
	return cbs.add(func(c *hostCall) {
		c.finish(protect(func() (any, error) { return v(c.arg(0)) }))
	})
}

func toolJSON(t *Tool, cbs *callbacks) map[string]any {
	m := map[string]any{"id": t.ID}
	if t.Description != "" {
		m["description"] = t.Description
	}
	if t.Parameters != nil {
		m["parameters"] = t.Parameters
	}
	if t.agent != nil {
		m["agent"] = agentJSON(t.agent, cbs)
	}
	if t.Annotations != nil {
		m["annotations"] = t.Annotations
	}
	if f := t.Execute; f != nil {
		m["execute"] = cbs.add(func(c *hostCall) {
			_, _ = c.withRuntime(func(rt RuntimeContext) (any, error) { return f(c.arg(0), rt) })
		})
	}
	if t.Timeout != 0 {
		m["timeoutMs"] = durationMs(t.Timeout)
	}
	if f := t.Approval; f != nil {
		m["requireApproval"] = cbs.add(func(c *hostCall) {
			_, _ = c.withRuntime(func(rt RuntimeContext) (any, error) { return f(c.arg(0), rt) })
		})
	} else if t.RequireApproval {
		m["requireApproval"] = true
	}
	if t.OnError != "" {
		m["onError"] = t.OnError
	}
	if t.InputSchema != nil {
		spec := validatorCallback(cbs, t.InputSchema)
		if t.inputJSONSchema != nil {
			spec["schema"] = t.inputJSONSchema
		}
		m["inputSchema"] = spec
	}
	if t.OutputSchema != nil {
		spec := validatorCallback(cbs, t.OutputSchema)
		if t.outputJSONSchema != nil {
			spec["schema"] = t.outputJSONSchema
		}
		m["outputSchema"] = spec
	}
	if t.EventSchema != nil {
		m["eventSchema"] = validatorCallback(cbs, t.EventSchema)
	}
	if f := t.OnToolCalled; f != nil {
		m["onToolCalled"] = cbs.add(func(c *hostCall) {
			_, _ = c.withRuntime(func(rt RuntimeContext) (any, error) {
				v, completed, err := f(c.arg(0), rt)
				switch {
				case err != nil:
					return nil, err
				case !completed:
					return pauseCall, nil
				}
				// Completed, nil included: a nil result is the call's result (null).
				return v, nil
			})
		})
	}
	if f := t.OnResponseReceived; f != nil {
		m["onResponseReceived"] = cbs.add(func(c *hostCall) {
			_, _ = c.withRuntime(func(rt RuntimeContext) (any, error) { return f(c.arg(0), rt) })
		})
	}
	if f := t.NextTurnFunc; f != nil {
		m["nextTurnParams"] = cbs.add(func(c *hostCall) {
			_, _ = c.withRuntime(func(rt RuntimeContext) (any, error) {
				p, err := f(c.arg(0), rt)
				if err != nil || p == nil {
					return map[string]any{}, err
				}
				return p.toJSON(), nil
			})
		})
	} else if t.NextTurn != nil {
		m["nextTurnParams"] = t.NextTurn.toJSON()
	}
	if t.Strict {
		m["strict"] = true
	}
	if t.InputExamples != nil {
		m["inputExamples"] = t.InputExamples
	}
	if t.MaxCalls != nil {
		m["maxCalls"] = *t.MaxCalls
	}
	if t.Retry != nil {
		m["retry"] = t.Retry.toJSON()
	}
	if t.DeferLoading {
		m["deferLoading"] = true
	}
	return m
}
