package phaseoagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
)

// decodeValue reads a JSON value the core sent. Objects become map[string]any, arrays
// []any, and numbers float64 when float64 holds them exactly (every non-integer, and
// integers up to 2^53 in magnitude); larger integers stay json.Number, so a 64-bit id
// round-trips unchanged (SPEC §7: values are stored and read back without loss).
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

// encodeValue writes a Go value as JSON text for the core.
func encodeValue(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("value is not JSON-compatible: %w", err)
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n")), nil
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
type keyOrder map[uintptr][]string

// decodeOrdered is decodeValue recording the key order of every object.
func decodeOrdered(data []byte) (any, keyOrder, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	order := keyOrder{}
	v, err := readOrdered(dec, order)
	if err != nil {
		return nil, nil, err
	}
	return normalizeNumbers(v), order, nil
}

func readOrdered(dec *json.Decoder, order keyOrder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			keys := []string{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := readOrdered(dec, order)
				if err != nil {
					return nil, err
				}
				if _, dup := m[k]; !dup {
					keys = append(keys, k)
				}
				m[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			order[reflect.ValueOf(m).Pointer()] = keys
			return m, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := readOrdered(dec, order)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return list, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}

// encodeOrdered is encodeValue writing the maps recorded in order in their key order.
func encodeOrdered(v any, order keyOrder) (string, error) {
	if len(order) == 0 {
		return encodeValue(v)
	}
	var buf bytes.Buffer
	if err := writeOrdered(&buf, v, order, 0); err != nil {
		return "", fmt.Errorf("value is not JSON-compatible: %w", err)
	}
	return buf.String(), nil
}

func writeOrdered(buf *bytes.Buffer, v any, order keyOrder, depth int) error {
	if depth > 200 {
		return fmt.Errorf("value is nested too deeply (a cycle?)")
	}
	switch x := v.(type) {
	case map[string]any:
		keys, known := order[reflect.ValueOf(x).Pointer()]
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
