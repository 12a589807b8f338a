package phaseoagent

/*
#include <stdlib.h>
#include <string.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// callbackFn serves one `{"$callback": id}` of a definition: it runs on its own goroutine
// and must complete the call exactly once.
type callbackFn func(c *hostCall)

// callbacks is the table behind a PhaseoHost's invoke: ids are 1-based indexes.
type callbacks struct {
	funcs []callbackFn
}

// add registers f and returns its marker for the definition JSON.
func (s *callbacks) add(f callbackFn) map[string]any {
	s.funcs = append(s.funcs, f)
	return map[string]any{"$callback": len(s.funcs)}
}

func (s *callbacks) lookup(id uint64) callbackFn {
	if id == 0 || id > uint64(len(s.funcs)) {
		return nil
	}
	return s.funcs[id-1]
}

// hostObject is what a PhaseoHost's user_data (a cgo.Handle) refers to.
type hostObject interface {
	lookup(id uint64) callbackFn
}

// runHost is the host of one run: its option callbacks, event handler and end signal.
type runHost struct {
	callbacks
	onEvent EventHandler
	done    chan struct{}
	once    sync.Once
}

func newRunHost(onEvent EventHandler) *runHost {
	return &runHost{onEvent: onEvent, done: make(chan struct{})}
}

func (h *runHost) finish() { h.once.Do(func() { close(h.done) }) }

// hostCall is one invocation the core handed to Go.
type hostCall struct {
	call  *C.PhaseoCall
	kind  C.enum_PhaseoCallKind
	args  []any
	rt    *runtimeArgs // the runtime argument of a tool-side call
	order keyOrder
	mu    sync.Mutex
	done  bool
}

// The dispatcher: one goroutine per process takes the calls the core queued (bridge.c)
// and starts a goroutine for each, in call order.
func init() {
	fd := C.phaseo_go_queue_open()
	if fd < 0 {
		panic("phaseoagent: cannot create the call queue's eventfd")
	}
	// Non-blocking, so os.NewFile makes it pollable: the dispatcher sleeps in the netpoller,
	// holding no thread.
	go dispatchLoop(os.NewFile(uintptr(fd), "phaseo-calls"))
}

func dispatchLoop(wake *os.File) {
	// In C memory: cgo checks every Go memory argument for Go pointers, and the entries'
	// pointer fields made that check walk the whole batch on each take.
	const size = 256
	batch := unsafe.Slice((*C.PhaseoGoCall)(C.malloc(C.size_t(size)*C.size_t(unsafe.Sizeof(C.PhaseoGoCall{})))), size)
	var counter [8]byte
	for {
		n := int(C.phaseo_go_take(&batch[0], C.int(size)))
		if n == 0 {
			// Marked asleep by phaseo_go_take: the next call written wakes this read.
			if _, err := wake.Read(counter[:]); err != nil {
				panic("phaseoagent: the call queue's eventfd failed: " + err.Error())
			}
			continue
		}
		for i := range batch[:n] {
			dispatch(&batch[i])
		}
	}
}

// hostOf is the host a queued call names; nil when the host was released meanwhile (its
// run was abandoned: the call's answer is discarded).
func hostOf(handle uintptr) (obj hostObject) {
	defer func() { _ = recover() }() // a deleted cgo.Handle panics
	obj, _ = cgo.Handle(handle).Value().(hostObject)
	return obj
}

func dispatch(item *C.PhaseoGoCall) {
	id := uint64(item.callback)
	c := &hostCall{call: item.call, kind: C.enum_PhaseoCallKind(item.kind)}
	obj := hostOf(uintptr(item.handle))
	if obj == nil {
		c.fail(fmt.Errorf("phaseoagent: no Go host for callback %d", id))
		return
	}
	f := obj.lookup(id)
	if f == nil {
		c.fail(fmt.Errorf("phaseoagent: no Go function for callback %d", id))
		return
	}
	// The arguments belong to the call until it is completed: read in place, here on the
	// dispatcher, whose stack has grown once for good (each new goroutine's small stack
	// would otherwise be grown and copied by the parser).
	text := unsafe.Slice((*byte)(unsafe.Pointer(item.args)), C.strlen(item.args))
	list, rt, order, err := decodeCallArgs(text, hasRuntime(c.kind))
	if err != nil {
		c.fail(fmt.Errorf("phaseoagent: unreadable arguments: %v", err))
		return
	}
	c.args, c.rt, c.order = list, rt, order
	startInOrder(func() { f(c) })
}

// startQueue holds the calls dispatched and not yet started, in call order.
var startQueue = make(chan func(), 4096)

// startInOrder runs call on a goroutine, calls starting in the order given (SPEC §2.9:
// calls start in call order). The scheduler runs new goroutines in no particular order
// (the newest first, others stolen by idle threads), so a goroutine does not take its own
// call: it takes the oldest call not yet started, and after it, while calls are waiting,
// the next ones (a goroutine whose stack has already grown; the goroutines started for
// those calls then find none and end). A goroutine is started for every call, and each
// takes its first call without waiting, so a call that blocks never holds another.
func startInOrder(call func()) {
	startQueue <- call
	go runStarted()
}

func runStarted() {
	for {
		select {
		case call := <-startQueue:
			call()
		default:
			return
		}
	}
}

//export goPhaseoEvent
func goPhaseoEvent(userData unsafe.Pointer, eventJSON *C.char) {
	h, _ := cgo.Handle(uintptr(userData)).Value().(*runHost)
	if h == nil || h.onEvent == nil {
		return
	}
	event := parseEvent(C.GoString(eventJSON))
	defer func() { _ = recover() }() // a panicking handler must not take the process down
	h.onEvent(event)
}

//export goPhaseoDone
func goPhaseoDone(userData unsafe.Pointer) {
	if h, ok := cgo.Handle(uintptr(userData)).Value().(*runHost); ok {
		h.finish()
	}
}

//export goPhaseoRelease
func goPhaseoRelease(userData unsafe.Pointer) {
	handle := cgo.Handle(uintptr(userData))
	if h, ok := handle.Value().(*runHost); ok {
		h.finish()
	}
	handle.Delete()
}

//export goPhaseoCancel
func goPhaseoCancel(userData unsafe.Pointer) {
	if x, ok := cgo.Handle(uintptr(userData)).Value().(*callCtx); ok {
		x.cancel()
	}
}

// arg is the i-th argument (nil when absent).
func (c *hostCall) arg(i int) any {
	if i < len(c.args) {
		return c.args[i]
	}
	return nil
}

// answer completes the call with a value.
func (c *hostCall) answer(v any) {
	text, err := encodeOrdered(v, c.order)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	c.done = true
	if err != nil {
		msg := cString(err.Error())
		C.phaseo_call_complete_invalid(c.call, msg)
		freeC(msg)
		return
	}
	// Go memory, NUL-terminated: the core reads it during the call only (C.CString would
	// add two cgo calls, malloc and free, to every answer).
	buf := make([]byte, len(text)+1)
	copy(buf, text)
	C.phaseo_call_complete(c.call, (*C.char)(unsafe.Pointer(&buf[0])), false)
}

// fail completes the call with an error.
func (c *hostCall) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	c.done = true
	msg := cString(err.Error())
	C.phaseo_call_complete(c.call, msg, true)
	freeC(msg)
}

// finish completes the call with a function's outcome.
func (c *hostCall) finish(v any, err error) {
	if err != nil {
		c.fail(err)
	} else {
		c.answer(v)
	}
}

// protect runs f, turning a panic into the call's error (never a crashed process).
func protect(f func() (any, error)) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// errNotExecutor is returned by EmitProgress and SetContext outside an executor.
var errNotExecutor = errors.New("phaseoagent: only a tool's executor can do this")

// errCallEnded is returned by EmitProgress and SetContext after the call ended.
var errCallEnded = errors.New("phaseoagent: the tool call has already ended")

// withRuntime runs f with the call's RuntimeContext: its Ctx is cancelled when the core
// cancels the call, and is released when f returns.
func (c *hostCall) withRuntime(f func(rt RuntimeContext) (any, error)) (any, error) {
	ctx, release := c.cancelContext()
	defer release()
	rt := c.runtime(ctx)
	v, err := protect(func() (any, error) { return f(rt) })
	c.finish(v, err)
	return v, err
}

func (c *hostCall) runtime(ctx context.Context) RuntimeContext {
	rt := RuntimeContext{Ctx: ctx}
	if a := c.rt; a != nil {
		rt.RunID, rt.AgentID, rt.StepIndex, rt.Context, rt.ToolCall = a.runID, a.agentID, a.stepIndex, a.context, a.call
	}
	executor := c.kind == C.PHASEO_CALL_KIND_EXECUTE
	rt.EmitProgress = func(value any) error {
		if !executor {
			return errNotExecutor
		}
		return c.progress(value)
	}
	rt.SetContext = func(value any) error {
		if !executor {
			return errNotExecutor
		}
		return c.setContext(value)
	}
	return rt
}

func (c *hostCall) progress(value any) error {
	text, encErr := encodeValue(value)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return errCallEnded
	}
	var st C.enum_PhaseoStatus
	var cerr *C.char
	if encErr != nil {
		// The core fails the call as an invalid event (tool_event_invalid).
		msg := cString(encErr.Error())
		st = C.phaseo_call_reject_progress(c.call, msg, &cerr)
		freeC(msg)
		if st == C.PHASEO_STATUS_OK {
			return encErr
		}
	} else {
		ct := cString(text)
		st = C.phaseo_call_emit_progress(c.call, ct, &cerr)
		freeC(ct)
	}
	if st != C.PHASEO_STATUS_OK {
		return takeError(cerr)
	}
	return nil
}

func (c *hostCall) setContext(value any) error {
	text, err := encodeValue(value)
	if err != nil {
		return fmt.Errorf("SetContext: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return errCallEnded
	}
	ct := cString(text)
	defer freeC(ct)
	var cerr *C.char
	if C.phaseo_call_set_context(c.call, ct, &cerr) != C.PHASEO_STATUS_OK {
		return takeError(cerr)
	}
	return nil
}
