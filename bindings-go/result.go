package phaseoagent

import (
	"encoding/json"
	"fmt"
)

// ToolCall is one call requested by the model: ID is unique in the run (use it as an
// idempotency key), Name the tool id, Input the validated arguments.
type ToolCall struct {
	ID    string `json:"id"`    // the call id (unique in the run)
	Name  string `json:"name"`  // the tool id
	Input any    `json:"input"` // the validated arguments
}

// Message is one message of a run's conversation.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string `json:"role"`
	// Content is the text (a tool message holds its result as JSON text).
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message requested.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"toolCallId,omitempty"`
	// Name is the tool a tool message comes from.
	Name string `json:"name,omitempty"`
	// IsError marks a tool message that reports an error.
	IsError bool `json:"isError,omitempty"`
	// Reasoning is the model's reasoning text, when the client reports it.
	Reasoning string `json:"reasoning,omitempty"`
}

// UsageSummary is the token and cost usage of a run (cumulative) or of one response.
type UsageSummary struct {
	InputTokens  int     `json:"inputTokens"`  // input tokens
	OutputTokens int     `json:"outputTokens"` // output tokens
	CachedTokens int     `json:"cachedTokens"` // cached input tokens
	TotalTokens  int     `json:"totalTokens"`  // all tokens
	Cost         float64 `json:"cost"`         // cost
}

// PendingToolCall is a call the run waits for: Kind is "approval", "manual" or "hitl".
type PendingToolCall struct {
	Call   ToolCall `json:"call"`   // the call
	Kind   string   `json:"kind"`   // "approval", "manual" or "hitl"
	Reason string   `json:"reason"` // why it waits
}

// HumanPause describes why a run waits: Kind is "tool_approval", "hitl", "manual_tool" or
// "human_review".
type HumanPause struct {
	ID               string            `json:"id"`               // unique per pause
	Reason           string            `json:"reason"`           // why the run waits
	Payload          any               `json:"payload"`          // application data (review pauses)
	RequestedAt      string            `json:"requestedAt"`      // when the run paused (ISO 8601)
	Kind             string            `json:"kind"`             // the pause kind
	PendingToolCalls []PendingToolCall `json:"pendingToolCalls"` // the calls to decide, in order
}

// RunError is the error recorded in a failed run.
type RunError struct {
	Code    string `json:"code"`    // the docs/behaviour.md §9 code
	Message string `json:"message"` // the message
}

// RunRecord is the run part of a state.
type RunRecord struct {
	ID         string       `json:"id"`         // the run id
	AgentID    string       `json:"agentId"`    // the owning agent
	Status     string       `json:"status"`     // the status (Status* constants)
	Input      any          `json:"input"`      // the run's input
	Context    any          `json:"context"`    // the application context
	Messages   []Message    `json:"messages"`   // the conversation
	Result     any          `json:"result"`     // the final result
	Error      *RunError    `json:"error"`      // the error of a failed run
	Pause      *HumanPause  `json:"pause"`      // the pause of a waiting run
	StopReason string       `json:"stopReason"` // why a stopped run stopped
	Usage      UsageSummary `json:"usage"`      // cumulative usage
	CreatedAt  string       `json:"createdAt"`  // creation time (ISO 8601)
	UpdatedAt  string       `json:"updatedAt"`  // last update (ISO 8601)
	StepCount  int          `json:"stepCount"`  // model responses so far
	// Traceparent is the W3C traceparent of the run span that wrote the state (tracing
	// on): a continue anywhere lands in the same trace.
	Traceparent string `json:"traceparent,omitempty"`
	// LoadedTools are the deferred tools tool_search has loaded, in load order (empty
	// until one is loaded): a continue keeps offering them (docs/behaviour.md §17).
	LoadedTools []string `json:"loadedTools,omitempty"`
}

// The run statuses of docs/behaviour.md §3.4.
const (
	StatusQueued          = "queued"
	StatusRunning         = "running"
	StatusWaitingForHuman = "waiting_for_human"
	StatusCompleted       = "completed"
	StatusStopped         = "stopped"
	StatusFailed          = "failed"
	StatusCancelled       = "cancelled"
)

// RunResult is a run's whole resumable state. Its canonical JSON (version 1, identical in
// every language of the SDK) is what json.Marshal writes and what ParseRunResult reads:
// store it anywhere and continue the run later, from any process or language. The fields
// are a read-only view of that state; changing them does not change the state.
type RunResult struct {
	// Run is the run record (status, pause, context, messages, …).
	Run RunRecord
	// Output is the final output (text, or the structured value the output schema accepted).
	Output any
	// Messages is the conversation (the same as Run.Messages).
	Messages []Message
	// Usage is the cumulative usage.
	Usage UsageSummary
	// Steps is the per-step record, as JSON.
	Steps []json.RawMessage
	// StepResults is the per-step tool results (with preliminary results), as JSON.
	StepResults []json.RawMessage

	state *stateText
}

type stateView struct {
	Run         RunRecord         `json:"run"`
	Output      json.RawMessage   `json:"output"`
	Usage       UsageSummary      `json:"usage"`
	Steps       []json.RawMessage `json:"steps"`
	StepResults []json.RawMessage `json:"stepResults"`
	// outputText is Output as a part of the state's text (decodeState only).
	outputText string
}

// ParseRunResult reads a state's canonical JSON text. Only the shape is read here: the
// core checks the whole state (version, signature, every field) when it is continued.
func ParseRunResult(text string) (RunResult, error) { return parseState(text, false) }

// parseCoreState is ParseRunResult for a state text the core has just written for this
// process (see decodeStateText).
func parseCoreState(text string) (RunResult, error) { return parseState(text, true) }

func parseState(text string, fromCore bool) (RunResult, error) {
	view, err := decodeStateText(text, fromCore)
	if err != nil {
		// Not shaped as a state: encoding/json names what is wrong.
		view = stateView{}
		if err := json.Unmarshal([]byte(text), &view); err != nil {
			return RunResult{}, &Error{Code: CodeStateInvalid, Message: fmt.Sprintf("Invalid state: %v", err)}
		}
		// Values are read with the SDK's number rules (large integers stay exact).
		if v, err := reread(view.Run.Context); err == nil {
			view.Run.Context = v
		}
	}
	r := RunResult{
		Run:         view.Run,
		Messages:    view.Run.Messages,
		Usage:       view.Usage,
		Steps:       view.Steps,
		StepResults: view.StepResults,
		state:       givenStateText(text),
	}
	if len(view.Output) > 0 {
		var out any
		var err error
		if view.outputText != "" {
			out, err = decodeText(view.outputText)
		} else {
			out, err = decodeValue(view.Output)
		}
		if err != nil {
			return RunResult{}, &Error{Code: CodeStateInvalid, Message: fmt.Sprintf("Invalid state: output: %v", err)}
		}
		r.Output = out
	}
	return r, nil
}

func reread(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeValue(data)
}

// JSON is the canonical state text (empty for a zero RunResult). A run's result has the
// state the core still holds, whose text the core writes when it is first asked for (here,
// by json.Marshal or by a continue), once.
func (r RunResult) JSON() string { return r.state.get() }

// MarshalJSON writes the canonical state.
func (r RunResult) MarshalJSON() ([]byte, error) {
	text := r.state.get()
	if text == "" {
		return nil, fmt.Errorf("phaseoagent: this RunResult holds no state (it was not produced by a run)")
	}
	return []byte(text), nil
}

// UnmarshalJSON reads a canonical state (as ParseRunResult).
func (r *RunResult) UnmarshalJSON(data []byte) error {
	parsed, err := ParseRunResult(string(data))
	if err != nil {
		return err
	}
	*r = parsed
	return nil
}

// Status is the run's status.
func (r RunResult) Status() string { return r.Run.Status }

// Pending lists the calls a paused run waits for, in pause order.
func (r RunResult) Pending() []PendingToolCall {
	if r.Run.Pause == nil {
		return nil
	}
	return r.Run.Pause.PendingToolCalls
}

// AgentEvent is one run event (docs/behaviour.md §6): Type such as "tool.started", the run and agent
// ids, the time, the run status and the step index where they apply, and every other
// field of the event in Details (camelCase keys, e.g. "toolCallId", "result"). A retried
// call's "tool.retrying" event has toolCallId, toolName, attempt (the attempt about to
// start) and error; "tool.started" has inputEdited true for an approval's edited input, and
// "tool.completed" has respondedByHuman true for a response (docs/behaviour.md §14, §15).
type AgentEvent struct {
	Type      string // the event type, e.g. "tool.started"
	RunID     string // the run id
	AgentID   string // the agent id
	Timestamp string // ISO 8601 UTC time
	Status    string // the run status when emitted
	StepIndex *int   // the step, for step events
	// ParentToolCallID is set on the events of a nested agent's run (docs/behaviour.md
	// §18): the outer call that runs it ("<outerCallId>/<nestedCallId>" deeper down).
	ParentToolCallID string
	Details          map[string]any // every other field of the event
	// JSON is the event's canonical JSON text.
	JSON string
}

// EventHandler receives a run's events, in order, one at a time.
//
// It runs on a goroutine of the SDK, never on a thread of the core, so it may block,
// panic (the panic is dropped: an event has nothing to fail) or call runtime.Goexit (the
// next events go to a new goroutine). The run waits for it after each event, as
// docs/behaviour.md §5 says listeners are synchronous: when Run returns normally, the
// handler has seen every event. Once the run's ctx is done (or StreamResult.Cancel was
// called), the run no longer waits for the handler, so it ends on time even if the
// handler blocks; Run then returns once the handler took the events that came meanwhile
// (run.cancelled included), or at most 100 ms after the run ended. A handler still
// blocked then gets the remaining events in order when (if) it returns, after Run
// returned.
type EventHandler func(AgentEvent)

func parseEvent(text string) AgentEvent {
	e := AgentEvent{JSON: text}
	v, err := decodeValue([]byte(text))
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		return e
	}
	str := func(k string) string {
		s, _ := m[k].(string)
		delete(m, k)
		return s
	}
	e.Type = str("type")
	e.RunID = str("runId")
	e.AgentID = str("agentId")
	e.Timestamp = str("timestamp")
	e.Status = str("status")
	e.ParentToolCallID = str("parentToolCallId")
	if f, ok := m["stepIndex"].(float64); ok {
		i := int(f)
		e.StepIndex = &i
	}
	delete(m, "stepIndex")
	e.Details = m
	return e
}
