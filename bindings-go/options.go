package phaseoagent

import "time"

// StopCondition ends a run with status "stopped" (docs/behaviour.md §3.2). The built-ins are checked
// by the core; StopWhenFunc wraps a Go predicate.
type StopCondition struct {
	builtin map[string]any
	fn      func(StopState) (string, bool)
}

// StepCountIs stops once n steps completed (reason "step_count:<n>").
func StepCountIs(n int) StopCondition {
	return StopCondition{builtin: map[string]any{"stepCountIs": n}}
}

// MaxTokensUsed stops once the run used n tokens in total (reason "max_tokens:<n>").
func MaxTokensUsed(n int) StopCondition {
	return StopCondition{builtin: map[string]any{"maxTokensUsed": n}}
}

// MaxCost stops once the run's cost reaches limit (reason "max_cost:<limit>").
func MaxCost(limit float64) StopCondition {
	return StopCondition{builtin: map[string]any{"maxCost": limit}}
}

// MaxDuration stops once the run is older than d (reason "max_duration:<ms>").
func MaxDuration(d time.Duration) StopCondition {
	return StopCondition{builtin: map[string]any{"maxDuration": d.Milliseconds()}}
}

// HasToolCall stops after a step that called tool name (reason "tool_call:<name>").
func HasToolCall(name string) StopCondition {
	return StopCondition{builtin: map[string]any{"hasToolCall": name}}
}

// FinishReasonIs stops after a response with that finish reason (reason
// "finish_reason:<r>").
func FinishReasonIs(reason string) StopCondition {
	return StopCondition{builtin: map[string]any{"finishReasonIs": reason}}
}

// StopWhenFunc is a Go stop condition: returning true stops the run with the returned
// reason ("custom_condition" when empty).
func StopWhenFunc(f func(StopState) (reason string, stop bool)) StopCondition {
	return StopCondition{fn: f}
}

// StopState is what a Go stop condition sees after a step.
type StopState struct {
	StepCount    int           // steps completed
	Usage        UsageSummary  // cumulative usage
	ToolCalls    []ToolCall    // the calls of the latest step
	FinishReason string        // the latest finish reason
	Elapsed      time.Duration // time since the run was created
}

// ToolDecision approves or rejects one pending call (Reason is optional).
type ToolDecision struct {
	ToolCallID string // the pending call
	Reason     string // optional reason (a rejection's tool message)
	// EditedInput, on an approval, is the person's corrected arguments (nil = the model's
	// run). They are checked as the model's would be before anything runs (an invalid one
	// refuses the continue, continue_invalid, and the state stays usable); the tool runs
	// with them and the conversation shows them (docs/behaviour.md §14).
	EditedInput any
}

// ToolOutput supplies the output of a pending manual or interactive call.
type ToolOutput struct {
	ToolCallID string // the pending call
	Output     any    // its output
}

// RunOptions starts a run (docs/behaviour.md §3). Client is required; zero fields are unset (the
// agent's values apply).
type RunOptions struct {
	// Input is the user input: a string or any JSON value.
	Input any
	// Messages continues an earlier conversation (e.g. a completed run's Messages).
	Messages []Message
	// Client is the model client.
	Client ModelClient
	// Context is the application context, passed to tools and every model request.
	Context any
	// Store is the run store for this run (overrides the agent's).
	Store *RunStore
	// Accessor is the application's own Load/Save of run states, used as this run's store
	// (not together with Store).
	Accessor StateAccessor
	// State is the product's name of Accessor (set one of them).
	State StateAccessor
	// OnEvent receives the run's events in order, each on a goroutine of the SDK (never
	// on a thread of the core); the run waits for it before going on, until ctx is done
	// (see EventHandler).
	OnEvent EventHandler
	// Traceparent is the W3C traceparent of the caller's span: with tracing on, the run's
	// span becomes its child.
	Traceparent string
	// ToolExecution overrides the agent's ToolExecution for this run, field by field
	// (zero fields keep the agent's): ToolExecutionConfig{Concurrency: 4}, as on the
	// agent, or a *ToolExecutionConfig.
	ToolExecution ToolExecutionSetting
	RunOverrides
}

// RunOverrides are the per-run (and per-continue) overrides of docs/behaviour.md §3.
type RunOverrides struct {
	Model             string            // the model
	MaxSteps          int               // the step limit (0 = the agent's; negative is refused)
	StopWhen          []StopCondition   // stop conditions (replace the agent's)
	ModelRetry        *ModelRetryConfig // model retries
	Temperature       *float64          // sampling temperature
	MaxOutputTokens   *int              // output limit
	TopP              *float64          // nucleus sampling
	ToolChoice        any               // "auto", "required", "none" or {"toolId": id}
	ParallelToolCalls *bool             // whether several calls per turn are allowed
	ActiveTools       []string          // the tools offered (by id)
}

// ToolExecutionSetting is a per-run (or per-continue) tool execution override: a
// ToolExecutionConfig or a *ToolExecutionConfig. Both forms are accepted so the
// configuration reads the same as on the agent (AgentDefinition.ToolExecution is a value)
// while code written against the product's Go SDK, whose RunOptions takes a pointer, still
// compiles. nil, and a nil *ToolExecutionConfig, leave the agent's setting.
type ToolExecutionSetting interface {
	isToolExecutionSetting()
}

// isToolExecutionSetting marks ToolExecutionConfig (and so *ToolExecutionConfig) as a
// ToolExecutionSetting.
func (ToolExecutionConfig) isToolExecutionSetting() {}

// putToolExecution writes a run's tool execution override into its options.
func putToolExecution(m map[string]any, s ToolExecutionSetting) {
	switch c := s.(type) {
	case ToolExecutionConfig:
		m["toolExecution"] = c.toJSON()
	case *ToolExecutionConfig:
		if c != nil {
			m["toolExecution"] = c.toJSON()
		}
	}
}

// ContinueOptions continues a paused run: from Run (a RunResult, e.g. parsed from stored
// JSON) or, with RunID, from the run store (claiming its pause once).
type ContinueOptions struct {
	// Run is the paused state.
	Run RunResult
	// StateJSON is the paused state's JSON text (as stored by the application); used when
	// Run holds no state. The core checks it (state_invalid when it is not a valid state).
	StateJSON string
	// RunID continues the stored run instead (needs a store, or State).
	RunID string
	// Accessor is the application's own Load/Save of run states: the run is loaded from it
	// by RunID and its checkpoints saved to it (not together with Store). The paused state
	// itself is Run or StateJSON.
	Accessor StateAccessor
	// State is the product's name of Accessor (set one of them).
	State StateAccessor
	// Client is the model client.
	Client ModelClient
	// Context replaces the application context.
	Context any
	// HumanInput is appended as a user message (required to continue a review pause).
	HumanInput string
	// Approvals and Rejections decide approval-gated calls.
	Approvals  []ToolDecision
	Rejections []ToolDecision // rejected calls (never run)
	// ToolOutputs answer manual and interactive calls.
	ToolOutputs []ToolOutput
	// Responses answer approval-gated calls in the tool's place: the tool never runs, the
	// output (checked by OutputSchema) is the call's result, and its tool.completed event
	// has respondedByHuman true (docs/behaviour.md §14).
	Responses []ToolOutput
	// Store is the run store (overrides the agent's).
	Store *RunStore
	// OnEvent receives the events, as RunOptions.OnEvent.
	OnEvent EventHandler
	// Traceparent is the W3C traceparent of the caller's span (tracing on): the continue's
	// span links to it (its parent is the paused run's span, carried by the state).
	Traceparent string
	// ToolExecution overrides the agent's ToolExecution for this continue (see
	// RunOptions.ToolExecution).
	ToolExecution ToolExecutionSetting
	RunOverrides
}

// Ptr returns a pointer to v, for the optional fields (Temperature, MaxOutputTokens, …).
func Ptr[T any](v T) *T { return &v }

func (o *RunOverrides) apply(m map[string]any, cbs *callbacks) {
	if o.Model != "" {
		m["model"] = o.Model
	}
	if o.MaxSteps != 0 {
		m["maxSteps"] = o.MaxSteps
	}
	if o.StopWhen != nil {
		m["stopWhen"] = stopJSON(o.StopWhen, cbs)
	}
	if o.ModelRetry != nil {
		m["modelRetry"] = o.ModelRetry.toJSON()
	}
	if o.Temperature != nil {
		m["temperature"] = *o.Temperature
	}
	if o.MaxOutputTokens != nil {
		m["maxOutputTokens"] = *o.MaxOutputTokens
	}
	if o.TopP != nil {
		m["topP"] = *o.TopP
	}
	if o.ToolChoice != nil {
		m["toolChoice"] = o.ToolChoice
	}
	if o.ParallelToolCalls != nil {
		m["parallelToolCalls"] = *o.ParallelToolCalls
	}
	if o.ActiveTools != nil {
		m["activeTools"] = o.ActiveTools
	}
}

func stopJSON(conds []StopCondition, cbs *callbacks) []any {
	out := make([]any, 0, len(conds))
	for _, c := range conds {
		if c.fn == nil {
			out = append(out, c.builtin)
			continue
		}
		fn := c.fn
		out = append(out, cbs.add(func(call *hostCall) {
			var state struct {
				StepCount    int          `json:"stepCount"`
				Usage        UsageSummary `json:"usage"`
				ToolCalls    []ToolCall   `json:"toolCalls"`
				FinishReason string       `json:"finishReason"`
				ElapsedMs    float64      `json:"elapsedMs"`
			}
			if err := Decode(call.arg(0), &state); err != nil {
				call.fail(err)
				return
			}
			call.finish(protect(func() (any, error) {
				reason, stop := fn(StopState{
					StepCount:    state.StepCount,
					Usage:        state.Usage,
					ToolCalls:    state.ToolCalls,
					FinishReason: state.FinishReason,
					Elapsed:      time.Duration(state.ElapsedMs * float64(time.Millisecond)),
				})
				switch {
				case !stop:
					return false, nil
				case reason == "":
					return true, nil
				default:
					return reason, nil
				}
			}))
		}))
	}
	return out
}

func decisionsJSON(list []ToolDecision) ([]any, error) {
	out := make([]any, 0, len(list))
	for _, d := range list {
		if d.Reason == "" && d.EditedInput == nil {
			out = append(out, d.ToolCallID)
			continue
		}
		m := map[string]any{"toolCallId": d.ToolCallID}
		if d.Reason != "" {
			m["reason"] = d.Reason
		}
		if d.EditedInput != nil {
			edited, err := callerValue("edited input for "+cleanText(d.ToolCallID), d.EditedInput, maxValueDepth)
			if err != nil {
				return nil, err
			}
			m["editedInput"] = edited
		}
		out = append(out, m)
	}
	return out, nil
}
