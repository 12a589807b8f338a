package phaseoagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaEnum is implemented by a type whose values are a fixed set (Go has no enums): a
// typed tool's schema lists them as the type's "enum" (docs/behaviour.md §20).
//
//	type Shipping string
//	func (Shipping) SchemaEnum() []any { return []any{"standard", "express"} }
type SchemaEnum interface {
	SchemaEnum() []any
}

var schemaEnumType = reflect.TypeFor[SchemaEnum]()

// NewTool defines a tool from Go types (docs/behaviour.md §20). Its parameters are the JSON
// Schema of In (a struct: each exported field by its `json` name, required unless
// `omitempty`/`omitzero`, described by its `jsonschema:"…"` tag; types implementing
// SchemaEnum list their values), sent to the model and checked by the core; each call's
// arguments are then decoded into In before execute runs (a value that does not decode is
// "Invalid tool input: <path>: <reason>", which OnError "return-to-model" lets the model
// correct), and Out's schema checks the result. Set Strict on the returned tool to send
// the strict form of the generated schema. A type JSON Schema cannot describe (a
// recursive type, a channel, a map with non-string keys) is a definition error.
func NewTool[In, Out any](id, description string, execute func(input In, runtime RuntimeContext) (Out, error)) (Tool, error) {
	tool, err := typedTool[In, Out](id, description)
	if err != nil {
		return Tool{}, err
	}
	if execute != nil {
		tool.Execute = func(input any, runtime RuntimeContext) (any, error) {
			decoded, err := decodeInto[In](input)
			if err != nil {
				return nil, err
			}
			return execute(decoded, runtime)
		}
	}
	return tool, nil
}

// NewManualTool is NewTool for a manual tool: each call pauses the run until the
// application supplies its output, checked against Out's schema.
func NewManualTool[In, Out any](id, description string) (Tool, error) {
	return typedTool[In, Out](id, description)
}

func typedTool[In, Out any](id, description string) (Tool, error) {
	inSchema, err := schemaOf[In]()
	if err != nil {
		return Tool{}, definitionError("Invalid definition of tool '%s': its input type has no JSON Schema: %v", id, err)
	}
	outSchema, err := schemaOf[Out]()
	if err != nil {
		return Tool{}, definitionError("Invalid definition of tool '%s': its result type has no JSON Schema: %v", id, err)
	}
	output, err := JSONSchemaValidator(outSchema)
	if err != nil {
		return Tool{}, err
	}
	return Tool{
		ID:          id,
		Description: description,
		InputSchema: func(value any) (any, error) {
			if _, err := decodeInto[In](value); err != nil {
				return nil, err
			}
			return value, nil
		},
		inputJSONSchema:  inSchema,
		OutputSchema:     output,
		outputJSONSchema: outSchema,
	}, nil
}

// schemaOf is T's JSON Schema as a JSON value.
func schemaOf[T any]() (map[string]any, error) {
	types := map[reflect.Type]*jsonschema.Schema{}
	collectEnums(reflect.TypeFor[T](), types, map[reflect.Type]bool{})
	schema, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: types})
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// collectEnums gives every SchemaEnum type reachable from t its schema: the JSON type of
// its kind and its values.
func collectEnums(t reflect.Type, types map[reflect.Type]*jsonschema.Schema, seen map[reflect.Type]bool) {
	if t == nil || seen[t] {
		return
	}
	seen[t] = true
	if t.Implements(schemaEnumType) && t.Kind() != reflect.Interface {
		enum := reflect.Zero(t).Interface().(SchemaEnum).SchemaEnum()
		types[t] = &jsonschema.Schema{Type: jsonKind(t), Enum: enum}
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		collectEnums(t.Elem(), types, seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			collectEnums(t.Field(i).Type, types, seen)
		}
	}
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	default:
		return "string"
	}
}

// decodeInto decodes a call's arguments into T; the error is "<JSON pointer>: <reason>".
func decodeInto[T any](value any) (T, error) {
	var out T
	data, err := json.Marshal(value)
	if err != nil {
		return out, errorString("/: " + err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return out, errorString(decodeProblem(data, err))
	}
	return out, nil
}

// decodeProblem names where encoding/json stopped, as a JSON pointer: found from the
// error's offset in data (encoding/json's own field path leaves out array indices and map
// keys).
func decodeProblem(data []byte, err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		reason := "expected " + typeErr.Type.String() + ", got " + typeErr.Value
		if path, ok := pathAt(data, typeErr.Offset); ok {
			return pointer(path) + ": " + reason
		}
		return pointer(strings.Split(typeErr.Field, ".")) + ": " + reason
	}
	return "/: " + strings.TrimPrefix(err.Error(), "json: ")
}

// pathFrame is one open object or array while walking a JSON text.
type pathFrame struct {
	object    bool
	expectKey bool
	key       string
	index     int
}

// pathAt is the path of the value of data that starts or ends at offset.
func pathAt(data []byte, offset int64) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []pathFrame
	current := func() []string {
		path := make([]string, 0, len(stack))
		for _, f := range stack {
			if f.object {
				path = append(path, f.key)
			} else {
				path = append(path, strconv.Itoa(f.index-1))
			}
		}
		return path
	}
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].expectKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
			if key, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].expectKey = key, false
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if dec.InputOffset() == offset {
				return current(), true
			}
			valueDone()
			continue
		}
		if n := len(stack); n > 0 && !stack[n-1].object {
			stack[n-1].index++
		}
		if d, ok := tok.(json.Delim); ok {
			path := current()
			if dec.InputOffset() == offset || dec.InputOffset()-1 == offset {
				return path, true
			}
			stack = append(stack, pathFrame{object: d == '{', expectKey: d == '{'})
			continue
		}
		if dec.InputOffset() == offset {
			return current(), true
		}
		valueDone()
	}
}

// pointer is the JSON pointer of path ("/" for the root).
func pointer(path []string) string {
	if len(path) == 0 || (len(path) == 1 && path[0] == "") {
		return "/"
	}
	var b strings.Builder
	for _, step := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(step, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
