package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
)

// callCtx is a host call's context.Context (RuntimeContext.Ctx, a client's ctx): done when
// the core cancels the call (timeout, run cancelled, a sibling failed) or once the call
// has ended. It registers its on_cancel hook with the core only when first asked for
// Done or Err: most tools never look at their context, and the registration (a handle, a
// C call) was a measurable share of a trivial call.
type callCtx struct {
	c      *hostCall
	mu     sync.Mutex // guards done's creation, the registration and ended
	done   chan struct{}
	once   sync.Once
	closed atomic.Bool
	handle cgo.Handle // the hook's user_data, 0 until registered
	ended  bool
}

// cancelContext is the call's context and the function that ends it (called after the
// call is completed).
func (c *hostCall) cancelContext() (context.Context, func()) {
	x := &c.ctxBuf // the call's own: every caller asks once per call
	if x.c != nil {
		x = &callCtx{}
	}
	x.c = c
	return x, x.end
}

// Deadline is never set: the core enforces timeouts and cancels the context.
func (x *callCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value holds nothing.
func (x *callCtx) Value(any) any { return nil }

// Err is context.Canceled once Done is closed.
func (x *callCtx) Err() error {
	x.Done()
	if x.closed.Load() {
		return context.Canceled
	}
	return nil
}

// Done is closed when the core cancels the call or the call has ended.
func (x *callCtx) Done() <-chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done != nil {
		return x.done
	}
	x.done = make(chan struct{})
	if x.ended {
		x.cancel()
		return x.done
	}
	x.handle = cgo.NewHandle(x)
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	if x.c.done { // completed meanwhile: the call handle is gone
		x.handle.Delete()
		x.handle = 0
		x.cancel()
		return x.done
	}
	// May call the hook at once (an already cancelled call): cancel takes no lock held here.
	var cerr *C.char
	if C.phaseo_go_on_cancel(x.c.call, C.uintptr_t(x.handle), &cerr) != C.PHASEO_STATUS_OK {
		C.phaseo_string_free(cerr)
	}
	return x.done
}

// cancel closes Done (once); called by the core's on_cancel hook and at the end.
func (x *callCtx) cancel() {
	x.once.Do(func() {
		x.closed.Store(true)
		close(x.done)
	})
}

// end runs after the call is completed (the core calls on_cancel no more).
func (x *callCtx) end() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ended = true
	if x.done != nil {
		x.cancel()
	}
	if x.handle != 0 {
		x.handle.Delete()
		x.handle = 0
	}
}

// String names the context in debug output.
func (x *callCtx) String() string { return "phaseoagent.callCtx" }
