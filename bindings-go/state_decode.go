package phaseoagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

// errShape: the text is not shaped as the decoder expects (ParseRunResult then reads it
// with encoding/json, which names what is wrong).
var errShape = errors.New("unexpected state shape")

// stateDecoder reads a state's JSON text straight into the result types in one pass:
// encoding/json took ~4.5 ms for the state of a 1,000-call run (it validates the whole
// text first, then reflects over every field and skips the items twice). Values (input,
// context, outputs) are read with the SDK's number rules.
type stateDecoder struct{ orderedParser }

func decodeState(text string) (stateView, error) { return decodeStateText(text, false) }

// itemsEnd is the offset of the end of the items of a canonical state's text, written by the
// core (docs/behaviour.md §7: items are the last key but the signature, whose value holds
// neither quotes nor brackets): just after their closing bracket, or -1.
func itemsEnd(text string) int {
	if strings.HasSuffix(text, "]}") {
		return len(text) - 1
	}
	if strings.HasSuffix(text, `"}`) {
		if i := strings.LastIndex(text, `],"signature":"`); i >= 0 {
			return i + 1
		}
	}
	return -1
}

// decodeStateText is decodeState; fromCore: the text is one the core has just written for
// this process (a run's or a stream's end), whose items, the state's largest part (every
// call's input and output once more, no field of RunResult), are passed over in one step
// (itemsEnd) rather than read.
func decodeStateText(text string, fromCore bool) (stateView, error) {
	// The text's own bytes, read only (never written: a string's memory is immutable);
	// what is handed out as bytes (Steps, StepResults) is copied by raws.
	data := unsafe.Slice(unsafe.StringData(text), len(text))
	d := &stateDecoder{orderedParser{data: data, noOrder: true, src: text}}
	var v stateView
	err := d.object(func(key string) error {
		switch key {
		case "run":
			return d.run(&v.Run)
		case "output":
			start := d.at
			if err := d.skip(); err != nil {
				return err
			}
			v.Output = json.RawMessage(d.data[start:d.at])
			v.outputText = text[start:d.at]
			return nil
		case "usage":
			return d.usage(&v.Usage)
		case "steps":
			return d.raws(&v.Steps)
		case "stepResults":
			return d.raws(&v.StepResults)
		case "items":
			if end := itemsEnd(text); fromCore && end > d.at && d.data[d.at] == '[' {
				d.at = end
				return nil
			}
		}
		return d.skip()
	})
	if err == nil {
		d.space()
		if d.at != len(d.data) {
			err = errShape
		}
	}
	return v, err
}

// object reads an object, calling field for each key with the parser on its value.
func (d *stateDecoder) object(field func(key string) error) error {
	d.space()
	if d.at >= len(d.data) || d.data[d.at] != '{' {
		return errShape
	}
	d.at++
	d.space()
	if d.at < len(d.data) && d.data[d.at] == '}' {
		d.at++
		return nil
	}
	for {
		d.space()
		key, err := d.str()
		if err != nil {
			return err
		}
		d.space()
		if d.at >= len(d.data) || d.data[d.at] != ':' {
			return errShape
		}
		d.at++
		d.space()
		if err := field(key); err != nil {
			return err
		}
		d.space()
		if d.at >= len(d.data) {
			return errShape
		}
		switch d.data[d.at] {
		case ',':
			d.at++
		case '}':
			d.at++
			return nil
		default:
			return errShape
		}
	}
}

// array reads an array, calling item with the parser on each element; null is empty.
func (d *stateDecoder) array(item func() error) error {
	d.space()
	if d.null() {
		return nil
	}
	if d.at >= len(d.data) || d.data[d.at] != '[' {
		return errShape
	}
	d.at++
	d.space()
	if d.at < len(d.data) && d.data[d.at] == ']' {
		d.at++
		return nil
	}
	for {
		d.space()
		if err := item(); err != nil {
			return err
		}
		d.space()
		if d.at >= len(d.data) {
			return errShape
		}
		switch d.data[d.at] {
		case ',':
			d.at++
		case ']':
			d.at++
			return nil
		default:
			return errShape
		}
	}
}

// gather reads an array of T into a list of exactly its length: the elements are read
// into a scratch list kept for the next read (it grows only when a list longer than any
// before comes) and copied out once, at their number: grown by doubling, a long turn's
// messages and calls were most of what reading its state allocated, and counting them
// ahead instead (a pass over the array without building it) made the read much slower
// (docs/performance.md, Go).
func gather[T any](d *stateDecoder, kept *scratch[T], item func(*T) error) ([]T, error) {
	held := kept.take()
	list := (*held)[:0]
	err := d.array(func() error {
		var zero T
		list = append(list, zero)
		return item(&list[len(list)-1])
	})
	var out []T
	if err == nil && len(list) > 0 {
		out = make([]T, len(list))
		copy(out, list)
	}
	kept.give(held, list)
	return out, err
}

// scratch is the list gather keeps for one element type: one, taken by one read at a time
// (a read that finds it taken grows a list of its own). Not a sync.Pool: a pool drops
// what it holds at every collection, and the list grown anew by doubling after each one
// was more to collect than the read saved.
type scratch[T any] struct{ list atomic.Pointer[[]T] }

// maxScratch bounds the list a scratch keeps (longer lists are left to the collector).
const maxScratch = 4096

// take is the kept list (a new empty one when none is kept or another read holds it).
func (s *scratch[T]) take() *[]T {
	if held := s.list.Swap(nil); held != nil {
		return held
	}
	return new([]T)
}

// give keeps list in held, cleared (it holds no string or value of the state read), when
// it is not too long and no list is kept.
func (s *scratch[T]) give(held *[]T, list []T) {
	if cap(list) == 0 || cap(list) > maxScratch {
		return
	}
	clear(list)
	*held = list[:0]
	s.list.CompareAndSwap(nil, held)
}

// The scratch lists of gather.
var (
	messageScratch  scratch[Message]
	toolCallScratch scratch[ToolCall]
)

// null consumes a null literal.
func (d *stateDecoder) null() bool {
	if bytes.HasPrefix(d.data[d.at:], []byte("null")) {
		d.at += 4
		return true
	}
	return false
}

// skip passes over one value without building it.
func (d *stateDecoder) skip() error {
	d.space()
	if d.at >= len(d.data) {
		return errShape
	}
	switch c := d.data[d.at]; c {
	case '{', '[':
		depth := 0
		for d.at < len(d.data) {
			switch d.data[d.at] {
			case '"':
				if _, err := d.rawString(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					d.at++
					return nil
				}
			}
			d.at++
		}
		return errShape
	case '"':
		_, err := d.rawString()
		return err
	default:
		_, err := d.value(0)
		return err
	}
}

// rawString passes over a string, returning whether it holds escapes.
func (d *stateDecoder) rawString() (escaped bool, err error) {
	end, escaped := stringEnd(d.data[d.at+1:])
	if end < 0 {
		return false, errShape
	}
	d.at += 1 + end + 1
	return escaped, nil
}

func (d *stateDecoder) text(out *string) error {
	if d.null() {
		*out = ""
		return nil
	}
	s, err := d.str()
	*out = s
	return err
}

func (d *stateDecoder) any(out *any) error {
	v, err := d.value(0)
	*out = v
	return err
}

func (d *stateDecoder) number() (float64, error) {
	v, err := d.value(0)
	switch n := v.(type) {
	case float64:
		return n, err
	case json.Number:
		return strconv.ParseFloat(string(n), 64)
	case nil:
		return 0, err
	}
	return 0, errShape
}

func (d *stateDecoder) integer(out *int) error {
	f, err := d.number()
	*out = int(f)
	return err
}

func (d *stateDecoder) boolean(out *bool) error {
	v, err := d.value(0)
	if b, ok := v.(bool); ok || v == nil {
		*out = b
		return err
	}
	return errShape
}

// raws reads an array as the raw text of its items, slices of one copy of the array's
// text (one allocation rather than one per item; the caller may write to them).
func (d *stateDecoder) raws(out *[]json.RawMessage) error {
	d.space()
	from := d.at
	var spans [][2]int
	err := d.array(func() error {
		start := d.at
		if err := d.skip(); err != nil {
			return err
		}
		spans = append(spans, [2]int{start - from, d.at - from})
		return nil
	})
	if err != nil || spans == nil {
		return err
	}
	text := bytes.Clone(d.data[from:d.at])
	*out = make([]json.RawMessage, len(spans))
	for i, sp := range spans {
		(*out)[i] = json.RawMessage(text[sp[0]:sp[1]:sp[1]])
	}
	return nil
}

func (d *stateDecoder) usage(u *UsageSummary) error {
	if d.null() {
		return nil
	}
	return d.object(func(key string) error {
		switch key {
		case "inputTokens":
			return d.integer(&u.InputTokens)
		case "outputTokens":
			return d.integer(&u.OutputTokens)
		case "cachedTokens":
			return d.integer(&u.CachedTokens)
		case "totalTokens":
			return d.integer(&u.TotalTokens)
		case "cost":
			f, err := d.number()
			u.Cost = f
			return err
		}
		return d.skip()
	})
}

func (d *stateDecoder) toolCall(c *ToolCall) error {
	return d.object(func(key string) error {
		switch key {
		case "id":
			return d.text(&c.ID)
		case "name":
			return d.text(&c.Name)
		case "input":
			return d.any(&c.Input)
		}
		return d.skip()
	})
}

func (d *stateDecoder) message(m *Message) error {
	return d.object(func(key string) error {
		switch key {
		case "role":
			return d.text(&m.Role)
		case "content":
			return d.text(&m.Content)
		case "toolCalls":
			calls, err := gather(d, &toolCallScratch, d.toolCall)
			m.ToolCalls = calls
			return err
		case "toolCallId":
			return d.text(&m.ToolCallID)
		case "name":
			return d.text(&m.Name)
		case "isError":
			return d.boolean(&m.IsError)
		case "reasoning":
			return d.text(&m.Reasoning)
		}
		return d.skip()
	})
}

func (d *stateDecoder) pause(out **HumanPause) error {
	if d.null() {
		return nil
	}
	p := &HumanPause{}
	*out = p
	return d.object(func(key string) error {
		switch key {
		case "id":
			return d.text(&p.ID)
		case "reason":
			return d.text(&p.Reason)
		case "payload":
			return d.any(&p.Payload)
		case "requestedAt":
			return d.text(&p.RequestedAt)
		case "kind":
			return d.text(&p.Kind)
		case "pendingToolCalls":
			return d.array(func() error {
				p.PendingToolCalls = append(p.PendingToolCalls, PendingToolCall{})
				pc := &p.PendingToolCalls[len(p.PendingToolCalls)-1]
				return d.object(func(key string) error {
					switch key {
					case "call":
						return d.toolCall(&pc.Call)
					case "kind":
						return d.text(&pc.Kind)
					case "reason":
						return d.text(&pc.Reason)
					}
					return d.skip()
				})
			})
		}
		return d.skip()
	})
}

func (d *stateDecoder) run(r *RunRecord) error {
	return d.object(func(key string) error {
		switch key {
		case "id":
			return d.text(&r.ID)
		case "agentId":
			return d.text(&r.AgentID)
		case "status":
			return d.text(&r.Status)
		case "input":
			return d.any(&r.Input)
		case "context":
			return d.any(&r.Context)
		case "messages":
			messages, err := gather(d, &messageScratch, d.message)
			r.Messages = messages
			return err
		case "result":
			return d.any(&r.Result)
		case "error":
			if d.null() {
				return nil
			}
			r.Error = &RunError{}
			return d.object(func(key string) error {
				switch key {
				case "code":
					return d.text(&r.Error.Code)
				case "message":
					return d.text(&r.Error.Message)
				}
				return d.skip()
			})
		case "pause":
			return d.pause(&r.Pause)
		case "stopReason":
			return d.text(&r.StopReason)
		case "usage":
			return d.usage(&r.Usage)
		case "createdAt":
			return d.text(&r.CreatedAt)
		case "updatedAt":
			return d.text(&r.UpdatedAt)
		case "stepCount":
			return d.integer(&r.StepCount)
		case "traceparent":
			return d.text(&r.Traceparent)
		case "loadedTools":
			return d.array(func() error {
				r.LoadedTools = append(r.LoadedTools, "")
				return d.text(&r.LoadedTools[len(r.LoadedTools)-1])
			})
		}
		return d.skip()
	})
}
