package phaseoagent

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The one-pass state decoder reads exactly what encoding/json reads (numbers aside: it
// keeps large integers exact), for states of every shape a run produces; text it cannot
// read falls back to encoding/json's error.
func TestStateDecoderMatchesEncodingJSON(t *testing.T) {
	agent, err := CreateAgent(AgentDefinition{ID: "shapes", Tools: []Tool{
		{ID: "deploy", RequireApproval: true, Execute: func(input any, _ RuntimeContext) (any, error) {
			return map[string]any{"ok": true, "in": input}, nil
		}},
		{ID: "ask", OnToolCalled: func(any, RuntimeContext) (any, bool, error) { return nil, false, nil }},
		{ID: "boom", Execute: func(any, RuntimeContext) (any, error) { return nil, errorString("it broke \"badly\"\n") }},
		// Deferred: a state with run.loadedTools once tool_search finds it.
		{ID: "archive", Description: "Archive old records", DeferLoading: true,
			Execute: func(any, RuntimeContext) (any, error) { return "archived", nil }},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	var states []string
	for _, script := range [][]map[string]any{
		{{"toolCalls": []any{map[string]any{"id": "c1", "name": "deploy", "arguments": `{"env":"prod","n":12345678901234567}`},
			map[string]any{"id": "c2", "name": "ask", "arguments": `{"q":"é\u2028\"x\""}`}}}},
		{{"text": "plain ünïcode \\ answer", "usage": map[string]any{"inputTokens": 3, "outputTokens": 4}, "cost": 0.5}},
		{{"toolCalls": []any{map[string]any{"id": "c1", "name": "boom", "arguments": `{}`}}}},
		{{"toolCalls": []any{map[string]any{"id": "c1", "name": "tool_search", "arguments": `{"query":"archive"}`}}},
			{"toolCalls": []any{map[string]any{"id": "c2", "name": "deploy", "arguments": `{}`}}}},
	} {
		client, err := NewScriptedClient(script, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := agent.Run(context.Background(), RunOptions{Input: map[string]any{"k": []any{1, 2.5, nil}}, Client: client,
			Context: map[string]any{"user": "ana", "tags": []any{"a"}}})
		if perr, ok := err.(*Error); ok && perr.Result != nil {
			r = *perr.Result
		} else if err != nil {
			t.Fatal(err)
		}
		states = append(states, r.JSON())
	}
	for _, text := range states {
		fast, err := decodeState(text)
		if err != nil {
			t.Fatalf("decodeState: %v\n%s", err, text)
		}
		var slow stateView
		if err := json.Unmarshal([]byte(text), &slow); err != nil {
			t.Fatal(err)
		}
		// encoding/json reads every number as float64; compare through JSON text.
		// (encoding/json rounds the large integer to a float64: 12345678901234568.)
		a, b := mustJSON(t, fast), strings.ReplaceAll(mustJSON(t, slow), "12345678901234568", "12345678901234567")
		if a != b {
			t.Fatalf("decoders differ:\nfast %s\nslow %s", a, b)
		}
	}
	if loaded, err := decodeState(states[3]); err != nil || !reflect.DeepEqual(loaded.Run.LoadedTools, []string{"archive"}) {
		t.Fatalf("loaded tools %v (%v)", loaded.Run.LoadedTools, err)
	}
	if !strings.Contains(states[0], "12345678901234567") {
		t.Fatal("the state lost the large integer")
	}
	r, err := ParseRunResult(states[0])
	if err != nil {
		t.Fatal(err)
	}
	input := r.Run.Messages[1].ToolCalls[0].Input.(map[string]any)["n"]
	if !reflect.DeepEqual(input, json.Number("12345678901234567")) {
		t.Fatalf("a large integer is not exact: %#v", input)
	}
	for _, bad := range []string{`{"run":`, `[1]`, `{"run":{"messages":[{"role":1}]}}`} {
		if _, err := ParseRunResult(bad); err == nil || err.(*Error).Code != CodeStateInvalid {
			t.Fatalf("%s: %v", bad, err)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A state's output reads as decodeValue reads it (objects, arrays, escapes, large and
// fractional numbers, deep nesting), its strings parts of the state's text.
func TestStateOutputReadsAsDecodeValue(t *testing.T) {
	agent, err := CreateAgent(AgentDefinition{ID: "outputs"})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	client, err := NewScriptedClient([]map[string]any{{"text": "done"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := agent.Run(context.Background(), RunOptions{Input: "go", Client: client})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.JSON(), `"output":"done"`) {
		t.Fatalf("no output in %s", r.JSON())
	}
	for _, output := range []string{
		`{"a":[1,2.5,-3e2,12345678901234567,9007199254740993,0.1,null,true,false],"s":"é\"\\\n\u2028 \ud83d\ude00","o":{},"l":[]}`,
		`[]`, `"plain"`, `"esc\"aped"`, `123`, `-0.5`, `null`, `true`, `1e400`,
		strings.Repeat(`{"k":[`, 32) + `"deep"` + strings.Repeat(`]}`, 32),
	} {
		text := strings.Replace(r.JSON(), `"output":"done"`, `"output":`+output, 1)
		parsed, err := ParseRunResult(text)
		if err != nil {
			t.Fatalf("%s: %v", output, err)
		}
		want, err := decodeValue([]byte(output))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(parsed.Output, want) {
			t.Fatalf("output %s: read %#v, decodeValue %#v", output, parsed.Output, want)
		}
	}
}
