package phaseoagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"unsafe"
)

// decodeValue reads a JSON value the core sent. Objects become map[string]any, arrays
// []any, and numbers float64 when float64 holds them exactly (every non-integer, and
// integers up to 2^53 in magnitude); larger integers stay json.Number, so a 64-bit id
// round-trips unchanged (docs/behaviour.md §7: values are stored and read back without loss).
func decodeValue(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return normalizeNumbers(v), nil
}

const maxExactInt = 1 << 53

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			x[k] = normalizeNumbers(item)
		}
		return x
	case []any:
		for i, item := range x {
			x[i] = normalizeNumbers(item)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			if i >= -maxExactInt && i <= maxExactInt {
				return float64(i)
			}
			return x
		}
		if f, err := x.Float64(); err == nil && !math.IsInf(f, 0) {
			if bytes.ContainsAny([]byte(x), ".eE") {
				return f
			}
		}
		return x
	default:
		return v
	}
}

// encodeValue writes a Go value as JSON text for the core. Host code runs inside it (a
// MarshalJSON, the Error method of the error a MarshalJSON returned): a panic there is an
// encoding error naming it, never a panic out of the SDK.
func encodeValue(v any) (text string, err error) {
	if text, ok := encodeScalar(v); ok {
		return text, nil
	}
	var buf bytes.Buffer
	if err := encodeInto(&buf, v); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// encodeInto is encodeValue's encoding/json path, writing the text (without a trailing
// newline) to buf.
func encodeInto(buf *bytes.Buffer, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errorString("value is not JSON-compatible: writing it panicked: " + describe(r))
		}
	}()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("value is not JSON-compatible: %w", err)
	}
	buf.Truncate(len(bytes.TrimRight(buf.Bytes(), "\n")))
	return nil
}

// encodeScalar writes the common scalar results without encoding/json's reflection (the
// core reads any JSON number form); ok is false for every other value, and for NaN and
// infinities (which encoding/json refuses with its own message).
func encodeScalar(v any) (string, bool) {
	var room [32]byte
	b, ok := appendScalar(room[:0], v)
	return string(b), ok
}

// appendScalar is encodeScalar appending the text to dst.
func appendScalar(dst []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, x), true
	case int:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int64:
		return strconv.AppendInt(dst, x, 10), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return dst, false
		}
		return strconv.AppendFloat(dst, x, 'g', -1, 64), true
	}
	return dst, false
}

// Decode converts a JSON-shaped value (a tool's input, an output, the context) into
// target, a pointer to any type encoding/json can fill (a struct, a map, a slice).
//
//	var args struct{ Env string `json:"env"` }
//	if err := phaseoagent.Decode(input, &args); err != nil { return nil, err }
func Decode(value any, target any) error {
	data, err := json.Marshal(value)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, target)
}

// keyOrder remembers the key order of the objects decoded for one call (a Go map has
// none): when the call's answer contains one of those maps (an executor returning its
// input, or the context), its keys are written back in the order the core sent them, so
// user data keeps its order across the binding. Keys the host added come after, sorted.
// The maps are kept alive by the call's arguments, so their addresses stay unique.
type keyOrder []orderedKeys

// orderedKeys are the keys of one decoded object (a call has a handful: a slice is
// cheaper than a map to build, and is searched only when an answer holds a map).
type orderedKeys struct {
	m    uintptr
	keys []string
}

func (o keyOrder) lookup(m uintptr) ([]string, bool) {
	for _, e := range o {
		if e.m == m {
			return e.keys, true
		}
	}
	return nil, false
}

// decodeText is decodeValue for a value the core wrote (a state's output), read by the
// parser of decodeOrdered without the key order: its strings are parts of text (no copy),
// and no encoding/json decoder is made for it (most of the decoding of a short run's state).
func decodeText(text string) (any, error) {
	p := &orderedParser{data: unsafe.Slice(unsafe.StringData(text), len(text)), noOrder: true, src: text}
	return p.whole()
}

// decodeOrdered is decodeValue recording the key order of every object. It reads the
// core's JSON text with a small recursive parser (encoding/json's token reader was the
// largest cost of a tool call); strings with escapes are unquoted by encoding/json.
func decodeOrdered(data []byte) (any, keyOrder, error) {
	p := &orderedParser{data: data, src: string(data)}
	v, err := p.whole()
	if err != nil {
		return nil, nil, err
	}
	return v, p.order, nil
}

// whole reads the parser's text as exactly one value (white space around it allowed).
func (p *orderedParser) whole() (any, error) {
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.at != len(p.data) {
		return nil, fmt.Errorf("unexpected text after the value at offset %d", p.at)
	}
	return v, nil
}

type orderedParser struct {
	data    []byte
	at      int
	order   keyOrder
	noOrder bool // plain values (a state's fields): no key order kept
	// src, when set, is data as one Go string: the strings read are its substrings, with no
	// allocation of their own (a state's thousands of ids, names and contents; a call's
	// ids), at the price of keeping src alive as long as any of them.
	src string
}

func (p *orderedParser) remember(m map[string]any, keys []string) {
	if !p.noOrder {
		p.order = append(p.order, orderedKeys{reflect.ValueOf(m).Pointer(), keys})
	}
}

func (p *orderedParser) space() {
	for p.at < len(p.data) {
		switch p.data[p.at] {
		case ' ', '\t', '\n', '\r':
			p.at++
		default:
			return
		}
	}
}

func (p *orderedParser) fail(what string) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.at, what)
}

func (p *orderedParser) value(depth int) (any, error) {
	if depth > 1000 {
		return nil, p.fail("nested too deeply")
	}
	p.space()
	if p.at >= len(p.data) {
		return nil, p.fail("unexpected end")
	}
	switch c := p.data[p.at]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == 't' && bytes.HasPrefix(p.data[p.at:], []byte("true")):
		p.at += 4
		return true, nil
	case c == 'f' && bytes.HasPrefix(p.data[p.at:], []byte("false")):
		p.at += 5
		return false, nil
	case c == 'n' && bytes.HasPrefix(p.data[p.at:], []byte("null")):
		p.at += 4
		return nil, nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.at
		for p.at < len(p.data) && numberByte(p.data[p.at]) {
			p.at++
		}
		digits := p.data[start:p.at]
		if i, ok := smallInt(digits); ok {
			if i >= 0 && i < int64(len(boxedInts)) {
				return boxedInts[i], nil
			}
			return float64(i), nil
		}
		n := json.Number(digits)
		if _, err := n.Float64(); err != nil {
			var ne *strconv.NumError
			if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
				return nil, p.fail("bad number")
			}
		}
		return normalizeNumbers(n), nil
	}
	return nil, p.fail("unexpected character")
}

// numberByte is whether c can be part of a JSON number's text (what strconv then checks).
func numberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// boxedInts are the numbers 0–255 as interface values: boxing a float64 allocates, and
// small counts, indexes and flags are most of the numbers of tool arguments.
var boxedInts = func() (b [256]any) {
	for i := range b {
		b[i] = float64(i)
	}
	return b
}()

// smallInt reads an integer literal of at most 15 digits (exact as a float64).
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 15 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func (p *orderedParser) object(depth int) (any, error) {
	p.at++
	m := map[string]any{}
	var keys []string
	p.space()
	if p.at < len(p.data) && p.data[p.at] == '}' {
		p.at++
		p.remember(m, keys)
		return m, nil
	}
	for {
		p.space()
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.at >= len(p.data) || p.data[p.at] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.at++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		// The key order only where it is kept (a state's values keep none): no lookup for
		// a duplicate otherwise.
		if !p.noOrder {
			if _, dup := m[k]; !dup {
				if keys == nil {
					// Room for a typical small object's keys at once: appending from nil
					// allocated twice for two keys.
					keys = make([]string, 0, 4)
				}
				keys = append(keys, k)
			}
		}
		m[k] = v
		p.space()
		if p.at >= len(p.data) {
			return nil, p.fail("unexpected end")
		}
		switch p.data[p.at] {
		case ',':
			p.at++
		case '}':
			p.at++
			p.remember(m, keys)
			return m, nil
		default:
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

func (p *orderedParser) array(depth int) (any, error) {
	p.at++
	list := []any{}
	p.space()
	if p.at < len(p.data) && p.data[p.at] == ']' {
		p.at++
		return list, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
		p.space()
		if p.at >= len(p.data) {
			return nil, p.fail("unexpected end")
		}
		switch p.data[p.at] {
		case ',':
			p.at++
		case ']':
			p.at++
			return list, nil
		default:
			return nil, p.fail("expected ',' or ']'")
		}
	}
}

func (p *orderedParser) str() (string, error) {
	if p.at >= len(p.data) || p.data[p.at] != '"' {
		return "", p.fail("expected a string")
	}
	start := p.at
	end, escaped := stringEnd(p.data[start+1:])
	if end < 0 {
		p.at = len(p.data)
		return "", p.fail("unterminated string")
	}
	p.at = start + 1 + end + 1
	if !escaped {
		if p.src != "" {
			return p.src[start+1 : p.at-1], nil
		}
		return string(p.data[start+1 : p.at-1]), nil
	}
	var s string
	if err := json.Unmarshal(p.data[start:p.at], &s); err != nil {
		return "", p.fail(err.Error())
	}
	return s, nil
}

// stringEnd finds the closing quote of a string whose text starts b: its index (-1 when
// there is none) and whether the string holds escapes. Strings without escapes (nearly
// all) are found by two vectorized byte searches; from the first escape on, byte by byte
// (so a long string of many escapes is still read once).
func stringEnd(b []byte) (int, bool) {
	// Ids, names and keys are short: a plain loop beats the searches' call overhead.
	n := min(len(b), 24)
	for i, c := range b[:n] {
		if c == '"' {
			return i, false
		}
		if c == '\\' {
			return escapedStringEnd(b, i)
		}
	}
	q := bytes.IndexByte(b[n:], '"')
	if q < 0 {
		return -1, false
	}
	q += n
	if e := bytes.IndexByte(b[n:q], '\\'); e >= 0 {
		return escapedStringEnd(b, n+e)
	}
	return q, false
}

// escapedStringEnd is stringEnd from the first escape, at e.
func escapedStringEnd(b []byte, e int) (int, bool) {
	for i := e; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i, true
		}
	}
	return -1, true
}

// encodeAnswer is encodeValue writing the maps recorded in order in their key order, as
// NUL-terminated text for the core: one allocation for a scalar, the encoding buffer
// itself otherwise (a text, then a NUL-terminated copy of it, was two allocations and a
// copy per answer).
func encodeAnswer(v any, order keyOrder) ([]byte, error) {
	if b, ok := appendScalar(make([]byte, 0, 25), v); ok {
		return append(b, 0), nil
	}
	var buf bytes.Buffer
	var err error
	if len(order) == 0 {
		err = encodeInto(&buf, v)
	} else {
		err = writeOrdered(&buf, v, order, 0) // encodeValue's errors, or the depth error
	}
	if err != nil {
		return nil, err
	}
	buf.WriteByte(0)
	return buf.Bytes(), nil
}

func writeOrdered(buf *bytes.Buffer, v any, order keyOrder, depth int) error {
	if depth > 200 {
		return errorString("value is not JSON-compatible: value is nested too deeply (a cycle?)")
	}
	switch x := v.(type) {
	case map[string]any:
		keys, known := order.lookup(reflect.ValueOf(x).Pointer())
		if !known {
			break
		}
		seen := map[string]bool{}
		all := make([]string, 0, len(x))
		for _, k := range keys {
			if _, ok := x[k]; ok && !seen[k] {
				all = append(all, k)
				seen[k] = true
			}
		}
		extra := []string{}
		for k := range x {
			if !seen[k] {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		all = append(all, extra...)
		buf.WriteByte('{')
		for i, k := range all {
			if i > 0 {
				buf.WriteByte(',')
			}
			kt, _ := encodeValue(k)
			buf.WriteString(kt)
			buf.WriteByte(':')
			if err := writeOrdered(buf, x[k], order, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case []any:
		buf.WriteByte('[')
		for i, item := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeOrdered(buf, item, order, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	}
	text, err := encodeValue(v)
	if err != nil {
		return err
	}
	buf.WriteString(text)
	return nil
}
