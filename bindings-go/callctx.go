package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"runtime/cgo"
	"sync"
	"time"
)

// callCtx is a host call's context.Context (RuntimeContext.Ctx, a client's ctx): done when
// the core cancels the call (timeout, run cancelled, a sibling failed) or once the call
// has ended. A tool call's context derives from the caller's ctx of its run: its values
// and deadline are the ctx's, and the ctx's end reaches it through the run (Run, Continue,
// Recover and Stream cancel the run when their ctx is done, and the core cancels the
// run's calls), then with the ctx's error and cause. Not watching the ctx directly keeps
// the order of a cancelled run: the core abandons the call before the tool sees its
// context done, so a tool that returns ctx.Err() cannot fail a run being cancelled.
// The derived context and the core's on_cancel hook are made only when first needed
// (Value for the one, Done or Err for both): most tools never look at their context, and
// the registration (a handle, a C call) was a measurable share of a trivial call.
type callCtx struct {
	c      *hostCall
	parent context.Context // the run's ctx; nil outside a run's tool calls
	mu     sync.Mutex      // guards inner, the registration and ended
	// inner is context.WithCancelCause(context.WithoutCancel(parent)), nil until first
	// needed: the standard package then gives Value, Cause and the children of the call's
	// context.
	inner       context.Context
	cancelInner context.CancelCauseFunc
	watched     bool       // the on_cancel hook was asked for
	handle      cgo.Handle // the hook's user_data, 0 while not registered
	ended       bool
}

// cancelContext is the call's context and the function that ends it (called after the
// call is completed).
func (c *hostCall) cancelContext() (context.Context, func()) {
	x := &c.ctxBuf // the call's own: every caller asks once per call
	if x.c != nil {
		x = &callCtx{}
	}
	x.c = c
	x.parent = c.parent
	return x, x.end
}

// derived is inner, made on first use (with x.mu held); done at once after the call ended.
func (x *callCtx) derived() context.Context {
	if x.inner == nil {
		parent := context.Background()
		if x.parent != nil {
			parent = context.WithoutCancel(x.parent)
		}
		x.inner, x.cancelInner = context.WithCancelCause(parent)
		if x.ended {
			x.cancelInner(nil)
		}
	}
	return x.inner
}

// Deadline is the parent's: the core enforces the call's own timeout and cancels the
// context.
func (x *callCtx) Deadline() (time.Time, bool) {
	if x.parent != nil {
		return x.parent.Deadline()
	}
	return time.Time{}, false
}

// Value is the parent's value of key (nil without a parent).
func (x *callCtx) Value(key any) any {
	if x.parent == nil {
		return nil
	}
	x.mu.Lock()
	inner := x.derived()
	x.mu.Unlock()
	return inner.Value(key)
}

// Err is nil until Done is closed; then the parent's error when the parent is done (the
// run was cancelled by its ctx), else context.Canceled.
func (x *callCtx) Err() error {
	x.Done()
	x.mu.Lock()
	err := x.inner.Err()
	x.mu.Unlock()
	if err != nil && x.parent != nil {
		if perr := x.parent.Err(); perr != nil {
			return perr
		}
	}
	return err
}

// Done is closed when the core cancels the call or the call has ended.
func (x *callCtx) Done() <-chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	inner := x.derived()
	if x.watched || x.ended {
		return inner.Done()
	}
	x.watched = true
	x.handle = cgo.NewHandle(x)
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	if x.c.done { // completed meanwhile: the call handle is gone
		x.handle.Delete()
		x.handle = 0
		x.cancelInner(nil)
		return inner.Done()
	}
	// May call the hook at once (an already cancelled call): cancel takes no lock held here.
	var cerr *C.char
	if C.phaseo_go_on_cancel(x.c.call, C.uintptr_t(x.handle), &cerr) != C.PHASEO_STATUS_OK {
		C.phaseo_string_free(cerr)
	}
	return inner.Done()
}

// cancel is the core's on_cancel hook: the call is cancelled, with the parent's cause
// when the parent is done (the run's ctx ended it), else context.Canceled. Only registered
// once inner exists, and inner's cancel takes no lock of x.
func (x *callCtx) cancel() {
	var cause error
	if x.parent != nil {
		cause = context.Cause(x.parent)
	}
	x.cancelInner(cause)
}

// end runs after the call is completed (the core calls on_cancel no more).
func (x *callCtx) end() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ended = true
	if x.inner != nil {
		x.cancelInner(nil) // also ends inner's registration with the parent
	}
	if x.handle != 0 {
		x.handle.Delete()
		x.handle = 0
	}
}

// String names the context in debug output.
func (x *callCtx) String() string { return "phaseoagent.callCtx" }
