package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/cgo"
	"strconv"
	"strings"
)

// started is a run the core is running, with what must stay alive until it ends.
type started struct {
	run  *C.PhaseoRun
	host *runHost
	// runHandle is the run host's cgo.Handle: a tool call of this run names it.
	runHandle uintptr
	keep      []any
}

// prepared is what every entry point builds: the options JSON, the run host, the client.
type prepared struct {
	options string
	host    *runHost
	handle  cgo.Handle
	client  *C.PhaseoClient
	store   *C.PhaseoStore
	keep    []any
	release func()
}

// prepare builds a run's options and host; ctx is the caller's, the parent of the run's
// tool calls' contexts.
func (a *Agent) prepare(ctx context.Context, m map[string]any, o *RunOverrides, client ModelClient, store *RunStore, onEvent EventHandler) (*prepared, error) {
	h := newRunHost(ctx, onEvent)
	o.apply(m, &h.callbacks)
	text, err := encodeValue(m)
	if err != nil {
		return nil, definitionError("Invalid run options: %v", err)
	}
	ptr, keepClient, release, err := clientFor(client)
	if err != nil {
		return nil, err
	}
	p := &prepared{options: text, host: h, client: ptr, release: release, keep: []any{keepClient}}
	if store != nil {
		p.store = store.ptr
		p.keep = append(p.keep, store)
	}
	p.handle = cgo.NewHandle(h)
	return p, nil
}

// cHandle is the run host's handle, from which the bridge makes the run's PhaseoHost
// (bridge.h says why Go never holds one), and whether the host takes the run's events.
func (p *prepared) cHandle() (C.uintptr_t, C.bool) {
	return C.uintptr_t(p.handle), C.bool(p.host.events != nil)
}

// live returns the agent's handle with the read lock held (the caller unlocks once the
// core has taken what it needs from the handle), or an error when the agent is closed.
func (a *Agent) live() (*C.PhaseoAgent, error) {
	a.mu.RLock()
	if a.ptr == nil {
		a.mu.RUnlock()
		return nil, &Error{Code: CodeInvalidArgument, Message: "the agent was closed"}
	}
	return a.ptr, nil
}

// Run runs the agent until it completes, stops, pauses (status "waiting_for_human"),
// fails or is cancelled. Cancelling ctx cancels the run: it ends "cancelled" and is
// returned without error. A failed run returns an *Error whose Result is its state.
func (a *Agent) Run(ctx context.Context, o RunOptions) (RunResult, error) {
	m, err := runJSON(&o)
	if err != nil {
		return RunResult{}, err
	}
	store, err := storeFor(o.Store, o.Accessor, o.State)
	if err != nil {
		return RunResult{}, err
	}
	p, err := a.prepare(ctx, m, &o.RunOverrides, o.Client, store, o.OnEvent)
	if err != nil {
		return RunResult{}, err
	}
	s, err := a.start(p, func(agent *C.PhaseoAgent, opts *C.char, run **C.PhaseoRun, e **C.char) C.enum_PhaseoStatus {
		handle, events := p.cHandle()
		return C.phaseo_go_run_driven(agent, opts, p.client, p.store, handle, events, run, e)
	})
	if err != nil {
		return RunResult{}, err
	}
	return s.wait(ctx)
}

// runJSON is a run's options (without the overrides), its values written and checked.
func runJSON(o *RunOptions) (map[string]any, error) {
	input, err := callerValue("run input", o.Input, maxValueDepth)
	if err != nil {
		return nil, err
	}
	m := map[string]any{"input": input}
	if o.Messages != nil {
		// Checked by the core, call input by call input (each may be 64 levels deep).
		if m["messages"], err = callerValue("run messages", o.Messages, 0); err != nil {
			return nil, err
		}
	}
	if o.Context != nil {
		if m["context"], err = callerValue("run context", o.Context, maxValueDepth); err != nil {
			return nil, err
		}
	}
	if o.Traceparent != "" {
		m["traceparent"] = o.Traceparent
	}
	putToolExecution(m, o.ToolExecution)
	return m, nil
}

// callerValue writes one of the caller's own values of a run or continue (its input,
// context, messages, a supplied output) as JSON. A value JSON cannot hold (NaN, a cycle,
// a channel, a MarshalJSON that fails), or one nested past the value limit, is refused as
// the core refuses a value past its limits: state_invalid, "Invalid <what>: <reason>",
// before anything runs (a refused continue leaves its state current). maxDepth 0 leaves
// the depth to the core.
func callerValue(what string, v any, maxDepth int) (any, error) {
	if v == nil {
		return nil, nil
	}
	text, err := encodeValue(v)
	if err != nil {
		return nil, &Error{Code: CodeStateInvalid, Message: "Invalid " + what + ": " + cleanText(err.Error())}
	}
	if msg := unreadableNumber(text); msg != "" {
		return nil, &Error{Code: CodeStateInvalid, Message: "Invalid " + what + ": " + msg}
	}
	if msg := unpairedSurrogate(text); msg != "" {
		return nil, &Error{Code: CodeStateInvalid, Message: "Invalid " + what + ": " + msg}
	}
	if maxDepth > 0 && jsonDepth(text) > maxDepth {
		return nil, &Error{Code: CodeStateInvalid, Message: fmt.Sprintf("Invalid %s: value is nested more than %d levels deep", what, maxDepth)}
	}
	return json.RawMessage(text), nil
}

// maxValueDepth is the core's limit on a value's nesting (docs/behaviour.md §7).
const maxValueDepth = 64

// unreadableNumber names the first number of a JSON text the core cannot read (an
// integer past 64 bits, a number past a 64-bit float's range), "" when there is none.
// encoding/json writes such numbers from a json.Number or a MarshalJSON.
func unreadableNumber(text string) string {
	inString := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(text) && strings.IndexByte("+-0123456789.eE", text[j]) >= 0 {
				j++
			}
			token := text[i:j]
			i = j - 1
			if strings.ContainsAny(token, ".eE") {
				if f, err := strconv.ParseFloat(token, 64); err != nil && (math.IsInf(f, 0) || !errors.Is(err, strconv.ErrRange)) {
					return "number " + token + " is out of range"
				}
			} else if _, err := strconv.ParseInt(token, 10, 64); err != nil {
				if _, err := strconv.ParseUint(token, 10, 64); err != nil {
					return "integer " + token + " does not fit in 64 bits"
				}
			}
		}
	}
	return ""
}

// unpairedSurrogate names the first `\uXXXX` escape of a JSON text that is half of a UTF-16
// surrogate pair without its other half, "" when there is none: encoding/json passes such
// an escape through from a MarshalJSON or json.RawMessage, and it is no text the core reads.
func unpairedSurrogate(text string) string {
	if !strings.Contains(text, `\u`) {
		return ""
	}
	escape := func(i int) (rune, bool) {
		if i+6 > len(text) || text[i] != '\\' || text[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(text[i+2:i+6], 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '\\' {
			continue
		}
		r, ok := escape(i)
		if !ok {
			i++ // another escape: skip its character
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if low, ok := escape(i + 6); ok && low >= 0xDC00 && low <= 0xDFFF {
				i += 11
				continue
			}
			return "text holds an unpaired UTF-16 surrogate " + text[i:i+6]
		case r >= 0xDC00 && r <= 0xDFFF:
			return "text holds an unpaired UTF-16 surrogate " + text[i:i+6]
		}
		i += 5
	}
	return ""
}

// jsonDepth is the deepest nesting of arrays and objects in a JSON text.
func jsonDepth(text string) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

func continueJSON(o *ContinueOptions) (map[string]any, error) {
	m := map[string]any{}
	for _, d := range []struct {
		key  string
		list []ToolDecision
	}{{"approvals", o.Approvals}, {"rejections", o.Rejections}} {
		if d.list == nil {
			continue
		}
		list, err := decisionsJSON(d.list)
		if err != nil {
			return nil, err
		}
		m[d.key] = list
	}
	for _, outs := range []struct {
		key  string
		list []ToolOutput
	}{{"toolOutputs", o.ToolOutputs}, {"responses", o.Responses}} {
		if outs.list == nil {
			continue
		}
		list, err := outputsJSON(outs.list)
		if err != nil {
			return nil, err
		}
		m[outs.key] = list
	}
	if o.HumanInput != "" {
		m["humanInput"] = o.HumanInput
	}
	if o.Context != nil {
		ctx, err := callerValue("continue context", o.Context, maxValueDepth)
		if err != nil {
			return nil, err
		}
		m["context"] = ctx
	}
	if o.Traceparent != "" {
		m["traceparent"] = o.Traceparent
	}
	putToolExecution(m, o.ToolExecution)
	return m, nil
}

// outputsJSON is a continue's toolOutputs or responses list.
func outputsJSON(list []ToolOutput) ([]any, error) {
	outs := make([]any, 0, len(list))
	for _, t := range list {
		out, err := callerValue("tool output for "+cleanText(t.ToolCallID), t.Output, maxValueDepth)
		if err != nil {
			return nil, err
		}
		outs = append(outs, map[string]any{"toolCallId": t.ToolCallID, "output": out})
	}
	return outs, nil
}

// stateArgs are the state text (or NULL) and run id (or NULL) of a continue.
func stateArgs(o *ContinueOptions) (state, runID *C.char, err error) {
	if text := o.Run.JSON(); text != "" {
		return cString(text), nil, nil
	}
	switch {
	case o.StateJSON != "":
		return cString(o.StateJSON), nil, nil
	case o.RunID != "":
		return nil, cString(o.RunID), nil
	default:
		return nil, nil, &Error{Code: CodeStateInvalid, Message: "ContinueOptions needs Run (a state produced by a run or ParseRunResult), StateJSON (its JSON text) or RunID"}
	}
}

// Continue continues a paused run (docs/behaviour.md §4). A refused continue (a missing decision, an
// unknown call id, a run that is not waiting…) returns an *Error with code
// continue_invalid (state_invalid for a bad state) and no Result: the state given is
// still current.
func (a *Agent) Continue(ctx context.Context, o ContinueOptions) (RunResult, error) {
	store, err := storeFor(o.Store, o.Accessor, o.State)
	if err != nil {
		return RunResult{}, err
	}
	m, err := continueJSON(&o)
	if err != nil {
		return RunResult{}, err
	}
	p, err := a.prepare(ctx, m, &o.RunOverrides, o.Client, store, o.OnEvent)
	if err != nil {
		return RunResult{}, err
	}
	state, runID, err := stateArgs(&o)
	if err != nil {
		p.abandon()
		return RunResult{}, err
	}
	defer freeC(state)
	defer freeC(runID)
	s, err := a.start(p, func(agent *C.PhaseoAgent, opts *C.char, run **C.PhaseoRun, e **C.char) C.enum_PhaseoStatus {
		handle, events := p.cHandle()
		return C.phaseo_go_continue_driven(agent, state, runID, opts, p.client, p.store, handle, events, run, e)
	})
	if err != nil {
		return RunResult{}, err
	}
	return s.wait(ctx)
}

// Recover continues a stored run whose worker died (its lease expired) from its last
// checkpoint (docs/behaviour.md §10). Only Client, Store, OnEvent, Traceparent, ToolExecution and the
// overrides of o are used.
func (a *Agent) Recover(ctx context.Context, runID string, o ContinueOptions) (RunResult, error) {
	m := map[string]any{}
	if o.Traceparent != "" {
		m["traceparent"] = o.Traceparent
	}
	putToolExecution(m, o.ToolExecution)
	p, err := a.prepare(ctx, m, &o.RunOverrides, o.Client, o.Store, o.OnEvent)
	if err != nil {
		return RunResult{}, err
	}
	id := cString(runID)
	defer freeC(id)
	s, err := a.start(p, func(agent *C.PhaseoAgent, opts *C.char, run **C.PhaseoRun, e **C.char) C.enum_PhaseoStatus {
		handle, events := p.cHandle()
		return C.phaseo_go_recover_driven(agent, id, opts, p.client, p.store, handle, events, run, e)
	})
	if err != nil {
		return RunResult{}, err
	}
	return s.wait(ctx)
}

// abandon releases what prepare made when nothing was started.
func (p *prepared) abandon() {
	p.handle.Delete()
	p.release()
}

func (a *Agent) start(p *prepared, call func(*C.PhaseoAgent, *C.char, **C.PhaseoRun, **C.char) C.enum_PhaseoStatus) (*started, error) {
	agent, err := a.live()
	if err != nil {
		p.abandon()
		return nil, err
	}
	defer a.mu.RUnlock()
	opts := cString(p.options)
	defer freeC(opts)
	s := &started{host: p.host, runHandle: uintptr(p.handle), keep: append(p.keep, a)}
	// The core takes the run host (its release deletes the handle), also on failure.
	var run *C.PhaseoRun
	_, err = status(func(e **C.char) C.enum_PhaseoStatus { return call(agent, opts, &run, e) })
	s.run = run
	p.release()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// wait drives the run to its end (drive), cancelling it when ctx is done. From then on the
// core no longer waits for the event handler: the run returns as its cancellation ends it,
// once the handler took the last events or abandonGrace passed.
func (s *started) wait(ctx context.Context) (RunResult, error) {
	if err := s.drive(ctx); err != nil {
		C.phaseo_run_free(s.run)
		runtime.KeepAlive(s.keep)
		return RunResult{}, err
	}
	var native *C.PhaseoState
	_, err := status(func(e **C.char) C.enum_PhaseoStatus {
		return C.phaseo_run_take_state(s.run, &native, nil, e)
	})
	C.phaseo_run_free(s.run)
	runtime.KeepAlive(s.keep)
	if err != nil {
		return RunResult{}, err
	}
	return resultOfNative(native)
}
