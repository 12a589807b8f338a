package phaseoagent

import (
	"strings"
	"testing"
)

// A decoding error names the value's place with indices and map keys, which
// encoding/json's own field path leaves out.
func TestDecodeErrorsNameTheValuesPointer(t *testing.T) {
	type item struct {
		Quantity uint8 `json:"quantity"`
	}
	type order struct {
		Items []item          `json:"items"`
		ByKey map[string]item `json:"by_key"`
		Note  string          `json:"note"`
	}
	cases := []struct {
		input any
		want  string
	}{
		{map[string]any{"items": []any{map[string]any{"quantity": 1}, map[string]any{"quantity": 300}}}, "/items/1/quantity: expected uint8, got number 300"},
		{map[string]any{"by_key": map[string]any{"a/b": map[string]any{"quantity": -1}}}, "/by_key/a~1b/quantity: expected uint8, got number -1"},
		{map[string]any{"note": map[string]any{"x": 1}}, "/note: expected string, got object"},
		{map[string]any{"items": "none"}, "/items: expected []phaseoagent.item, got string"},
	}
	for _, c := range cases {
		_, err := decodeInto[order](c.input)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("decoding %v: got %v, want %q", c.input, err, c.want)
		}
	}
}
