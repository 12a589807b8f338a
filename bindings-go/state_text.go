package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"runtime"
	"sync"
)

// stateText is a RunResult's canonical state text: the text it was read from
// (ParseRunResult), or the state the core still holds at a run's end, whose text the core
// writes once, when it is first asked for (JSON, json.Marshal, a continue). A run's fields are
// read from the state's text without its items (phaseo_state_json_without_items), which
// repeat every call's input and output: most runs' text is never asked for whole.
type stateText struct {
	once    sync.Once
	text    string
	native  *C.PhaseoState
	cleanup runtime.Cleanup
}

// givenStateText is a state text read from text.
func givenStateText(text string) *stateText { return &stateText{text: text} }

// heldStateText takes a state the core holds: freed once its text is written, or when the
// result that holds it is collected.
func heldStateText(native *C.PhaseoState) *stateText {
	s := &stateText{native: native}
	s.cleanup = runtime.AddCleanup(s, func(p *C.PhaseoState) { C.phaseo_state_free(p) }, native)
	return s
}

// get is the canonical text ("" for a zero RunResult); safe from any goroutine.
func (s *stateText) get() string {
	if s == nil {
		return ""
	}
	s.once.Do(func() {
		if s.native == nil {
			return
		}
		s.cleanup.Stop()
		s.text = takeString(C.phaseo_state_json(s.native))
		C.phaseo_state_free(s.native)
		s.native = nil
	})
	return s.text
}

// resultOfNative is the RunResult of a state taken from the core (phaseo_run_take_state),
// read from its text without items; the whole text is written when asked for.
func resultOfNative(native *C.PhaseoState) (RunResult, error) {
	held := heldStateText(native)
	r, err := parseState(takeString(C.phaseo_state_json_without_items(native)), false)
	if err != nil {
		return RunResult{}, err
	}
	r.state = held
	return r, nil
}
