package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync"
)

// StreamResult is a streamed run: its events as they happen (replayable: every call of
// Events starts from the first event), its text deltas, and its result.
type StreamResult struct {
	mu       sync.Mutex
	cond     *sync.Cond
	events   []AgentEvent
	ended    bool
	result   RunResult
	err      error
	ptr      *C.PhaseoStream
	keep     []any
	delivery *eventDelivery // the OnEvent handler's, nil without one
}

// Stream starts a streamed run. Cancelling ctx (or calling Cancel) cancels the run.
// RunOptions.OnEvent also receives every event.
func (a *Agent) Stream(ctx context.Context, o RunOptions) *StreamResult {
	m, err := runJSON(&o)
	if err != nil {
		return failedStream(err)
	}
	store, err := storeFor(o.Store, o.Accessor, o.State)
	if err != nil {
		return failedStream(err)
	}
	return a.stream(ctx, m, &o.RunOverrides, o.Client, store, o.OnEvent, nil, nil)
}

// ContinueStream continues a paused run as a stream (see Continue).
func (a *Agent) ContinueStream(ctx context.Context, o ContinueOptions) *StreamResult {
	state, runID, err := stateArgs(&o)
	if err != nil {
		return failedStream(err)
	}
	defer freeC(state)
	defer freeC(runID)
	store, err := storeFor(o.Store, o.Accessor, o.State)
	if err != nil {
		return failedStream(err)
	}
	m, err := continueJSON(&o)
	if err != nil {
		return failedStream(err)
	}
	return a.stream(ctx, m, &o.RunOverrides, o.Client, store, o.OnEvent, state, runID)
}

func failedStream(err error) *StreamResult {
	s := &StreamResult{ended: true, err: err}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (a *Agent) stream(ctx context.Context, m map[string]any, o *RunOverrides, client ModelClient, store *RunStore, onEvent EventHandler, state, runID *C.char) *StreamResult {
	p, err := a.prepare(ctx, m, o, client, store, nil)
	if err != nil {
		return failedStream(err)
	}
	agent, err := a.live()
	if err != nil {
		p.abandon()
		return failedStream(err)
	}
	defer a.mu.RUnlock()
	opts := cString(p.options)
	defer freeC(opts)
	s := &StreamResult{keep: append(p.keep, a)}
	s.cond = sync.NewCond(&s.mu)
	var ptr *C.PhaseoStream
	_, err = status(func(e **C.char) C.enum_PhaseoStatus {
		if state != nil || runID != nil {
			handle, events := p.cHandle()
			return C.phaseo_go_continue_stream(agent, state, runID, opts, p.client, p.store, handle, events, &ptr, e)
		}
		handle, events := p.cHandle()
		return C.phaseo_go_stream(agent, opts, p.client, p.store, handle, events, &ptr, e)
	})
	s.ptr = ptr
	p.release()
	if err != nil {
		return failedStream(err)
	}
	if onEvent != nil {
		s.delivery = newEventDelivery(onEvent)
	}
	go s.pump()
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				s.Cancel()
			case <-s.doneChan():
			}
		}()
	}
	return s
}

func (s *StreamResult) doneChan() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		s.mu.Lock()
		for !s.ended {
			s.cond.Wait()
		}
		s.mu.Unlock()
		close(ch)
	}()
	return ch
}

// pump pulls the events from the core until the run ends. The OnEvent handler sees each
// event before it is published to Events; once the stream is cancelled, the pump no
// longer waits for the handler (see eventDelivery), so Result returns as the run ends.
func (s *StreamResult) pump() {
	for {
		var out *C.char
		st, err := status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_stream_next(s.ptr, &out, e) })
		if err != nil || st != C.PHASEO_STATUS_OK {
			break
		}
		event := parseEvent(takeString(out))
		if s.delivery != nil {
			s.delivery.deliver(event)
		}
		s.mu.Lock()
		s.events = append(s.events, event)
		s.cond.Broadcast()
		s.mu.Unlock()
	}
	if s.delivery != nil {
		s.delivery.waitIdle(abandonGrace) // returns at once unless the stream was cancelled
	}
	var out *C.char
	_, err := status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_stream_result(s.ptr, &out, e) })
	var result RunResult
	if err == nil {
		result, err = parseCoreState(takeString(out))
	}
	s.mu.Lock()
	s.result, s.err, s.ended = result, err, true
	C.phaseo_stream_free(s.ptr)
	s.ptr = nil
	s.cond.Broadcast()
	s.mu.Unlock()
	runtime.KeepAlive(s.keep)
}

// Cancel cancels the run (it ends "cancelled"). From then on the stream no longer waits
// for the OnEvent handler: Result returns as the run ends, even if the handler blocks.
func (s *StreamResult) Cancel() {
	if s.delivery != nil {
		s.delivery.abandon()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr != nil {
		C.phaseo_stream_cancel(s.ptr)
	}
}

// Result waits for the run's result (a failed run gives its *Error, with Result).
func (s *StreamResult) Result() (RunResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.ended {
		s.cond.Wait()
	}
	return s.result, s.err
}

// Events returns a channel of every event from the first, closed after the last.
func (s *StreamResult) Events() <-chan AgentEvent {
	out := make(chan AgentEvent)
	go func() {
		defer close(out)
		for i := 0; ; i++ {
			s.mu.Lock()
			for i >= len(s.events) && !s.ended {
				s.cond.Wait()
			}
			if i >= len(s.events) {
				s.mu.Unlock()
				return
			}
			e := s.events[i]
			s.mu.Unlock()
			out <- e
		}
	}()
	return out
}

// Text returns a channel of the model's text deltas (from the first), closed at the end.
func (s *StreamResult) Text() <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		for e := range s.Events() {
			if e.Type == "response.output_text.delta" {
				if d, ok := e.Details["delta"].(string); ok {
					out <- d
				}
			}
		}
	}()
	return out
}
