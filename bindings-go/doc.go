// Package phaseoagent is the Go binding of the Phaseo Agent SDK: let a model call your Go
// functions as tools — validated (JSON Schema, checked by the core on every call), timed
// out (the tool's runtime.Ctx is cancelled and the run returns on time), approved by a
// person when it matters (pause, store the state as JSON, continue later from another
// process or language), concurrent (bounded, results in call order) and observable.
//
// The run loop is the SDK's Rust core, reached through its C ABI (cgo, static library);
// this package adapts Go functions: every tool runs on its own goroutine.
//
// A tool is most simply a typed Go function (docs/behaviour.md §20): NewTool derives the
// JSON Schema from the input struct's fields (`json` names, `jsonschema:"…"` descriptions,
// `omitempty` for optional ones, SchemaEnum for a fixed set of values), decodes each call's
// arguments into it (a wrong value is "Invalid tool input: <path>: <reason>", which
// OnError "return-to-model" sends back to the model), and checks the result against the
// output type's schema; set Strict on the tool for the strict form.
//
//	type Weather struct {
//		City string `json:"city" jsonschema:"City name, e.g. Lisbon"`
//		Days int    `json:"days,omitempty" jsonschema:"Days ahead (0 = today)"`
//	}
//	type Forecast struct {
//		Celsius float64 `json:"celsius"`
//	}
//	weather, err := phaseoagent.NewTool("weather", "Current weather",
//		func(in Weather, rt phaseoagent.RuntimeContext) (Forecast, error) { return Forecast{Celsius: 21}, nil })
//
// The plain form writes the JSON Schema and receives the arguments as JSON values:
//
//	deploy := phaseoagent.DefineTool(phaseoagent.Tool{
//		ID: "deploy", RequireApproval: true, Timeout: 5 * time.Second,
//		Parameters: map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string"}}},
//		Execute: func(input any, rt phaseoagent.RuntimeContext) (any, error) {
//			rt.EmitProgress(map[string]any{"phase": "rolling out"})
//			return map[string]any{"deployed": input.(map[string]any)["env"]}, nil
//		},
//	})
//	agent, err := phaseoagent.CreateAgent(phaseoagent.AgentDefinition{ID: "ops", Tools: []phaseoagent.Tool{deploy}})
//	paused, err := agent.Run(ctx, phaseoagent.RunOptions{Input: "deploy to prod", Client: client})
//	done, err := agent.Continue(ctx, phaseoagent.ContinueOptions{Run: paused, Client: client,
//		Approvals: []phaseoagent.ToolDecision{{ToolCallID: paused.Pending()[0].Call.ID}}})
//
// Values cross as JSON: inputs arrive as map[string]any / []any / string / bool / nil and
// float64 numbers (integers beyond 2^53 stay json.Number, exact); Decode converts them to
// your own types. Errors are *Error values with the documented codes (errors.As, errors.Is
// with the Err* sentinels).
//
// Decisions and limits (docs/behaviour.md §14, §15): an approval may carry the person's
// corrected arguments (ToolDecision.EditedInput), ContinueOptions.Responses answers an
// approval-gated call in the tool's place, Tool.MaxCalls and ToolExecutionConfig.MaxToolCalls
// bound a run's calls, Tool.Retry runs failed attempts again, and RuntimeContext.Attempt
// and RuntimeContext.IdempotencyKey let a side-effecting tool act at most once:
//
//	pay := phaseoagent.Tool{ID: "pay", MaxCalls: phaseoagent.Ptr(1),
//		Retry: &phaseoagent.ToolRetry{MaxAttempts: 3, Backoff: 100 * time.Millisecond},
//		Execute: func(input any, rt phaseoagent.RuntimeContext) (any, error) {
//			return payments.Charge(rt.Ctx, input, rt.IdempotencyKey)
//		}}
//
// Deferred tools (docs/behaviour.md §17): a Tool with DeferLoading (or every tool of an
// MCPServer with DeferLoading) stays out of the model's offer until the built-in
// tool_search, offered after the other tools, finds it; from then on it is offered at the
// end of the list for the rest of the run, and the state keeps it (RunRecord.LoadedTools),
// so a continue anywhere still offers it.
//
// Beyond tools: durable runs (RunStore: memory, SQLite, PostgreSQL, or the application's
// own StateAccessor; Continue by RunID, Recover after a crash), MCP servers (MCPServer,
// with Filter and OnElicitation), OpenTelemetry tracing (EnableTracing; defer
// ShutdownTracing), streamed runs (Agent.Stream) and model clients written in Go
// (ModelClient, StreamingModelClient). The module carries the native library for
// linux/amd64 (lib/linux_amd64), so `go get` needs a C compiler for cgo and no Rust.
package phaseoagent
