package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
)

// StreamingModelClient is a model client that can stream (as the product's Go SDK): a
// streamed run (Agent.Stream) calls Stream and hears its deltas, tool input and items
// live, as response.output_text.delta, response.reasoning.delta, tool.input_started,
// tool.input_delta and response.item events; a run that is not streamed calls Generate.
type StreamingModelClient interface {
	ModelClient
	// Stream sends the answer's events and closes the channel; the last event of type
	// "response.completed" (or "response") carries the response. ctx is cancelled when the
	// run stops waiting (cancellation, a timeout): stop sending then.
	Stream(ctx context.Context, request ModelRequest) <-chan ModelStreamEvent
}

// The event types of a model stream (the product's names; "text-delta",
// "reasoning-delta", "tool-input-start", "tool-input-delta", "item" and "response" are
// accepted too).
const (
	StreamTextDelta      = "response.output_text.delta"
	StreamReasoningDelta = "response.reasoning.delta"
	// StreamToolInputStart: the model began writing call ToolCallID's arguments to tool
	// ToolName (docs/behaviour.md §16).
	StreamToolInputStart = "tool.input_started"
	// StreamToolInputDelta: Delta is the next fragment of call ToolCallID's arguments.
	StreamToolInputDelta = "tool.input_delta"
	StreamItem           = "response.item"
	StreamCompleted      = "response.completed"
)

// The run event types of a call's input as the model writes it (docs/behaviour.md §16),
// in streamed runs only: EventToolInputStarted has Details "toolCallId" and "toolName",
// EventToolInputDelta "toolCallId" and "delta" (a call's deltas, in order, make its final
// arguments; all arrive before "model.completed").
const (
	EventToolInputStarted = "tool.input_started"
	EventToolInputDelta   = "tool.input_delta"
)

// ModelStreamEvent is one event of a model stream: a text or reasoning Delta, the start
// of a call's input (ToolCallID, ToolName) or a fragment of it (ToolCallID, Delta), an
// output Item (a JSON-shaped value such as {"type": "message", …}), the final Response,
// or Err, which fails the model request.
type ModelStreamEvent struct {
	Type       string         // one of the Stream* constants
	Delta      string         // the text of a delta
	ToolCallID string         // the call of a tool input event
	ToolName   string         // the tool of a StreamToolInputStart event
	Item       any            // the item of a StreamItem event
	Response   *ModelResponse // the response of a StreamCompleted event
	Err        error          // a failure: the request fails with its message
}

// errStreamNoResponse: a StreamCompleted event needs its Response.
var errStreamNoResponse = errors.New("phaseoagent: a response.completed stream event has no Response")

func (e ModelStreamEvent) toJSON() (map[string]any, error) {
	m := map[string]any{"type": e.Type}
	switch e.Type {
	case StreamTextDelta, StreamReasoningDelta, "text-delta", "reasoning-delta":
		m["delta"] = e.Delta
	case StreamToolInputStart, "tool-input-start":
		m["toolCallId"] = e.ToolCallID
		m["toolName"] = e.ToolName
	case StreamToolInputDelta, "tool-input-delta":
		m["toolCallId"] = e.ToolCallID
		m["delta"] = e.Delta
	case StreamItem, "item":
		m["item"] = e.Item
	case StreamCompleted, "response":
		if e.Response == nil {
			return nil, errStreamNoResponse
		}
		m["response"] = e.Response
	}
	return m, nil
}

// serveStream drains a host client's stream into a Stream call, then completes it.
func serveStream(call *hostCall, client StreamingModelClient) {
	req, err := readRequest(call)
	if err != nil {
		call.fail(err)
		return
	}
	ctx, release := call.cancelContext()
	defer release()
	var events <-chan ModelStreamEvent
	if err := protectErr(func() { events = client.Stream(ctx, req) }); err != nil {
		call.fail(err)
		return
	}
	if events == nil {
		call.fail(errors.New("phaseoagent: Stream returned a nil channel"))
		return
	}
	// Whatever happens below, the sender is never left blocked on the channel.
	defer func() {
		go func() {
			for range events {
			}
		}()
	}()
	for e := range events {
		if e.Err != nil {
			call.fail(e.Err)
			return
		}
		m, err := e.toJSON()
		if err != nil {
			call.fail(err)
			return
		}
		text, err := encodeValue(m)
		if err != nil {
			call.fail(fmt.Errorf("model stream event %q: %w", e.Type, err))
			return
		}
		if err := call.streamEvent(text); err != nil {
			// An invalid event fails the request; when the request is already over (the run
			// stopped waiting), ctx is cancelled and the answer is discarded.
			call.fail(err)
			return
		}
	}
	call.answer(nil)
}

// streamEvent passes one event's JSON to the run.
func (c *hostCall) streamEvent(text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return errCallEnded
	}
	ct := cString(text)
	defer freeC(ct)
	var cerr *C.char
	if C.phaseo_call_stream_event(c.call, ct, &cerr) != C.PHASEO_STATUS_OK {
		err := takeError(cerr)
		if perr, ok := err.(*Error); ok {
			return errors.New(perr.Message)
		}
		return err
	}
	return nil
}

// protectErr runs f, turning a panic into an error.
func protectErr(f func()) error {
	_, err := protect(func() (any, error) { f(); return nil, nil })
	return err
}
