// Go conformance runner: runs the cross-language JSON cases through the PUBLIC Go API of
// the Go binding (bindings-go, package phaseoagent), with real Go executors, validators,
// predicates, hooks and a Go model client (see tests/conformance/README.md and
// tests/conformance/README.md).
//
//	tests/conformance/go_runner.sh [--stop-after N --save-state DIR |
//	    --resume-state DIR --from-step N] PATH...
//
// Executor form: Go has one, a function run on its own goroutine; "async" and
// "asGenerator" choose nothing here (progress goes through runtime.EmitProgress). Entry
// points: a case whose file name sorts at an odd index among the `*.json` files of its
// folder runs through agent.Stream / agent.ContinueStream (awaiting the stream result,
// events still through OnEvent); every other case through agent.Run / agent.Continue.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// ---------------------------------------------------------------------------------------
// Keys this runner understands (anything else fails the case, naming the key)

func set(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

var overrideKeys = []string{"model", "maxSteps", "stopWhen", "modelRetry", "toolExecution", "temperature",
	"maxOutputTokens", "topP", "toolChoice", "parallelToolCalls", "activeTools"}

var (
	caseKeys  = set("name", "description", "agent", "tools", "model", "steps", "expectDefinitionError")
	agentKeys = set("id", "model", "instructions", "maxSteps", "stopWhen", "modelRetry", "toolExecution",
		"temperature", "maxOutputTokens", "topP", "outputSchema", "requireApproval", "humanReview",
		"stateSecret", "toolChoice", "parallelToolCalls", "activeTools")
	toolKeys = set("id", "description", "asAgent", "parameters", "inputSchema", "outputSchema", "eventSchema", "timeoutMs",
		"onError", "requireApproval", "nextTurnParams", "manual", "onToolCalled",
		"onResponseReceived", "behavior", "asGenerator", "async", "strict", "inputExamples", "maxCalls", "retry",
		"deferLoading")
	modelEntryKeys  = set("text", "toolCalls", "usage", "cost", "finishReason", "fail")
	runKeys         = set(append([]string{"input", "context", "messages", "cancelAfterMs"}, overrideKeys...)...)
	continueKeys    = set(append([]string{"approvals", "rejections", "toolOutputs", "responses", "humanInput", "context", "cancelAfterMs"}, overrideKeys...)...)
	stepKeys        = set("run", "continue", "expect")
	expectKeys      = set("status", "output", "stopReason", "pauseKind", "context", "error", "pending", "executed", "cancelled", "maxConcurrent", "modelRequests", "events", "toolEvents", "preliminaryResults", "usage", "minWallMs", "maxWallMs")
	errorKeys       = set("code", "messageContains")
	requestKeys     = set("toolMessages", "tools", "context", "temperature", "model", "instructions", "lastUserMessage", "maxOutputTokens", "topP", "toolChoice", "parallelToolCalls", "toolSpecs", "toolCalls")
	toolSpecKeys    = set("id", "strict", "inputExamples")
	toolMessageKeys = set("toolCallId", "content", "contentContains", "isError")
	usageKeys       = set("inputTokens", "outputTokens", "cachedTokens", "totalTokens", "cost")
	toolExecKeys    = set("toolConcurrency", "onError", "maxOutputChars", "maxToolCalls")
	modelRetryKeys  = set("maxRetries", "backoffMs")
	decisionKeys    = set("toolCallId", "reason")
	approvalKeys    = set("toolCallId", "reason", "editedInput")
	toolRetryKeys   = set("maxAttempts", "backoffMs")
	requestCallKeys = set("id", "name", "arguments")
	toolOutputKeys  = set("toolCallId", "output")
	nextTurnKeys    = set("model", "instructions", "temperature", "maxOutputTokens", "topP", "tools", "toolChoice")
	terminalActions = set("return", "returnInput", "throw", "returnContext", "returnRuntime")
	actions         = set("return", "returnInput", "throw", "returnContext", "returnRuntime", "progress", "setContext", "sleepMs", "blockingSleepMs",
		"throwUntilAttempt", "returnAttempt", "returnIdempotencyKey")
	toolEventTypes   = set("tool.started", "tool.preliminary_result", "tool.completed", "tool.failed", "tool.retrying")
	executorGraceDur = time.Second
)

// caseError is the first difference, or a feature of the case this runner cannot express.
type caseError struct{ msg string }

func (e *caseError) Error() string { return e.msg }

func fail(format string, args ...any) { panic(&caseError{fmt.Sprintf(format, args...)}) }

// ---------------------------------------------------------------------------------------
// JSON helpers (numbers by value, absent == null)

type obj = map[string]any

func isObj(v any) bool { _, ok := v.(obj); return ok }

// plain turns any Go value into generic JSON data (maps, slices, float64).
func plain(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		fail("value is not JSON: %v", err)
	}
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

func clone(v any) any {
	if v == nil {
		return nil
	}
	return plain(v)
}

func jsonEq(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEq(x[i], y[i]) {
				return false
			}
		}
		return true
	case obj:
		y, ok := b.(obj)
		if !ok {
			return false
		}
		for k, v := range x {
			if !jsonEq(v, y[k]) {
				return false
			}
		}
		for k, v := range y {
			if _, seen := x[k]; !seen && !jsonEq(nil, v) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	default:
		if _, ok := b.([]any); ok {
			return false
		}
		if _, ok := b.(obj); ok {
			return false
		}
		return a == b
	}
}

func show(v any) string {
	data, err := json.Marshal(v)
	s := string(data)
	if err != nil {
		s = fmt.Sprint(v)
	}
	r := []rune(s)
	if len(r) > 300 {
		return string(r[:300]) + "…"
	}
	return s
}

func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return show(v)
}

func diff(key string, want, got any) {
	want, got = plain(want), plain(got)
	if !jsonEq(want, got) {
		fail("%s: expected %s, got %s", key, show(want), show(got))
	}
}

func checkKeys(v any, allowed map[string]bool, what string) {
	m, ok := v.(obj)
	if !ok {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !allowed[k] {
			fail("%s: unsupported key %q", what, k)
		}
	}
}

func singleEntry(v any, what string) (string, any) {
	m, ok := v.(obj)
	if !ok || len(m) != 1 {
		fail("%s must be an object with one key: %s", what, show(v))
	}
	for k, val := range m {
		return k, val
	}
	return "", nil
}

func num(v any, what string) float64 {
	f, ok := v.(float64)
	if !ok {
		fail("%s: expected a number, got %s", what, show(v))
	}
	return f
}

// ---------------------------------------------------------------------------------------
// Observations of the executors of one step

type observations struct {
	mu            sync.Mutex
	executed      []string // every start, a retried call once per attempt
	cancelled     map[string]bool
	active        int
	maxConcurrent int
}

func newObservations() *observations {
	o := &observations{}
	o.reset()
	return o
}

func (o *observations) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.executed, o.cancelled, o.active, o.maxConcurrent = nil, map[string]bool{}, 0, 0
}

func (o *observations) start(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.executed = append(o.executed, id)
	o.active++
	if o.active > o.maxConcurrent {
		o.maxConcurrent = o.active
	}
}

func (o *observations) end() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.active--
}

func (o *observations) cancel(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cancelled[id] = true
}

func (o *observations) activeCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.active
}

// sortedList is a sorted copy of list, repeats kept.
func sortedList(list []string) []any {
	sorted := append([]string{}, list...)
	sort.Strings(sorted)
	out := make([]any, len(sorted))
	for i, k := range sorted {
		out[i] = k
	}
	return out
}

func sortedKeys(m map[string]bool) []any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// ---------------------------------------------------------------------------------------
// The executor: a real Go function performing the case's actions

// rawBehaviors holds each tool's behavior actions with their values as raw JSON text, so
// a returned object keeps the key order the case wrote (a Go map would sort its keys): the
// executor returns a json.RawMessage, which the binding sends verbatim.
var rawBehaviors map[string][]map[string]json.RawMessage

func readRawBehaviors(data []byte) {
	var doc struct {
		Tools []struct {
			ID       string                       `json:"id"`
			Behavior []map[string]json.RawMessage `json:"behavior"`
		} `json:"tools"`
	}
	rawBehaviors = map[string][]map[string]json.RawMessage{}
	if json.Unmarshal(data, &doc) == nil {
		for _, t := range doc.Tools {
			rawBehaviors[t.ID] = t.Behavior
		}
	}
}

// action is one behavior action; value is its argument, as written (raw JSON) when known.
type action struct {
	key     string
	arg     any
	raw     json.RawMessage
	message string // throwUntilAttempt's error message
}

// behaviorAction reads one action: a single key, or throwUntilAttempt with its message.
func behaviorAction(a any) (key string, arg any, message string) {
	if m, ok := a.(obj); ok && len(m) == 2 && m["throwUntilAttempt"] != nil {
		msg, ok := m["message"].(string)
		if !ok {
			fail("throwUntilAttempt needs a message: %s", show(a))
		}
		return "throwUntilAttempt", m["throwUntilAttempt"], msg
	}
	key, arg = singleEntry(a, "behavior action")
	if key == "throwUntilAttempt" {
		fail("throwUntilAttempt needs a message: %s", show(a))
	}
	return key, arg, ""
}

func (a action) value() any {
	if a.raw != nil {
		return append(json.RawMessage{}, a.raw...)
	}
	return clone(a.arg)
}

func executor(spec obj, o *observations) func(any, pa.RuntimeContext) (any, error) {
	list, _ := spec["behavior"].([]any)
	id, _ := spec["id"].(string)
	raws := rawBehaviors[id]
	acts := make([]action, 0, len(list))
	for i, a := range list {
		k, v, message := behaviorAction(a)
		if !actions[k] {
			fail("tool %q: unsupported behavior action %q", spec["id"], k)
		}
		var raw json.RawMessage
		if i < len(raws) {
			raw = raws[i][k]
		}
		acts = append(acts, action{k, v, raw, message})
	}
	return func(input any, rt pa.RuntimeContext) (any, error) {
		id := rt.ToolCall.ID
		o.start(id)
		defer o.end()
		for _, a := range acts {
			switch a.key {
			case "return":
				return a.value(), nil
			case "returnInput":
				return input, nil
			case "throw":
				return nil, errors.New(text(a.arg))
			case "returnContext":
				return rt.Context, nil
			case "returnRuntime":
				if rt.RunID == "" {
					return nil, errors.New("runtime.RunID is empty")
				}
				return obj{"runId": "<run>", "agentId": rt.AgentID, "stepIndex": rt.StepIndex, "toolCallId": id}, nil
			case "progress":
				if err := rt.EmitProgress(a.value()); err != nil {
					return nil, err
				}
			case "setContext":
				if err := rt.SetContext(a.value()); err != nil {
					return nil, err
				}
			case "sleepMs":
				select {
				case <-time.After(time.Duration(num(a.arg, "sleepMs") * float64(time.Millisecond))):
				case <-rt.Ctx.Done():
					o.cancel(id)
					return nil, rt.Ctx.Err()
				}
			case "blockingSleepMs":
				time.Sleep(time.Duration(num(a.arg, "blockingSleepMs") * float64(time.Millisecond)))
			case "throwUntilAttempt":
				if float64(rt.Attempt) < num(a.arg, "throwUntilAttempt") {
					return nil, errors.New(a.message)
				}
			case "returnAttempt":
				return rt.Attempt, nil
			case "returnIdempotencyKey":
				rest, ok := strings.CutPrefix(rt.IdempotencyKey, rt.RunID+":")
				if !ok || rt.RunID == "" {
					return nil, fmt.Errorf("idempotency key %q does not start with the run id %q", rt.IdempotencyKey, rt.RunID)
				}
				return "<run>:" + rest, nil
			}
		}
		return nil, nil
	}
}

// ---------------------------------------------------------------------------------------
// Validators, predicates and hooks as Go functions

func schemaValidator(schema any) pa.Validator {
	check, err := pa.JSONSchemaValidator(schema)
	if err != nil {
		panic(err) // a definition error: the case may expect it
	}
	return func(v any) (any, error) { return check(v) }
}

func inputEquals(want obj, input any) bool {
	m, ok := plain(input).(obj)
	if !ok {
		return false
	}
	for k, v := range want {
		got, present := m[k]
		if !present || !jsonEq(v, got) {
			return false
		}
	}
	return true
}

func toolApproval(rule any, t *pa.Tool) {
	switch r := rule.(type) {
	case nil:
	case bool:
		t.RequireApproval = r
	case obj:
		want, ok := r["inputEquals"].(obj)
		if len(r) != 1 || !ok {
			fail("tool requireApproval: unsupported rule %s", show(rule))
		}
		t.Approval = func(input any, _ pa.RuntimeContext) (bool, error) { return inputEquals(want, input), nil }
	default:
		fail("tool requireApproval: unsupported rule %s", show(rule))
	}
}

func agentApproval(rule any) func(pa.ToolCall, pa.RuntimeContext) (bool, error) {
	k, arg := singleEntry(rule, "agent requireApproval")
	switch {
	case k == "toolIds":
		ids, ok := arg.([]any)
		if !ok {
			break
		}
		return func(call pa.ToolCall, _ pa.RuntimeContext) (bool, error) {
			for _, id := range ids {
				if id == call.Name {
					return true, nil
				}
			}
			return false, nil
		}
	case k == "inputEquals" && isObj(arg):
		want := arg.(obj)
		return func(call pa.ToolCall, _ pa.RuntimeContext) (bool, error) { return inputEquals(want, call.Input), nil }
	}
	fail("agent requireApproval: unsupported rule %s", show(rule))
	return nil
}

func onToolCalled(form any, t *pa.Tool) {
	switch f := form.(type) {
	case nil:
	case string:
		if f != "pause" {
			fail("onToolCalled: unsupported form %s", show(form))
		}
		t.OnToolCalled = func(any, pa.RuntimeContext) (any, bool, error) { return nil, false, nil }
	case obj:
		v, ok := f["return"]
		if len(f) != 1 || !ok {
			fail("onToolCalled: unsupported form %s", show(form))
		}
		t.OnToolCalled = func(any, pa.RuntimeContext) (any, bool, error) { return clone(v), true, nil }
	default:
		fail("onToolCalled: unsupported form %s", show(form))
	}
}

func onResponseReceived(form any, t *pa.Tool) {
	if form == nil {
		return
	}
	f, ok := form.(obj)
	key, isString := f["wrap"].(string)
	if !ok || len(f) != 1 || !isString {
		fail("onResponseReceived: unsupported form %s", show(form))
	}
	t.OnResponseReceived = func(output any, _ pa.RuntimeContext) (any, error) { return obj{key: output}, nil }
}

func humanReview(form any) func(pa.HumanReviewContext) *pa.HumanReviewRequest {
	f, ok := form.(obj)
	if !ok || len(f) != 1 {
		fail("humanReview: unsupported form %s", show(form))
	}
	spec, present := f["pauseOnFinal"]
	if !present {
		fail("humanReview: unsupported form %s", show(form))
	}
	checkKeys(spec, set("reason", "payload"), "humanReview.pauseOnFinal")
	s, _ := spec.(obj)
	return func(ctx pa.HumanReviewContext) *pa.HumanReviewRequest {
		users := 0
		for _, m := range ctx.Messages {
			if m.Role == "user" {
				users++
			}
		}
		if ctx.IsFinal && users == 1 {
			reason, _ := s["reason"].(string)
			return &pa.HumanReviewRequest{Reason: reason, Payload: clone(s["payload"])}
		}
		return nil
	}
}

func stopConditions(v any) []pa.StopCondition {
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	out := make([]pa.StopCondition, 0, len(items))
	for _, item := range items {
		k, arg := singleEntry(item, "stopWhen condition")
		switch k {
		case "stepCountIs":
			out = append(out, pa.StepCountIs(int(num(arg, k))))
		case "maxTokensUsed":
			out = append(out, pa.MaxTokensUsed(int(num(arg, k))))
		case "maxCost":
			out = append(out, pa.MaxCost(num(arg, k)))
		case "maxDuration":
			out = append(out, pa.MaxDuration(time.Duration(num(arg, k)*float64(time.Millisecond))))
		case "hasToolCall":
			out = append(out, pa.HasToolCall(text(arg)))
		case "finishReasonIs":
			out = append(out, pa.FinishReasonIs(text(arg)))
		default:
			fail("stopWhen: unsupported condition %q", k)
		}
	}
	return out
}

func toolExecution(v any) *pa.ToolExecutionConfig {
	if v == nil {
		return nil
	}
	checkKeys(v, toolExecKeys, "toolExecution")
	m, _ := v.(obj)
	c := &pa.ToolExecutionConfig{}
	if n, ok := m["toolConcurrency"]; ok {
		c.Concurrency = int(num(n, "toolConcurrency"))
	}
	if p, ok := m["onError"]; ok {
		c.OnError = text(p)
	}
	if n, ok := m["maxOutputChars"]; ok {
		c.MaxOutputChars = int(num(n, "maxOutputChars"))
	}
	if n, ok := m["maxToolCalls"]; ok {
		c.MaxToolCalls = pa.Ptr(int(num(n, "maxToolCalls")))
	}
	return c
}

func modelRetry(v any) *pa.ModelRetryConfig {
	if v == nil {
		return nil
	}
	checkKeys(v, modelRetryKeys, "modelRetry")
	m, _ := v.(obj)
	c := &pa.ModelRetryConfig{Backoff: 250 * time.Millisecond}
	if n, ok := m["maxRetries"]; ok {
		c.MaxRetries = int(num(n, "maxRetries"))
	}
	if n, ok := m["backoffMs"]; ok {
		c.Backoff = time.Duration(num(n, "backoffMs") * float64(time.Millisecond))
	}
	return c
}

func nextTurn(v any) *pa.NextTurnParams {
	if v == nil {
		return nil
	}
	checkKeys(v, nextTurnKeys, "nextTurnParams")
	m, ok := v.(obj)
	if !ok {
		fail("nextTurnParams: expected an object, got %s", show(v))
	}
	p := &pa.NextTurnParams{}
	if s, ok := m["model"].(string); ok {
		p.Model = s
	}
	if s, ok := m["instructions"].(string); ok {
		p.Instructions = s
	}
	if f, ok := m["temperature"].(float64); ok {
		p.Temperature = pa.Ptr(f)
	}
	if f, ok := m["topP"].(float64); ok {
		p.TopP = pa.Ptr(f)
	}
	if f, ok := m["maxOutputTokens"].(float64); ok {
		p.MaxOutputTokens = pa.Ptr(int(f))
	}
	if ids, ok := m["tools"].([]any); ok {
		p.Tools = []pa.Tool{}
		for _, id := range ids {
			p.Tools = append(p.Tools, pa.Tool{ID: text(id)})
		}
	}
	if c, ok := m["toolChoice"]; ok {
		p.ToolChoice = c
	}
	return p
}

// ---------------------------------------------------------------------------------------
// The agent

func buildTool(spec obj, o *observations) pa.Tool {
	checkKeys(spec, toolKeys, "tool")
	id, ok := spec["id"].(string)
	if !ok {
		fail("tool without id")
	}
	t := pa.Tool{ID: id}
	t.Description, _ = spec["description"].(string)
	if p, ok := spec["parameters"].(obj); ok {
		t.Parameters = p
	}
	if spec["manual"] != true {
		t.Execute = executor(spec, o)
	}
	if ms, ok := spec["timeoutMs"]; ok && ms != nil {
		t.Timeout = time.Duration(num(ms, "timeoutMs") * float64(time.Millisecond))
	}
	toolApproval(spec["requireApproval"], &t)
	if p, ok := spec["onError"].(string); ok {
		t.OnError = p
	}
	if s := spec["inputSchema"]; s != nil {
		t.InputSchema = schemaValidator(s)
	}
	if s := spec["outputSchema"]; s != nil {
		t.OutputSchema = schemaValidator(s)
	}
	if s := spec["eventSchema"]; s != nil {
		t.EventSchema = schemaValidator(s)
	}
	onToolCalled(spec["onToolCalled"], &t)
	onResponseReceived(spec["onResponseReceived"], &t)
	t.NextTurn = nextTurn(spec["nextTurnParams"])
	if s, ok := spec["strict"].(bool); ok {
		t.Strict = s
	}
	if ex, ok := spec["inputExamples"].([]any); ok {
		t.InputExamples = ex
	}
	if d, ok := spec["deferLoading"].(bool); ok {
		t.DeferLoading = d
	}
	if n, ok := spec["maxCalls"]; ok && n != nil {
		t.MaxCalls = pa.Ptr(int(num(n, "maxCalls")))
	}
	if r, ok := spec["retry"]; ok && r != nil {
		checkKeys(r, toolRetryKeys, "retry")
		rm, _ := r.(obj)
		t.Retry = &pa.ToolRetry{MaxAttempts: 1}
		if n, ok := rm["maxAttempts"]; ok {
			t.Retry.MaxAttempts = int(num(n, "retry.maxAttempts"))
		}
		if n, ok := rm["backoffMs"]; ok {
			t.Retry.Backoff = time.Duration(num(n, "retry.backoffMs") * float64(time.Millisecond))
		}
	}
	return pa.DefineTool(t)
}

// agentTool is {id, description?, asAgent: {agent, tools}}: the nested agent built like
// the case's own and registered with AsTool (docs/behaviour.md §18).
func agentTool(spec obj, nested any, o *observations) pa.Tool {
	checkKeys(spec, set("id", "description", "asAgent"), "tool")
	n, ok := nested.(obj)
	if !ok {
		fail("asAgent must be an object")
	}
	checkKeys(n, set("agent", "tools"), "asAgent")
	agent, refused := buildAgent(n, o)
	if refused != nil {
		panic(refused)
	}
	opts := pa.AsToolOptions{}
	opts.ID, _ = spec["id"].(string)
	opts.Description, _ = spec["description"].(string)
	return agent.AsTool(opts)
}

// buildAgent returns the agent, or the *pa.Error the binding refused the definition with.
func buildAgent(c obj, o *observations) (agent *pa.Agent, refused *pa.Error) {
	a, ok := c["agent"].(obj)
	if !ok {
		fail("case without agent")
	}
	checkKeys(a, agentKeys, "agent")
	defer func() {
		if r := recover(); r != nil {
			var perr *pa.Error
			if e, ok := r.(error); ok && errors.As(e, &perr) {
				agent, refused = nil, perr
				return
			}
			panic(r)
		}
	}()
	def := pa.AgentDefinition{}
	def.ID, _ = a["id"].(string)
	tools, _ := c["tools"].([]any)
	for _, t := range tools {
		m, ok := t.(obj)
		if !ok {
			fail("tool must be an object")
		}
		if nested, ok := m["asAgent"]; ok {
			def.Tools = append(def.Tools, agentTool(m, nested, o))
			continue
		}
		def.Tools = append(def.Tools, buildTool(m, o))
	}
	def.ToolChoice = clone(a["toolChoice"])
	if p, ok := a["parallelToolCalls"].(bool); ok {
		def.ParallelToolCalls = pa.Ptr(p)
	}
	if ids, ok := a["activeTools"].([]any); ok {
		def.ActiveTools = []string{} // an empty list offers no tool; nil would offer all
		for _, id := range ids {
			def.ActiveTools = append(def.ActiveTools, text(id))
		}
	}
	def.Model, _ = a["model"].(string)
	def.Instructions, _ = a["instructions"].(string)
	if n, ok := a["maxSteps"]; ok && n != nil {
		def.MaxSteps = int(num(n, "maxSteps"))
	}
	if f, ok := a["temperature"].(float64); ok {
		def.Temperature = func(pa.TurnContext) *float64 { return pa.Ptr(f) }
	}
	if f, ok := a["topP"].(float64); ok {
		def.TopP = func(pa.TurnContext) *float64 { return pa.Ptr(f) }
	}
	if f, ok := a["maxOutputTokens"].(float64); ok {
		def.MaxOutputTokens = func(pa.TurnContext) *int { return pa.Ptr(int(f)) }
	}
	def.StopWhen = stopConditions(a["stopWhen"])
	if r := modelRetry(a["modelRetry"]); r != nil {
		def.ModelRetry = *r
	}
	if t := toolExecution(a["toolExecution"]); t != nil {
		def.ToolExecution = *t
	}
	if s := a["outputSchema"]; s != nil {
		def.OutputSchema = schemaValidator(s)
	}
	if r := a["requireApproval"]; r != nil {
		def.RequireApproval = agentApproval(r)
	}
	if r := a["humanReview"]; r != nil {
		def.HumanReview = humanReview(r)
	}
	def.StateSecret, _ = a["stateSecret"].(string)
	built, err := pa.CreateAgent(def)
	if err != nil {
		var perr *pa.Error
		if errors.As(err, &perr) {
			return nil, perr
		}
		fail("CreateAgent: %v", err)
	}
	return built, nil
}

// ---------------------------------------------------------------------------------------
// The scripted model: a Go model client recording every request

type scriptedModel struct {
	mu       sync.Mutex
	entries  []any
	cursor   int
	requests []obj
	ranOut   string
}

func requestSummary(r pa.ModelRequest) obj {
	msgs := r.Messages
	start := len(msgs)
	for start > 0 && msgs[start-1].Role == "tool" {
		start--
	}
	toolMessages := []any{}
	for _, m := range msgs[start:] {
		toolMessages = append(toolMessages, obj{"toolCallId": m.ToolCallID, "content": m.Content, "isError": m.IsError})
	}
	var lastUser any
	toolCalls := []any{} // of the last assistant message with tool calls
	for _, m := range msgs {
		if m.Role == "user" {
			lastUser = m.Content
		}
		if len(m.ToolCalls) > 0 {
			toolCalls = []any{}
			for _, c := range m.ToolCalls {
				toolCalls = append(toolCalls, obj{"id": c.ID, "name": c.Name, "arguments": c.Input})
			}
		}
	}
	tools, specs := []any{}, []any{}
	for _, t := range r.Tools {
		tools = append(tools, t.ID)
		var examples any
		if t.InputExamples != nil {
			examples = clone(t.InputExamples)
		}
		specs = append(specs, obj{"id": t.ID, "strict": t.Strict, "inputExamples": examples})
	}
	return plain(obj{
		"toolMessages": toolMessages, "tools": tools, "context": r.Context, "temperature": r.Temperature,
		"model": r.Model, "instructions": r.Instructions, "lastUserMessage": lastUser,
		"maxOutputTokens": r.MaxOutputTokens, "topP": r.TopP, "toolChoice": r.ToolChoice,
		"parallelToolCalls": r.ParallelToolCalls, "toolSpecs": specs, "toolCalls": toolCalls,
	}).(obj)
}

func (m *scriptedModel) Generate(_ context.Context, r pa.ModelRequest) (pa.ModelResponse, error) {
	summary := requestSummary(r)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, summary)
	index := m.cursor
	m.cursor++
	if index >= len(m.entries) {
		m.ranOut = fmt.Sprintf("case error: the scripted model ran out of responses (%d scripted)", len(m.entries))
		return pa.ModelResponse{}, errors.New(m.ranOut)
	}
	entry, _ := m.entries[index].(obj)
	if f, ok := entry["fail"]; ok {
		if fm, ok := f.(obj); ok {
			return pa.ModelResponse{}, errors.New(text(fm["message"]))
		}
		return pa.ModelResponse{}, errors.New(text(f))
	}
	var resp pa.ModelResponse
	if err := pa.Decode(entry, &resp); err != nil {
		return pa.ModelResponse{}, err
	}
	return resp, nil
}

// ---------------------------------------------------------------------------------------
// Steps

func overrides(spec obj) pa.RunOverrides {
	o := pa.RunOverrides{}
	o.Model, _ = spec["model"].(string)
	if n, ok := spec["maxSteps"]; ok && n != nil {
		o.MaxSteps = int(num(n, "maxSteps"))
	}
	o.StopWhen = stopConditions(spec["stopWhen"])
	o.ModelRetry = modelRetry(spec["modelRetry"])
	if f, ok := spec["temperature"].(float64); ok {
		o.Temperature = pa.Ptr(f)
	}
	if f, ok := spec["maxOutputTokens"].(float64); ok {
		o.MaxOutputTokens = pa.Ptr(int(f))
	}
	if f, ok := spec["topP"].(float64); ok {
		o.TopP = pa.Ptr(f)
	}
	o.ToolChoice = clone(spec["toolChoice"])
	if p, ok := spec["parallelToolCalls"].(bool); ok {
		o.ParallelToolCalls = pa.Ptr(p)
	}
	if ids, ok := spec["activeTools"].([]any); ok {
		o.ActiveTools = []string{}
		for _, id := range ids {
			o.ActiveTools = append(o.ActiveTools, text(id))
		}
	}
	return o
}

func decisions(v any, what string, allowed map[string]bool) []pa.ToolDecision {
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		fail("%s: expected a list, got %s", what, show(v))
	}
	out := []pa.ToolDecision{}
	for _, d := range items {
		switch x := d.(type) {
		case string:
			out = append(out, pa.ToolDecision{ToolCallID: x})
		case obj:
			checkKeys(x, allowed, what)
			id, ok := x["toolCallId"].(string)
			if !ok {
				fail("%s: unsupported decision %s", what, show(d))
			}
			reason, _ := x["reason"].(string)
			out = append(out, pa.ToolDecision{ToolCallID: id, Reason: reason, EditedInput: clone(x["editedInput"])})
		default:
			fail("%s: unsupported decision %s", what, show(d))
		}
	}
	return out
}

func toolOutputs(v any, what string) []pa.ToolOutput {
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		fail("%s: expected a list, got %s", what, show(v))
	}
	out := []pa.ToolOutput{}
	for _, item := range items {
		checkKeys(item, toolOutputKeys, "toolOutput")
		m, _ := item.(obj)
		id, ok := m["toolCallId"].(string)
		if !ok {
			fail("toolOutput without toolCallId: %s", show(item))
		}
		out = append(out, pa.ToolOutput{ToolCallID: id, Output: clone(m["output"])})
	}
	return out
}

// usesStream: the case's file name sorts at an odd index in its folder.
func usesStream(file string) bool {
	abs, _ := filepath.Abs(file)
	entries, _ := os.ReadDir(filepath.Dir(abs))
	names := []string{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for i, n := range names {
		if n == filepath.Base(abs) {
			return i%2 == 1
		}
	}
	return false
}

type outcome struct {
	state         obj // the result's state (nil when none)
	err           *pa.Error
	events        []pa.AgentEvent
	requests      []obj
	executed      []any
	cancelled     []any
	maxConcurrent int
	wall          time.Duration
}

type caseRun struct {
	agent     *pa.Agent
	model     *scriptedModel
	obs       *observations
	state     string // the current state's JSON text ("" = none)
	streaming bool
}

func (r *caseRun) step(step obj) outcome {
	r.obs.reset()
	r.model.mu.Lock()
	r.model.requests = nil
	r.model.mu.Unlock()
	var evMu sync.Mutex
	events := []pa.AgentEvent{}
	onEvent := func(e pa.AgentEvent) {
		evMu.Lock()
		events = append(events, e)
		evMu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelAfter any
	startAt := time.Now()
	var result pa.RunResult
	var err error
	switch {
	case step["run"] != nil:
		spec, ok := step["run"].(obj)
		if !ok {
			fail("run: expected an object")
		}
		cancelAfter = spec["cancelAfterMs"]
		opts := pa.RunOptions{Input: clone(spec["input"]), Client: r.model, OnEvent: onEvent,
			ToolExecution: toolExecution(spec["toolExecution"]), RunOverrides: overrides(spec)}
		if c, ok := spec["context"]; ok {
			opts.Context = clone(c)
		}
		if m, ok := spec["messages"]; ok && m != nil {
			if err := pa.Decode(m, &opts.Messages); err != nil {
				fail("messages: %v", err)
			}
		}
		armCancel(cancelAfter, cancel)
		if r.streaming {
			result, err = r.agent.Stream(ctx, opts).Result()
		} else {
			result, err = r.agent.Run(ctx, opts)
		}
	case step["continue"] != nil:
		spec, ok := step["continue"].(obj)
		if !ok {
			fail("continue: expected an object")
		}
		if r.state == "" {
			fail("continue without a state")
		}
		cancelAfter = spec["cancelAfterMs"]
		opts := pa.ContinueOptions{StateJSON: r.state, Client: r.model, OnEvent: onEvent,
			ToolExecution: toolExecution(spec["toolExecution"]), RunOverrides: overrides(spec)}
		opts.Approvals = decisions(spec["approvals"], "approvals", approvalKeys)
		opts.Rejections = decisions(spec["rejections"], "rejections", decisionKeys)
		opts.ToolOutputs = toolOutputs(spec["toolOutputs"], "toolOutputs")
		opts.Responses = toolOutputs(spec["responses"], "responses")
		if h, ok := spec["humanInput"].(string); ok {
			opts.HumanInput = h
		}
		if c, ok := spec["context"]; ok {
			opts.Context = clone(c)
		}
		armCancel(cancelAfter, cancel)
		if r.streaming {
			result, err = r.agent.ContinueStream(ctx, opts).Result()
		} else {
			result, err = r.agent.Continue(ctx, opts)
		}
	default:
		fail("a step is neither run nor continue")
	}
	wall := time.Since(startAt)
	var perr *pa.Error
	if err != nil {
		if !errors.As(err, &perr) {
			fail("%T: %v", err, err)
		}
		if perr.Result != nil {
			result = *perr.Result
		}
	}
	// Let executors the run stopped waiting for observe their cancellation.
	deadline := time.Now().Add(executorGraceDur)
	for r.obs.activeCount() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	r.model.mu.Lock()
	ranOut, requests := r.model.ranOut, append([]obj{}, r.model.requests...)
	r.model.mu.Unlock()
	if ranOut != "" {
		fail("%s", ranOut)
	}
	var state obj
	if result.JSON() != "" {
		// Between steps the state always round-trips through its canonical JSON text.
		data, merr := json.Marshal(result)
		if merr != nil {
			fail("state: %v", merr)
		}
		r.state = string(data)
		reparsed, perr2 := pa.ParseRunResult(r.state)
		if perr2 != nil {
			fail("state refused on reading: %v", perr2)
		}
		_ = reparsed
		var generic any
		_ = json.Unmarshal(data, &generic)
		state, _ = generic.(obj)
	}
	r.obs.mu.Lock()
	executed, cancelled, maxC := sortedList(r.obs.executed), sortedKeys(r.obs.cancelled), r.obs.maxConcurrent
	r.obs.mu.Unlock()
	evMu.Lock()
	evs := append([]pa.AgentEvent{}, events...)
	evMu.Unlock()
	return outcome{state: state, err: perr, events: evs, requests: requests, executed: executed,
		cancelled: cancelled, maxConcurrent: maxC, wall: wall}
}

func armCancel(after any, cancel context.CancelFunc) {
	if after == nil {
		return
	}
	ms := num(after, "cancelAfterMs")
	time.AfterFunc(time.Duration(ms*float64(time.Millisecond)), cancel)
}

// ---------------------------------------------------------------------------------------
// Expectations

func toolMessageMatches(want, got obj) bool {
	if !jsonEq(want["toolCallId"], got["toolCallId"]) {
		return false
	}
	if (want["isError"] == true) != (got["isError"] == true) {
		return false
	}
	content, _ := got["content"].(string)
	if w, ok := want["content"]; ok {
		var parsed any
		if err := json.Unmarshal([]byte(content), &parsed); err != nil {
			parsed = content
		}
		if !jsonEq(w, parsed) {
			return false
		}
	}
	if s, ok := want["contentContains"].(string); ok && !strings.Contains(content, s) {
		return false
	}
	return true
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func checkRequest(i int, want, got obj) {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		w := want[key]
		g := got[key]
		switch key {
		case "toolMessages":
			wl, gl := asList(w), asList(g)
			same := len(wl) == len(gl)
			for j := 0; same && j < len(wl); j++ {
				wm, _ := wl[j].(obj)
				gm, _ := gl[j].(obj)
				same = toolMessageMatches(wm, gm)
			}
			if !same {
				fail("modelRequests[%d].toolMessages: expected %s, got %s", i, show(wl), show(gl))
			}
		case "toolSpecs":
			wl, gl := asList(w), asList(g)
			same := len(wl) == len(gl)
			for j := 0; same && j < len(wl); j++ {
				wm, _ := wl[j].(obj)
				gm, _ := gl[j].(obj)
				for k, v := range wm {
					if !toolSpecKeys[k] || !jsonEq(v, gm[k]) {
						same = false
					}
				}
			}
			if !same {
				fail("modelRequests[%d].toolSpecs: expected %s, got %s", i, show(wl), show(gl))
			}
		case "toolCalls":
			wl, gl := asList(w), asList(g)
			same := len(wl) == len(gl)
			for j := 0; same && j < len(wl); j++ {
				wm, _ := wl[j].(obj)
				gm, _ := gl[j].(obj)
				same = jsonEq(wm["id"], gm["id"]) && jsonEq(wm["name"], gm["name"]) &&
					jsonEq(asJSONValue(wm["arguments"]), asJSONValue(gm["arguments"]))
			}
			if !same {
				fail("modelRequests[%d].toolCalls: expected %s, got %s", i, show(wl), show(gl))
			}
		default:
			diff(fmt.Sprintf("modelRequests[%d].%s", i, key), w, g)
		}
	}
}

// asJSONValue reads a text holding JSON as that JSON (tool call arguments compare as JSON).
func asJSONValue(v any) any {
	if s, ok := v.(string); ok {
		var parsed any
		if json.Unmarshal([]byte(s), &parsed) == nil {
			return parsed
		}
	}
	return v
}

func checkError(want obj, o outcome) {
	var code, message string
	run, _ := o.state["run"].(obj)
	runErr, _ := run["error"].(obj)
	switch {
	case o.err != nil:
		code, message = o.err.Code, o.err.Message
	case runErr != nil:
		code, _ = runErr["code"].(string)
		message, _ = runErr["message"].(string)
	default:
		fail("error: expected %s, got no error", show(want))
	}
	if c, ok := want["code"]; ok && !jsonEq(c, code) {
		fail("error.code: expected %s, got %s (message: %s)", show(c), show(code), message)
	}
	if s, ok := want["messageContains"].(string); ok && !strings.Contains(message, s) {
		fail("error.message: expected to contain %q, got %q", s, message)
	}
}

func stateFields(state obj) obj {
	if state == nil {
		return obj{}
	}
	run, _ := state["run"].(obj)
	pause, _ := run["pause"].(obj)
	pending := []any{}
	var pauseKind any
	if pause != nil {
		pauseKind = pause["kind"]
		for _, p := range asList(pause["pendingToolCalls"]) {
			pm, _ := p.(obj)
			call, _ := pm["call"].(obj)
			pending = append(pending, obj{"toolCallId": call["id"], "toolName": call["name"], "kind": pm["kind"]})
		}
	}
	return obj{"status": run["status"], "output": state["output"], "stopReason": run["stopReason"],
		"pauseKind": pauseKind, "context": run["context"], "pending": pending}
}

func eventsByCall(events []pa.AgentEvent, types map[string]bool, pick func(pa.AgentEvent) any) map[string][]any {
	out := map[string][]any{}
	for _, e := range events {
		if !types[e.Type] {
			continue
		}
		id := text(e.Details["toolCallId"])
		out[id] = append(out[id], pick(e))
	}
	return out
}

func sortedObjKeys(m obj) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func checkExpect(expect obj, o outcome) {
	fields := stateFields(o.state)
	for _, key := range sortedObjKeys(expect) {
		want := expect[key]
		switch key {
		case "status", "output", "stopReason", "pauseKind", "context", "pending":
			diff(key, want, fields[key])
		case "error":
			w, _ := want.(obj)
			checkError(w, o)
		case "executed":
			diff(key, want, o.executed)
		case "cancelled":
			diff(key, want, o.cancelled)
		case "maxConcurrent":
			diff(key, want, o.maxConcurrent)
		case "modelRequests":
			wl := asList(want)
			if len(wl) != len(o.requests) {
				fail("modelRequests: expected %d requests, got %d", len(wl), len(o.requests))
			}
			for i, w := range wl {
				wm, _ := w.(obj)
				checkRequest(i, wm, o.requests[i])
			}
		case "events":
			types := []any{}
			for _, e := range o.events {
				if !strings.HasPrefix(e.Type, "response.") {
					types = append(types, e.Type)
				}
			}
			diff(key, want, types)
		case "toolEvents":
			got := eventsByCall(o.events, toolEventTypes, func(e pa.AgentEvent) any { return e.Type })
			w, _ := want.(obj)
			for _, id := range sortedObjKeys(w) {
				g := got[id]
				if g == nil {
					g = []any{}
				}
				diff("toolEvents."+id, w[id], g)
			}
		case "preliminaryResults":
			got := eventsByCall(o.events, set("tool.preliminary_result"), func(e pa.AgentEvent) any { return e.Details["result"] })
			w, _ := want.(obj)
			for _, id := range sortedObjKeys(w) {
				g := got[id]
				if g == nil {
					g = []any{}
				}
				diff("preliminaryResults."+id, w[id], g)
			}
		case "usage":
			usage, _ := o.state["usage"].(obj)
			w, _ := want.(obj)
			for _, k := range sortedObjKeys(w) {
				var g any
				if usage != nil {
					g = usage[k]
				}
				diff("usage."+k, w[k], g)
			}
		case "minWallMs":
			if ms := float64(o.wall) / float64(time.Millisecond); ms < num(want, key) {
				fail("minWallMs: took %.0f ms, at least %v ms expected", ms, want)
			}
		case "maxWallMs":
			if ms := float64(o.wall) / float64(time.Millisecond); ms > num(want, key) {
				fail("maxWallMs: took %.0f ms, limit %v ms", ms, want)
			}
		default:
			fail("expect: unsupported key %q", key)
		}
	}
	if _, expected := expect["error"]; o.err != nil && !expected {
		fail("unexpected error %s: %s", o.err.Code, o.err.Message)
	}
}

// ---------------------------------------------------------------------------------------
// Cases

func checkCase(c obj) {
	checkKeys(c, caseKeys, "case")
	checkKeys(c["agent"], agentKeys, "agent")
	for _, t := range asList(c["tools"]) {
		checkKeys(t, toolKeys, "tool")
	}
	for _, e := range asList(c["model"]) {
		checkKeys(e, modelEntryKeys, "model entry")
		em, _ := e.(obj)
		for _, call := range asList(em["toolCalls"]) {
			checkKeys(call, set("id", "name", "arguments"), "model entry toolCalls")
		}
	}
	for i, s := range asList(c["steps"]) {
		step, _ := s.(obj)
		if _, ok := step["editState"]; ok {
			checkKeys(step, set("editState"), fmt.Sprintf("step %d", i))
			continue
		}
		checkKeys(step, stepKeys, fmt.Sprintf("step %d", i))
		checkKeys(step["run"], runKeys, fmt.Sprintf("step %d: run", i))
		checkKeys(step["continue"], continueKeys, fmt.Sprintf("step %d: continue", i))
		expect, _ := step["expect"].(obj)
		checkKeys(expect, expectKeys, fmt.Sprintf("step %d: expect", i))
		checkKeys(expect["error"], errorKeys, fmt.Sprintf("step %d: expect.error", i))
		checkKeys(expect["usage"], usageKeys, fmt.Sprintf("step %d: expect.usage", i))
		for _, r := range asList(expect["modelRequests"]) {
			checkKeys(r, requestKeys, fmt.Sprintf("step %d: expect.modelRequests", i))
			rm, _ := r.(obj)
			for _, m := range asList(rm["toolMessages"]) {
				checkKeys(m, toolMessageKeys, fmt.Sprintf("step %d: expect.modelRequests.toolMessages", i))
			}
			for _, c := range asList(rm["toolCalls"]) {
				checkKeys(c, requestCallKeys, fmt.Sprintf("step %d: expect.modelRequests.toolCalls", i))
			}
		}
	}
}

// orderedObject is a JSON object that keeps the order of its keys and the digits of its
// numbers (encoding/json's maps would sort the keys, and a signed state is signed over its
// text as written: a patch must change what it says and nothing else).
type orderedObject struct {
	keys   []string
	values map[string]any
}

func (o *orderedObject) set(key string, v any) {
	if _, ok := o.values[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.values[key] = v
}

func (o *orderedObject) remove(key string) {
	delete(o.values, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			return
		}
	}
}

func (o *orderedObject) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		value, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// decodeOrdered reads one JSON value: objects as *orderedObject, numbers as json.Number.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &orderedObject{values: map[string]any{}}
			for dec.More() {
				keyTok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := keyTok.(string)
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				o.set(key, v)
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token() // ']'
			return list, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}

// jsonPatch applies RFC 6902 add/remove/replace to the state's JSON text, as an attacker
// editing a stored state would: the rest of the text keeps its key order and numbers.
func jsonPatch(textIn string, ops any) string {
	dec := json.NewDecoder(strings.NewReader(textIn))
	dec.UseNumber()
	doc, err := decodeOrdered(dec)
	if err != nil {
		fail("editState: the state is not JSON: %v", err)
	}
	list, ok := ops.([]any)
	if !ok {
		fail("editState must be a list of operations")
	}
	for _, raw := range list {
		checkKeys(raw, set("op", "path", "value"), "editState")
		op, _ := raw.(obj)
		kind, _ := op["op"].(string)
		at, _ := op["path"].(string)
		if at == "" && (kind == "add" || kind == "replace") {
			doc = op["value"]
			continue
		}
		if !strings.HasPrefix(at, "/") {
			fail("editState: bad path %q", at)
		}
		parts := strings.Split(at[1:], "/")
		for i, p := range parts {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		}
		last := parts[len(parts)-1]
		// Walk to the parent, keeping a setter for it (arrays change length).
		var parent any = doc
		var setParent = func(v any) { doc = v }
		for _, p := range parts[:len(parts)-1] {
			switch x := parent.(type) {
			case *orderedObject:
				child, ok := x.values[p]
				if !ok {
					fail("editState: no such path %q", at)
				}
				key := p
				m := x
				setParent = func(v any) { m.values[key] = v }
				parent = child
			case []any:
				idx, err := strconv.Atoi(p)
				if err != nil || idx < 0 || idx >= len(x) {
					fail("editState: no such path %q", at)
				}
				arr := x
				setParent = func(v any) { arr[idx] = v }
				parent = x[idx]
			default:
				fail("editState: no such path %q", at)
			}
		}
		switch x := parent.(type) {
		case *orderedObject:
			_, present := x.values[last]
			switch kind {
			case "add":
				x.set(last, op["value"])
			case "replace", "remove":
				if !present {
					fail("editState: no such path %q", at)
				}
				if kind == "replace" {
					x.set(last, op["value"])
				} else {
					x.remove(last)
				}
			default:
				fail("editState: unsupported op %q", kind)
			}
		case []any:
			idx := len(x)
			if last != "-" {
				n, err := strconv.Atoi(last)
				if err != nil {
					fail("editState: bad index %q", last)
				}
				idx = n
			}
			switch kind {
			case "add":
				if idx > len(x) {
					fail("editState: no such path %q", at)
				}
				x = append(x[:idx], append([]any{op["value"]}, x[idx:]...)...)
				setParent(x)
			case "replace", "remove":
				if idx >= len(x) {
					fail("editState: no such path %q", at)
				}
				if kind == "replace" {
					x[idx] = op["value"]
				} else {
					x = append(x[:idx], x[idx+1:]...)
					setParent(x)
				}
			default:
				fail("editState: unsupported op %q", kind)
			}
		default:
			fail("editState: no such path %q", at)
		}
	}
	data, _ := json.Marshal(doc)
	return string(data)
}

type mode struct {
	stopAfter, fromStep int // -1 = unset
	saveDir, resumeDir  string
}

// runCase runs the case (or its handoff half); false when this mode does not run it.
func runCase(file string, c obj, m mode) (ran bool) {
	steps := asList(c["steps"])
	if steps == nil {
		fail("case without steps")
	}
	fileName := filepath.Base(file)
	state, cursor := "", 0
	from, to := 0, len(steps)
	if m.stopAfter >= 0 {
		if len(steps) <= m.stopAfter {
			return false
		}
		to = m.stopAfter
	} else if m.resumeDir != "" {
		saved := filepath.Join(m.resumeDir, fileName)
		data, err := os.ReadFile(saved)
		if err != nil {
			return false
		}
		var doc struct {
			State       json.RawMessage `json:"state"`
			ModelCursor float64         `json:"modelCursor"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			fail("saved state unreadable: %v", err)
		}
		if _, err := pa.ParseRunResult(string(doc.State)); err != nil {
			fail("saved state refused: %v", err)
		}
		state, cursor, from = string(doc.State), int(doc.ModelCursor), m.fromStep
	}
	checkCase(c)
	obs := newObservations()
	agent, refused := buildAgent(c, obs)
	if want, ok := c["expectDefinitionError"]; ok {
		if m.stopAfter >= 0 || m.resumeDir != "" {
			return false
		}
		w, _ := want.(obj)
		if refused == nil {
			fail("expectDefinitionError: expected %s, but the definition was accepted", show(want))
		}
		if code, ok := w["code"]; ok && !jsonEq(code, refused.Code) {
			fail("expectDefinitionError.code: expected %s, got %s (message: %s)", show(code), show(refused.Code), refused.Message)
		}
		if s, ok := w["messageContains"].(string); ok && !strings.Contains(refused.Message, s) {
			fail("expectDefinitionError.message: expected to contain %q, got %q", s, refused.Message)
		}
		return true
	}
	if refused != nil {
		fail("agent definition refused: %s: %s", refused.Code, refused.Message)
	}
	defer agent.Close()
	entries := asList(c["model"])
	model := &scriptedModel{entries: entries, cursor: cursor}
	run := &caseRun{agent: agent, model: model, obs: obs, state: state, streaming: usesStream(file)}
	for i := from; i < to; i++ {
		step, _ := steps[i].(obj)
		if edit, ok := step["editState"]; ok {
			if run.state == "" {
				fail("step %d: editState without a state", i)
			}
			run.state = jsonPatch(run.state, edit)
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if ce, ok := r.(*caseError); ok {
						panic(&caseError{fmt.Sprintf("step %d: %s", i, ce.msg)})
					}
					panic(&caseError{fmt.Sprintf("step %d: panic: %v", i, r)})
				}
			}()
			o := run.step(step)
			expect, _ := step["expect"].(obj)
			checkExpect(expect, o)
		}()
	}
	if m.saveDir != "" {
		if run.state == "" {
			fail("no state to save")
		}
		model.mu.Lock()
		cur := model.cursor
		model.mu.Unlock()
		doc := fmt.Sprintf(`{"state":%s,"modelCursor":%d}`, run.state, cur)
		_ = os.MkdirAll(m.saveDir, 0o755)
		if err := os.WriteFile(filepath.Join(m.saveDir, fileName), []byte(doc), 0o644); err != nil {
			fail("save: %v", err)
		}
	}
	return true
}

func collect(p string, out *[]string) error {
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		if strings.HasSuffix(p, ".json") {
			*out = append(*out, p)
		}
		return nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return err
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		if err := collect(filepath.Join(p, n), out); err != nil {
			return err
		}
	}
	return nil
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: tests/conformance/go_runner.sh [--stop-after N --save-state DIR | --resume-state DIR --from-step N] PATH...")
	os.Exit(2)
}

func parseArgs(argv []string) (mode, []string) {
	m := mode{stopAfter: -1, fromStep: -1}
	paths := []string{}
	intArg := func(i int) int {
		if i >= len(argv) {
			usage()
		}
		n, err := strconv.Atoi(argv[i])
		if err != nil || n < 0 {
			usage()
		}
		return n
	}
	for i := 0; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "--":
		case a == "--stop-after":
			i++
			m.stopAfter = intArg(i)
		case a == "--save-state":
			i++
			if i >= len(argv) {
				usage()
			}
			m.saveDir = argv[i]
		case a == "--resume-state":
			i++
			if i >= len(argv) {
				usage()
			}
			m.resumeDir = argv[i]
		case a == "--from-step":
			i++
			m.fromStep = intArg(i)
		case strings.HasPrefix(a, "--"):
			usage()
		default:
			paths = append(paths, a)
		}
	}
	stopping := m.stopAfter >= 0 || m.saveDir != ""
	resuming := m.resumeDir != "" || m.fromStep >= 0
	if stopping && (resuming || m.saveDir == "" || m.stopAfter < 1) {
		usage()
	}
	if resuming && (m.resumeDir == "" || m.fromStep < 0) {
		usage()
	}
	if len(paths) == 0 {
		paths = []string{"tests/conformance/cases"}
	}
	return m, paths
}

func main() {
	m, paths := parseArgs(os.Args[1:])
	files := []string{}
	for _, p := range paths {
		if err := collect(p, &files); err != nil {
			fmt.Fprintf(os.Stderr, "no such case file or folder: %s\n", p)
			os.Exit(2)
		}
	}
	passed, failed := 0, 0
	for _, file := range files {
		name := file
		ran, errText := func() (ran bool, errText string) {
			defer func() {
				if r := recover(); r != nil {
					ran = true
					if ce, ok := r.(*caseError); ok {
						errText = ce.msg
					} else {
						errText = fmt.Sprintf("panic: %v", r)
					}
				}
			}()
			data, err := os.ReadFile(file)
			if err != nil {
				return true, err.Error()
			}
			readRawBehaviors(data)
			var c any
			if err := json.Unmarshal(data, &c); err != nil {
				return true, "case is not JSON: " + err.Error()
			}
			co, _ := c.(obj)
			if n, ok := co["name"].(string); ok {
				name = n
			}
			return runCase(file, co, m), ""
		}()
		switch {
		case errText != "":
			failed++
			fmt.Printf("FAIL %s: %s\n", name, errText)
		case ran:
			passed++
			fmt.Printf("PASS %s\n", name)
		}
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
