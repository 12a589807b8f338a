package phaseoagent

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
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

// The state text of a run's end is read without its items (passed over in one step), to
// the same result as ParseRunResult reads it, signed or not, ended or paused.
func TestCoreStateSkipsItemsToTheSameResult(t *testing.T) {
	tools := []Tool{
		{ID: "add", Execute: func(input any, _ RuntimeContext) (any, error) { return map[string]any{"in": input, "s": "]}\"],"}, nil }},
		{ID: "deploy", RequireApproval: true, Execute: func(any, RuntimeContext) (any, error) { return "ok", nil }},
	}
	calls := []any{
		map[string]any{"id": "c1", "name": "add", "arguments": `{"a":1,"text":"],\"signature\":\"x\"}"}`},
		map[string]any{"id": "c2", "name": "add", "arguments": `{"a":2}`},
	}
	for _, secret := range []string{"", "a secret of the test"} {
		agent, err := CreateAgent(AgentDefinition{ID: "items", Tools: tools, StateSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		for _, script := range [][]map[string]any{
			{{"toolCalls": calls}, {"text": "done ]}"}},
			{{"toolCalls": []any{map[string]any{"id": "d1", "name": "deploy", "arguments": `{}`}}}},
		} {
			client, err := NewScriptedClient(script, 0)
			if err != nil {
				t.Fatal(err)
			}
			r, err := agent.Run(context.Background(), RunOptions{Input: "go", Client: client})
			if err != nil {
				t.Fatal(err)
			}
			text := r.JSON()
			end := itemsEnd(text)
			at := strings.Index(text, `"items":[`) + len(`"items":`)
			if end <= at || text[end-1] != ']' || (secret != "") != strings.HasPrefix(text[end:], `,"signature":"`) {
				t.Fatalf("items end at %d of %q", end, text)
			}
			var items []any
			if err := json.Unmarshal([]byte(text[at:end]), &items); err != nil || len(items) == 0 {
				t.Fatalf("items %q: %v", text[at:end], err)
			}
			fromCore, err := parseCoreState(text)
			if err != nil {
				t.Fatal(err)
			}
			read, err := ParseRunResult(text)
			if err != nil {
				t.Fatal(err)
			}
			if fromCore.JSON() != text || read.JSON() != text {
				t.Fatal("the state's text changed")
			}
			fromCore.state, read.state = nil, nil
			if !reflect.DeepEqual(fromCore, read) {
				t.Fatalf("read differently:\ncore %#v\nread %#v", fromCore, read)
			}
			if r.Status() != StatusCompleted && r.Status() != StatusWaitingForHuman {
				t.Fatalf("status %s", r.Status())
			}
		}
		agent.Close()
	}
	// Text that does not end as the core's does is read in full.
	for _, text := range []string{`{"run":{},"items":[1] }`, `{"items":[],"run":{}}`} {
		if _, err := parseCoreState(text); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
}

// A run's result reads its fields from the state the core still holds, whose whole text is
// written only when asked for, once: the same text from every copy and goroutine, the
// same fields as that text read back, and the native state freed once the text is written.
func TestRunResultWritesItsTextWhenAsked(t *testing.T) {
	agent, err := CreateAgent(AgentDefinition{ID: "lazy", Tools: []Tool{{ID: "add",
		Execute: func(input any, _ RuntimeContext) (any, error) { return input, nil }}}})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	calls := []any{}
	for i := 0; i < 3; i++ {
		calls = append(calls, map[string]any{"id": "c" + strconv.Itoa(i), "name": "add", "arguments": `{"i":` + strconv.Itoa(i) + `}`})
	}
	client, err := NewScriptedClient([]map[string]any{{"toolCalls": calls}, {"text": "done"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := agent.Run(context.Background(), RunOptions{Input: "go", Client: client})
	if err != nil {
		t.Fatal(err)
	}
	if r.state == nil || r.state.native == nil {
		t.Fatal("a run's result does not hold the core's state")
	}
	if r.Status() != StatusCompleted || r.Output != "done" || len(r.Messages) != 6 || len(r.StepResults) != 2 {
		t.Fatalf("fields %s %v %d %d", r.Status(), r.Output, len(r.Messages), len(r.StepResults))
	}
	copied := r
	texts := make([]string, 8)
	var wg sync.WaitGroup
	for i := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				texts[i] = copied.JSON()
			} else {
				texts[i] = r.JSON()
			}
		}()
	}
	wg.Wait()
	for _, text := range texts {
		if text != texts[0] {
			t.Fatalf("texts differ:\n%s\n%s", text, texts[0])
		}
	}
	if !strings.Contains(texts[0], `"items":[{"type":"tool_call"`) || !strings.HasSuffix(texts[0], `}]}`) {
		t.Fatalf("not the whole state: %s", texts[0])
	}
	if r.state.native != nil {
		t.Fatal("the native state is kept after its text was written")
	}
	if marshalled, err := json.Marshal(r); err != nil || string(marshalled) != texts[0] {
		t.Fatalf("json.Marshal: %s (%v)", marshalled, err)
	}
	read, err := ParseRunResult(texts[0])
	if err != nil {
		t.Fatal(err)
	}
	read.state, r.state = nil, nil
	if !reflect.DeepEqual(read, r) {
		t.Fatalf("the fields differ from the text's:\n%#v\n%#v", read, r)
	}
}
