package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The texts a callback's failure becomes. Every one of them is built here without trusting
// the host's values: an error may be a typed nil or have an Error method that panics, a
// panic value may be a cyclic map (fmt's %v recurses on it until the stack overflows, a
// fatal error no recover catches), and any text may hold bytes that are not UTF-8 (the
// C ABI then refuses the text itself, and an executor's failure would turn into
// tool_output_invalid instead of the tool error docs/behaviour.md §2.7 promises).

// maxPanicText bounds the description of a panic value (the first bytes are enough to
// find the bug; a huge value must not make a huge tool message).
const maxPanicText = 4096

// callbackName names the host function behind a call kind, for the messages of failures
// the function itself cannot word (a typed-nil error, runtime.Goexit).
func callbackName(kind C.enum_PhaseoCallKind) string {
	switch kind {
	case C.PHASEO_CALL_KIND_EXECUTE:
		return "the tool's Execute"
	case C.PHASEO_CALL_KIND_VALIDATE:
		return "the validator"
	case C.PHASEO_CALL_KIND_APPROVE:
		return "the approval function"
	case C.PHASEO_CALL_KIND_TOOL_CALLED:
		return "OnToolCalled"
	case C.PHASEO_CALL_KIND_RESPONSE_RECEIVED:
		return "OnResponseReceived"
	case C.PHASEO_CALL_KIND_NEXT_TURN:
		return "NextTurnFunc"
	case C.PHASEO_CALL_KIND_STOP:
		return "the stop condition"
	case C.PHASEO_CALL_KIND_REVIEW:
		return "HumanReview"
	case C.PHASEO_CALL_KIND_TURN:
		return "the per-turn function"
	case C.PHASEO_CALL_KIND_GENERATE:
		return "the model client's Generate"
	case C.PHASEO_CALL_KIND_MCP_FILTER:
		return "the MCP server's Filter"
	case C.PHASEO_CALL_KIND_MCP_ELICIT:
		return "the MCP server's OnElicitation"
	case C.PHASEO_CALL_KIND_STORE_LOAD:
		return "the state accessor's Load"
	case C.PHASEO_CALL_KIND_STORE_SAVE:
		return "the state accessor's Save"
	case C.PHASEO_CALL_KIND_STREAM:
		return "the model client's Stream"
	}
	return "the callback"
}

// errorText is the message of an error a callback returned.
//
// A typed nil (a nil *MyErr in the error interface) is a failure: the function's own
// `err != nil` is true for it, so it did report an error, and treating it as success
// would hand the core a result the function never meant to give (a nil value where a tool
// result or a validated value was due). Its message says what happened, since its Error
// method cannot be asked. docs/behaviour.md §2.7: an unexpected error of any kind in a
// host callback becomes a tool error like any other, never a crash. The same rule holds
// for every callback kind, as every failure goes through hostCall.fail.
func errorText(err error, who string) string {
	if isNilPointer(err) {
		return "phaseoagent: " + who + " returned a nil " + typeName(err) + " as its error"
	}
	text, panicked, value := callError(err)
	if panicked {
		return "phaseoagent: " + who + " returned an error of type " + typeName(err) +
			" whose Error method panicked: " + describe(value)
	}
	return cleanText(text)
}

// callError calls err.Error, reporting a panic instead of passing it on.
func callError(err error) (text string, panicked bool, value any) {
	defer func() {
		if r := recover(); r != nil {
			panicked, value = true, r
		}
	}()
	return err.Error(), false, nil
}

// isNilPointer reports whether v holds a nil pointer, map, slice, channel or function.
func isNilPointer(v any) bool {
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return r.IsNil()
	}
	return false
}

// typeName is v's dynamic type as Go spells it (*pkg.MyErr).
func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return reflect.TypeOf(v).String()
}

// cleanText makes s a text the C ABI accepts unchanged in meaning: bytes that are not
// UTF-8 become U+FFFD (as encoding/json does in values) and so does NUL, which would end
// the C string early and silently cut the message.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return s
}

// panicText is the message of a recovered panic value.
func panicText(r any) string { return "panic: " + describe(r) }

// describe writes any value for a message, like fmt's %v but bounded: at most
// maxPanicText bytes and a limited depth (so a cyclic map or slice ends), calling only the
// top-level value's Error or String method, under recover. The result is valid UTF-8.
func describe(v any) string {
	d := &describer{}
	switch x := v.(type) {
	case string:
		d.str(x)
	case error:
		if isNilPointer(x) {
			d.str("(" + typeName(x) + ")(nil)")
		} else if text, panicked, _ := callError(x); !panicked {
			d.str(text)
		} else {
			d.value(reflect.ValueOf(v), 0)
		}
	case interface{ String() string }:
		if text, ok := callString(x); ok {
			d.str(text)
		} else {
			d.value(reflect.ValueOf(v), 0)
		}
	default:
		d.value(reflect.ValueOf(v), 0)
	}
	return cleanText(d.text())
}

func callString(s interface{ String() string }) (text string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if isNilPointer(s) {
		return "", false
	}
	return s.String(), true
}

// describer builds describe's text.
type describer struct {
	b    strings.Builder
	full bool
}

const maxDescribeDepth = 6

func (d *describer) text() string {
	if d.full {
		return d.b.String() + "…"
	}
	return d.b.String()
}

// str appends s, up to the size bound.
func (d *describer) str(s string) {
	if d.full {
		return
	}
	if room := maxPanicText - d.b.Len(); len(s) > room {
		s, d.full = s[:room], true
	}
	d.b.WriteString(s)
}

func (d *describer) value(v reflect.Value, depth int) {
	if d.full {
		return
	}
	if !v.IsValid() {
		d.str("<nil>")
		return
	}
	if depth > maxDescribeDepth {
		d.str("…")
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			d.str("<nil>")
			return
		}
		d.value(v.Elem(), depth)
	case reflect.Pointer:
		switch {
		case v.IsNil():
			d.str("<nil>")
		case depth > 0: // as fmt: a nested pointer is its address (and never a cycle)
			d.str("0x" + strconv.FormatUint(uint64(v.Pointer()), 16))
		default:
			d.str("&")
			d.value(v.Elem(), depth+1)
		}
	case reflect.Map:
		d.mapValue(v, depth)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			d.str("[]")
			return
		}
		d.str("[")
		for i := 0; i < v.Len() && !d.full; i++ {
			if i > 0 {
				d.str(" ")
			}
			d.value(v.Index(i), depth+1)
		}
		d.str("]")
	case reflect.Struct:
		d.str("{")
		for i := 0; i < v.NumField() && !d.full; i++ {
			if i > 0 {
				d.str(" ")
			}
			d.value(v.Field(i), depth+1)
		}
		d.str("}")
	case reflect.String:
		d.str(v.String())
	case reflect.Bool:
		d.str(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.str(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.str(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		d.str(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case reflect.Complex64, reflect.Complex128:
		d.str(strconv.FormatComplex(v.Complex(), 'g', -1, 128))
	default: // channels, functions, unsafe pointers
		d.str(v.Type().String())
		if v.IsNil() {
			d.str("(nil)")
		} else {
			d.str("(0x" + strconv.FormatUint(uint64(v.Pointer()), 16) + ")")
		}
	}
}

// mapValue writes a map as fmt does (map[k:v …]), keys sorted by their text.
func (d *describer) mapValue(v reflect.Value, depth int) {
	if v.IsNil() {
		d.str("map[]")
		return
	}
	type entry struct {
		key string
		val reflect.Value
	}
	entries := make([]entry, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		k := &describer{}
		k.value(it.Key(), maxDescribeDepth) // keys: scalars in practice; never deep
		entries = append(entries, entry{k.text(), it.Value()})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
	d.str("map[")
	for i, e := range entries {
		if d.full {
			break
		}
		if i > 0 {
			d.str(" ")
		}
		d.str(e.key)
		d.str(":")
		d.value(e.val, depth+1)
	}
	d.str("]")
}
