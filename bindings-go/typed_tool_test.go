package phaseoagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	pa "github.com/phaseo/agent-sdk-go"
)

// Customer is who the order is for.
type Customer struct {
	ID   string `json:"id" jsonschema:"The customer's id in the shop, e.g. \"C-1042\"."`
	Name string `json:"name" jsonschema:"Shown on the packing slip."`
}

// LineItem is one product line.
type LineItem struct {
	SKU      string `json:"sku" jsonschema:"Stock keeping unit."`
	Quantity uint32 `json:"quantity" jsonschema:"How many, at least 1."`
}

// Shipping is how the parcel travels.
type Shipping string

func (Shipping) SchemaEnum() []any { return []any{"standard", "express"} }

// PlaceOrder are the arguments of place_order (the same as its Python, Node and Rust twins).
type PlaceOrder struct {
	Customer Customer   `json:"customer"`
	Items    []LineItem `json:"items" jsonschema:"The products, in the order the customer added them."`
	Shipping Shipping   `json:"shipping" jsonschema:"How the parcel travels."`
	Note     *string    `json:"note,omitempty" jsonschema:"A note for the courier."`
	GiftWrap bool       `json:"gift_wrap,omitempty" jsonschema:"Wrap as a gift."`
}

// Receipt is the placed order.
type Receipt struct {
	OrderID string `json:"order_id"`
	Units   uint32 `json:"units"`
}

// Category is a node of a catalogue tree: it holds its own kind.
type Category struct {
	Name     string     `json:"name"`
	Children []Category `json:"children,omitempty"`
}

func placeOrderTool(t *testing.T, ran *[]string, mu *sync.Mutex) pa.Tool {
	t.Helper()
	tool, err := pa.NewTool("place_order", "Places an order.", func(order PlaceOrder, rt pa.RuntimeContext) (Receipt, error) {
		var units uint32
		skus := []string{}
		for _, item := range order.Items {
			units += item.Quantity
			skus = append(skus, item.SKU)
		}
		note := "null"
		if order.Note != nil {
			note = *order.Note
		}
		mu.Lock()
		*ran = append(*ran, fmt.Sprintf("%s %s %s %d %s %v %s", order.Customer.Name, order.Shipping,
			strings.Join(skus, ","), units, note, order.GiftWrap, rt.ToolCall.ID))
		mu.Unlock()
		return Receipt{OrderID: "O-" + order.Customer.ID, Units: units}, nil
	})
	if err != nil {
		t.Fatalf("NewTool: %v", err)
	}
	return tool
}

const orderArgs = `{"customer":{"id":"C-7","name":"Ana"},"items":[{"sku":"A","quantity":2},{"sku":"B","quantity":3}],"shipping":"express"}`

// assertSchema compares the schema the model was sent with testdata/<name>
// (PHASEO_UPDATE_FIXTURES=1 rewrites the file).
func assertSchema(t *testing.T, schema any, name string) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if os.Getenv("PHASEO_UPDATE_FIXTURES") != "" {
		data, _ := json.MarshalIndent(schema, "", "  ")
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(schema)
	var gotValue any
	_ = json.Unmarshal(got, &gotValue)
	if !reflect.DeepEqual(gotValue, want) {
		t.Fatalf("schema differs from %s:\n%s", file, got)
	}
}

func toolContent(t *testing.T, r pa.RunResult, callID string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(toolMessages(r)[callID].Content), &v); err != nil {
		t.Fatalf("tool message of %s: %v", callID, err)
	}
	return v
}

func TestTypedToolSchemaAndDecodedCall(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	agent := mustAgent(t, pa.AgentDefinition{ID: "shop", Tools: []pa.Tool{placeOrderTool(t, &ran, &mu)}})
	client := &recorder{script: []pa.ModelResponse{toolCall("c1", "place_order", orderArgs), {Text: "placed"}}}
	result := run(t, agent, pa.RunOptions{Input: "order", Client: client})
	if result.Status() != "completed" {
		t.Fatalf("status %s", result.Status())
	}
	assertSchema(t, client.requests[0].Tools[0].Parameters, "typed_place_order.json")
	if want := []string{"Ana express A,B 5 null false c1"}; !reflect.DeepEqual(ran, want) {
		t.Fatalf("ran %v", ran)
	}
	if got := toolContent(t, result, "c1"); !reflect.DeepEqual(got, map[string]any{"order_id": "O-C-7", "units": float64(5)}) {
		t.Fatalf("result %v", got)
	}
}

func TestTypedToolWrongTypesGoBackToTheModel(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	tool := placeOrderTool(t, &ran, &mu)
	tool.OnError = "return-to-model"
	agent := mustAgent(t, pa.AgentDefinition{ID: "shop", Tools: []pa.Tool{tool}})
	wrong := `{"customer":{"id":"C-7","name":"Ana"},"items":[{"sku":"A","quantity":"two"}],"shipping":"express"}`
	// Beyond uint32: the schema says integer ≥ 0, the Go type cannot hold it.
	huge := `{"customer":{"id":"C-7","name":"Ana"},"items":[{"sku":"A","quantity":1099511627776}],"shipping":"express"}`
	client := &recorder{script: []pa.ModelResponse{toolCall("c1", "place_order", wrong), toolCall("c2", "place_order", huge),
		toolCall("c3", "place_order", orderArgs), {Text: "placed"}}}
	result := run(t, agent, pa.RunOptions{Input: "order", Client: client})
	if result.Status() != "completed" {
		t.Fatalf("status %s", result.Status())
	}
	for _, id := range []string{"c1", "c2"} {
		msg := toolContent(t, result, id).(map[string]any)["error"].(string)
		if !strings.HasPrefix(msg, "Invalid tool input: /items/") || !strings.Contains(msg, "quantity: ") {
			t.Fatalf("%s: the model should see where its arguments were wrong: %q", id, msg)
		}
	}
	if want := []string{"Ana express A,B 5 null false c3"}; !reflect.DeepEqual(ran, want) {
		t.Fatalf("ran %v", ran)
	}
}

func TestTypedToolStrictForm(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	tool := placeOrderTool(t, &ran, &mu)
	tool.Strict = true
	agent := mustAgent(t, pa.AgentDefinition{ID: "shop", Tools: []pa.Tool{tool}})
	args := `{"customer":{"id":"C-7","name":"Ana"},"items":[{"sku":"A","quantity":1}],"shipping":"standard","note":null,"gift_wrap":null}`
	client := &recorder{script: []pa.ModelResponse{toolCall("c1", "place_order", args), {Text: "ok"}}}
	result := run(t, agent, pa.RunOptions{Input: "order", Client: client})
	if result.Status() != "completed" {
		t.Fatalf("status %s: %v", result.Status(), result.Run.Error)
	}
	params := client.requests[0].Tools[0].Parameters.(map[string]any)
	required := fmt.Sprint(params["required"])
	if required != "[customer gift_wrap items note shipping]" || params["additionalProperties"] != false {
		t.Fatalf("strict form: %v", params)
	}
	if want := []string{"Ana standard A 1 null false c1"}; !reflect.DeepEqual(ran, want) {
		t.Fatalf("ran %v", ran)
	}
}

func TestTypedToolPausedAndContinuedFromJSON(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	tool := placeOrderTool(t, &ran, &mu)
	tool.RequireApproval = true
	agent := mustAgent(t, pa.AgentDefinition{ID: "shop", Tools: []pa.Tool{tool}})
	paused := run(t, agent, pa.RunOptions{Input: "order", Client: &recorder{script: []pa.ModelResponse{toolCall("c1", "place_order", orderArgs)}}})
	if paused.Status() != "waiting_for_human" {
		t.Fatalf("status %s", paused.Status())
	}
	stored, err := json.Marshal(paused)
	if err != nil {
		t.Fatal(err)
	}
	edited := map[string]any{"customer": map[string]any{"id": "C-7", "name": "Ana"},
		"items": []any{map[string]any{"sku": "A", "quantity": 1}}, "shipping": "standard", "note": "leave at the door"}
	done, err := agent.Continue(context.Background(), pa.ContinueOptions{StateJSON: string(stored),
		Client: &recorder{script: []pa.ModelResponse{{Text: "placed"}}}, Approvals: []pa.ToolDecision{{ToolCallID: "c1", EditedInput: edited}}})
	if err != nil || done.Status() != "completed" {
		t.Fatalf("continue: %v %v", err, done.Status())
	}
	if want := []string{"Ana standard A 1 leave at the door false c1"}; !reflect.DeepEqual(ran, want) {
		t.Fatalf("ran %v", ran)
	}
}

func TestTypedToolDefinitionErrors(t *testing.T) {
	_, err := pa.NewTool("file_categories", "Files a catalogue tree", func(root Category, _ pa.RuntimeContext) (string, error) {
		return root.Name, nil
	})
	var perr *pa.Error
	if err == nil || !errors.As(err, &perr) || perr.Code != "definition_invalid" ||
		!strings.Contains(err.Error(), "Invalid definition of tool 'file_categories': its input type has no JSON Schema") ||
		!strings.Contains(err.Error(), "cycle") {
		t.Fatalf("a recursive type is a clear definition error, got %v", err)
	}
	_, err = pa.NewTool("chan", "", func(in struct{ C chan int }, _ pa.RuntimeContext) (int, error) { return 0, nil })
	if err == nil || !strings.Contains(err.Error(), "Invalid definition of tool 'chan'") {
		t.Fatalf("a channel field is a definition error, got %v", err)
	}
}

func TestTypedToolsMixWithPlainOnes(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	add := pa.Tool{ID: "add", Parameters: map[string]any{"type": "object"}, Execute: func(input any, _ pa.RuntimeContext) (any, error) {
		m := input.(map[string]any)
		return m["a"].(float64) + m["b"].(float64), nil
	}}
	agent := mustAgent(t, pa.AgentDefinition{ID: "mixed", Tools: []pa.Tool{add, placeOrderTool(t, &ran, &mu)}})
	client := &recorder{script: []pa.ModelResponse{
		{ToolCalls: []pa.ModelToolCall{{ID: "c1", Name: "add", Arguments: `{"a":2,"b":3}`}, {ID: "c2", Name: "place_order", Arguments: orderArgs}}},
		{Text: "ok"}}}
	result := run(t, agent, pa.RunOptions{Input: "go", Client: client})
	if result.Status() != "completed" || toolContent(t, result, "c1") != float64(5) || len(ran) != 1 {
		t.Fatalf("status %s, ran %v", result.Status(), ran)
	}
}
