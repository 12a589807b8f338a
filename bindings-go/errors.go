package phaseoagent

import "fmt"

// The stable error codes of docs/behaviour.md §9, identical in every language of the SDK.
const (
	CodeToolInputInvalid   = "tool_input_invalid"
	CodeToolOutputInvalid  = "tool_output_invalid"
	CodeToolEventInvalid   = "tool_event_invalid"
	CodeAgentOutputInvalid = "agent_output_invalid"
	CodeUnknownTool        = "unknown_tool"
	CodeToolTimeout        = "tool_timeout"
	CodeToolFailed         = "tool_failed"
	CodeMaxSteps           = "max_steps"
	CodeContinueInvalid    = "continue_invalid"
	CodeStateInvalid       = "state_invalid"
	CodeModelFailed        = "model_failed"
	CodeGateway            = "gateway"
	CodeDefinitionInvalid  = "definition_invalid"
	CodeCancelled          = "cancelled"
	CodeStoreFailed        = "store_failed"
	CodeLeaseLost          = "lease_lost"
	CodeMcpFailed          = "mcp_failed"
	// CodeInvalidArgument is a misuse of the binding itself (a nil handle, a closed agent).
	CodeInvalidArgument = "invalid_argument"
)

// Error is every error of the SDK: Code is the docs/behaviour.md §9 code and Message its documented text.
// When the run itself failed, Result holds the failed run's state; a refused continue has
// none (the state it was given is still current).
//
//	var perr *phaseoagent.Error
//	if errors.As(err, &perr) && perr.Code == phaseoagent.CodeToolTimeout { … }
//	if errors.Is(err, phaseoagent.ErrToolTimeout) { … }
type Error struct {
	// Code is the docs/behaviour.md §9 code, e.g. "tool_failed".
	Code string
	// Message is the error's text, e.g. "Tool deploy timed out after 500ms".
	Message string
	// Result is the failed run's state, when the run itself failed.
	Result *RunResult
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Is reports whether target is an *Error with the same code and no message (the Err*
// sentinels), so errors.Is(err, ErrToolFailed) matches any tool failure.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// GoString shows the code with the message.
func (e *Error) GoString() string { return fmt.Sprintf("phaseoagent.Error{%s: %s}", e.Code, e.Message) }

// Sentinels for errors.Is, one per docs/behaviour.md §9 code.
var (
	ErrToolInputInvalid   = &Error{Code: CodeToolInputInvalid}
	ErrToolOutputInvalid  = &Error{Code: CodeToolOutputInvalid}
	ErrToolEventInvalid   = &Error{Code: CodeToolEventInvalid}
	ErrAgentOutputInvalid = &Error{Code: CodeAgentOutputInvalid}
	ErrUnknownTool        = &Error{Code: CodeUnknownTool}
	ErrToolTimeout        = &Error{Code: CodeToolTimeout}
	ErrToolFailed         = &Error{Code: CodeToolFailed}
	ErrMaxSteps           = &Error{Code: CodeMaxSteps}
	ErrContinueInvalid    = &Error{Code: CodeContinueInvalid}
	ErrStateInvalid       = &Error{Code: CodeStateInvalid}
	ErrModelFailed        = &Error{Code: CodeModelFailed}
	ErrGateway            = &Error{Code: CodeGateway}
	ErrDefinitionInvalid  = &Error{Code: CodeDefinitionInvalid}
	ErrCancelled          = &Error{Code: CodeCancelled}
	ErrStoreFailed        = &Error{Code: CodeStoreFailed}
	ErrLeaseLost          = &Error{Code: CodeLeaseLost}
	ErrMcpFailed          = &Error{Code: CodeMcpFailed}
)

func definitionError(format string, args ...any) error {
	return &Error{Code: CodeDefinitionInvalid, Message: fmt.Sprintf(format, args...)}
}
