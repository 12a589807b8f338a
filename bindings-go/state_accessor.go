package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/cgo"
)

// StateAccessor is the product's state accessor: the application keeps each run's state
// itself (a database row, a file, a cache). Load returns the state of runID, or nil when
// there is none (continuing it then fails "run <id> not found"-style with
// continue_invalid); Save stores a checkpoint of the run, replacing the previous one. Both
// are called on goroutines, with a ctx cancelled when the run stops waiting. An accessor
// has no claim: unlike the SDK's stores, it does not stop a pause from being continued
// twice, and it cannot list, delete or recover runs.
type StateAccessor interface {
	// Load returns the stored state of runID, or nil when there is none.
	Load(ctx context.Context, runID string) (*RunResult, error)
	// Save stores a checkpoint of the run (state.JSON() is its canonical text).
	Save(ctx context.Context, state RunResult) error
}

// accessorHost serves an accessor's load (callback 1) and save (callback 2).
type accessorHost struct {
	callbacks
}

// NewAccessorStore wraps a StateAccessor as a RunStore (for AgentDefinition.Store; a run
// or continue takes the accessor directly as its State option).
func NewAccessorStore(acc StateAccessor) (*RunStore, error) {
	if acc == nil {
		return nil, &Error{Code: CodeDefinitionInvalid, Message: "the state accessor is nil"}
	}
	h := &accessorHost{}
	h.add(func(c *hostCall) {
		runID, _ := c.arg(0).(string)
		ctx, release := c.cancelContext()
		defer release()
		c.finish(protect(func() (any, error) {
			r, err := acc.Load(ctx, runID)
			if err != nil || r == nil {
				return nil, err
			}
			text, err := json.Marshal(r)
			if err != nil {
				return nil, fmt.Errorf("the loaded state of run %s cannot be written: %w", runID, err)
			}
			return string(text), nil
		}))
	})
	h.add(func(c *hostCall) {
		runID, _ := c.arg(0).(string)
		text, _ := c.arg(1).(string)
		ctx, release := c.cancelContext()
		defer release()
		c.finish(protect(func() (any, error) {
			state, err := ParseRunResult(text)
			if err != nil {
				return nil, fmt.Errorf("the state of run %s: %w", runID, err)
			}
			return nil, acc.Save(ctx, state)
		}))
	})
	handle := cgo.NewHandle(h)
	// The core takes the host made from the handle: its release deletes the handle, also on
	// failure.
	return newStore(func(out **C.PhaseoStore, e **C.char) C.enum_PhaseoStatus {
		return C.phaseo_go_store_accessor(C.uintptr_t(handle), 1, 2, out, e)
	})
}

// storeFor is a run's store: Store, or the accessor (Accessor, or State, its product
// name: one of them, and not with Store).
func storeFor(store *RunStore, accessor, state StateAccessor) (*RunStore, error) {
	if accessor != nil && state != nil {
		return nil, &Error{Code: CodeDefinitionInvalid, Message: "pass either Accessor or State (its product name), not both"}
	}
	acc := accessor
	if acc == nil {
		acc = state
	}
	if acc == nil {
		return store, nil
	}
	if store != nil {
		return nil, &Error{Code: CodeDefinitionInvalid, Message: "pass either Store or a state accessor (Accessor), not both"}
	}
	return NewAccessorStore(acc)
}
