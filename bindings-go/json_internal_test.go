package phaseoagent

import (
	"math"
	"testing"
)

// An answer's text is encodeValue's, NUL-terminated for the core, with the maps the
// arguments recorded written in their key order.
func TestEncodeAnswerIsTheValuesTextNULTerminated(t *testing.T) {
	for _, v := range []any{nil, true, false, 3, int64(-5), 1.5, 1e300, "x\"y", []any{1, "a"},
		map[string]any{"b": 1, "a": []any{true}}, struct{ N int }{7}} {
		want, err := encodeValue(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeAnswer(v, nil)
		if err != nil || string(got) != want+"\x00" {
			t.Errorf("encodeAnswer(%#v) = %q, %v; want %q", v, got, err, want+"\x00")
		}
	}
	input, order, err := decodeOrdered([]byte(`{"z":1,"a":{"y":2,"b":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := encodeAnswer(input, order)
	if err != nil || string(got) != `{"z":1,"a":{"y":2,"b":3}}`+"\x00" {
		t.Errorf("ordered: %q, %v", got, err)
	}
	if _, err := encodeAnswer(math.NaN(), nil); err == nil {
		t.Error("NaN encoded")
	}
	if _, err := encodeAnswer(map[string]any{"c": make(chan int)}, order); err == nil {
		t.Error("a channel encoded")
	}
}
