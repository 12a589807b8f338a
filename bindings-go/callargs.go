package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import "bytes"

// runtimeArgs is the runtime argument of a tool-side call ({runId, agentId, stepIndex,
// context, toolCall, attempt, idempotencyKey}), read straight into fields: building maps for it (and for its
// toolCall) was most of a trivial call's allocations.
type runtimeArgs struct {
	runID, agentID string
	stepIndex      int
	context        any
	call           ToolCall
	attempt        int
	idempotencyKey string
}

// hasRuntime reports whether a call of this kind gets [value, runtime] arguments.
func hasRuntime(kind C.enum_PhaseoCallKind) bool {
	switch kind {
	case C.PHASEO_CALL_KIND_EXECUTE, C.PHASEO_CALL_KIND_APPROVE, C.PHASEO_CALL_KIND_TOOL_CALLED,
		C.PHASEO_CALL_KIND_RESPONSE_RECEIVED, C.PHASEO_CALL_KIND_NEXT_TURN:
		return true
	}
	return false
}

// decodeCallArgs reads a call's argument array into c.args, c.rt and c.order; with
// runtime, the array is [value, runtime] and the runtime is read apart (args holds the
// value only). Objects keep their key order (keyOrder), the runtime's context and call
// input included. A tool-side call's args and runtime live in the hostCall itself (its
// argBuf and rtBuf): one allocation per call instead of three.
func (c *hostCall) decodeCallArgs(data []byte, runtime bool) error {
	list, rt, order, err := decodeCallArgsInto(data, runtime, &c.rtBuf, &c.argBuf, c.orderBuf[:])
	c.args, c.rt, c.order = list, rt, order
	return err
}

// decodeCallArgsInto is decodeCallArgs writing the runtime to rt, the value to first[0]
// (the returned args slice is first[:1]) and the key order from order[:0] on.
func decodeCallArgsInto(data []byte, runtime bool, rt *runtimeArgs, first *[1]any, order keyOrder) ([]any, *runtimeArgs, keyOrder, error) {
	if !runtime {
		v, order, err := decodeOrdered(data)
		list, ok := v.([]any)
		if err == nil && !ok {
			err = errShape
		}
		return list, nil, order, err
	}
	// The key order of a call's objects starts in the hostCall (order): the arguments'
	// object is usually the only one.
	d := &stateDecoder{orderedParser{data: data, src: string(data), order: order[:0]}}
	d.space()
	if d.at >= len(d.data) || d.data[d.at] != '[' {
		return nil, nil, nil, errShape
	}
	d.at++
	start := d.at
	value, err := d.value(0)
	if err != nil {
		return nil, nil, nil, err
	}
	firstText := bytes.TrimSpace(d.data[start:d.at])
	d.space()
	if d.at >= len(d.data) || d.data[d.at] != ',' {
		return nil, nil, nil, errShape
	}
	d.at++
	*rt = runtimeArgs{}
	err = d.object(func(key string) error {
		switch key {
		case "runId":
			return d.text(&rt.runID)
		case "agentId":
			return d.text(&rt.agentID)
		case "stepIndex":
			return d.integer(&rt.stepIndex)
		case "context":
			return d.any(&rt.context)
		case "attempt":
			return d.integer(&rt.attempt)
		case "idempotencyKey":
			return d.text(&rt.idempotencyKey)
		case "toolCall":
			return d.object(func(key string) error {
				switch key {
				case "id":
					return d.text(&rt.call.ID)
				case "name":
					return d.text(&rt.call.Name)
				case "input":
					// Usually the same text as the first argument: the same value then.
					at := d.at
					if err := d.skip(); err != nil {
						return err
					}
					if bytes.Equal(d.data[at:d.at], firstText) {
						rt.call.Input = value
						return nil
					}
					d.at = at
					return d.any(&rt.call.Input)
				}
				return d.skip()
			})
		}
		return d.skip()
	})
	if err != nil {
		return nil, nil, nil, err
	}
	d.space()
	if d.at >= len(d.data) || d.data[d.at] != ']' {
		return nil, nil, nil, errShape
	}
	d.at++
	d.space()
	if d.at != len(d.data) {
		return nil, nil, nil, errShape
	}
	first[0] = value
	return first[:], rt, d.order, nil
}
