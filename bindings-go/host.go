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
	"sync/atomic"
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

// runHost is the host of one run: its option callbacks, event handler and end signal, and
// the caller's ctx, the parent of the contexts of the run's tool calls.
type runHost struct {
	callbacks
	ctx    context.Context
	events *eventDelivery // nil without an OnEvent
	done   chan struct{}
	once   sync.Once
}

func newRunHost(ctx context.Context, onEvent EventHandler) *runHost {
	h := &runHost{ctx: ctx, done: make(chan struct{})}
	if onEvent != nil {
		h.events = newEventDelivery(onEvent)
	}
	return h
}

// abandon stops waiting for the run's event handler (the run's ctx is done).
func (h *runHost) abandon() {
	if h.events != nil {
		h.events.abandon()
	}
}

func (h *runHost) finish() { h.once.Do(func() { close(h.done) }) }

// hostCall is one invocation the core handed to Go.
type hostCall struct {
	call *C.PhaseoCall
	kind C.enum_PhaseoCallKind
	args []any
	rt   *runtimeArgs // the runtime argument of a tool-side call
	// The caller's ctx of the run whose tool call this is (nil for other calls): the
	// parent of the call's context.
	parent context.Context
	order  keyOrder
	// The argument text until readArgs reads it (the core's memory, the call's until it
	// is completed).
	text []byte
	mu   sync.Mutex
	done bool
	// The driver (a cgo.Handle) that runs this call itself (drive.go), 0 for a call on a
	// goroutine of its own: the wake-up its answer gives that driver is not needed.
	ownDriver uintptr
	// The storage of args, rt, the call's context (cancelContext) and the key order of its
	// first object: in the hostCall, so that a call costs one allocation for them, not five.
	argBuf   [1]any
	rtBuf    runtimeArgs
	ctxBuf   callCtx
	orderBuf [1]orderedKeys
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
	batch := newBatch()
	var counter [8]byte
	for {
		if takeAndDispatch(batch) == 0 {
			// Marked asleep by phaseo_go_take: the next call written wakes this read.
			if _, err := wake.Read(counter[:]); err != nil {
				panic("phaseoagent: the call queue's eventfd failed: " + err.Error())
			}
		}
	}
}

// batchSize is how many queued items one take moves.
const batchSize = 256

// newBatch is the memory a taker moves queued items into. In C memory: cgo checks every
// Go memory argument for Go pointers, and the entries' pointer fields made that check
// walk the whole batch on each take.
func newBatch() []C.PhaseoGoCall {
	liveBatches.Add(1)
	return unsafe.Slice((*C.PhaseoGoCall)(C.malloc(C.size_t(batchSize)*C.size_t(unsafe.Sizeof(C.PhaseoGoCall{})))), batchSize)
}

// freeBatch frees a buffer of newBatch.
func freeBatch(b []C.PhaseoGoCall) {
	liveBatches.Add(-1)
	C.free(unsafe.Pointer(&b[0]))
}

// liveBatches counts the buffers of newBatch not freed (the dispatcher's and the drivers',
// in use or kept): a test checks that it does not grow with the runs.
var liveBatches atomic.Int64

// dispatchMu makes a take and the dispatch of what it took one step: the dispatcher and
// the drivers of driven runs (drive.go) both take from the queue, and calls must start
// in the order they were queued.
var dispatchMu sync.Mutex

// takeAndDispatch takes the queued items and dispatches them, until the queue is empty;
// it returns how many it took (0: the queue is marked asleep, the next item wakes the
// dispatcher).
func takeAndDispatch(batch []C.PhaseoGoCall) int {
	total := 0
	dispatchMu.Lock()
	defer dispatchMu.Unlock()
	for {
		n := int(C.phaseo_go_take(&batch[0], C.int(len(batch))))
		if n == 0 {
			return total
		}
		total += n
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

// runCtxOf is the caller's ctx of the run host a tool call names; nil when there is none
// or the run host was released meanwhile (the run ended: the call is abandoned).
func runCtxOf(handle uintptr) (ctx context.Context) {
	if handle == 0 {
		return nil
	}
	defer func() { _ = recover() }() // a deleted cgo.Handle panics
	if h, ok := cgo.Handle(handle).Value().(*runHost); ok {
		ctx = h.ctx
	}
	return ctx
}

func dispatch(item *C.PhaseoGoCall) {
	if c, f := prepare(item); c != nil {
		startInOrder(c, f)
	}
}

// prepare makes the hostCall of a queued item and finds its function; nil when there is
// nothing to start (a wake-up, handed to its driver; a call failed here).
func prepare(item *C.PhaseoGoCall) (*hostCall, callbackFn) {
	if item.kind == C.PHASEO_GO_WAKE {
		wakeDriver(uintptr(item.handle))
		return nil, nil
	}
	id := uint64(item.callback)
	c := &hostCall{call: item.call, kind: C.enum_PhaseoCallKind(item.kind), parent: runCtxOf(uintptr(item.run))}
	obj := hostOf(uintptr(item.handle))
	if obj == nil {
		c.fail(fmt.Errorf("phaseoagent: no Go host for callback %d", id))
		return nil, nil
	}
	f := obj.lookup(id)
	if f == nil {
		c.fail(fmt.Errorf("phaseoagent: no Go function for callback %d", id))
		return nil, nil
	}
	// The arguments belong to the call until it is completed: read in place when it is
	// served (readArgs).
	c.text = unsafe.Slice((*byte)(unsafe.Pointer(item.args)), int(item.args_len))
	return c, f
}

// readArgs reads the call's arguments where it is served: on the goroutine that runs it,
// not on the dispatcher or driver that started it, which then goes on to the next call
// (or polls the run) while this one is read on another core. False when they are
// unreadable: the call has failed.
func (c *hostCall) readArgs() bool {
	text := c.text
	c.text = nil
	if err := c.decodeCallArgs(text, hasRuntime(c.kind)); err != nil {
		c.fail(fmt.Errorf("phaseoagent: unreadable arguments: %v", err))
		return false
	}
	return true
}

// startItem is a call dispatched and not yet started: the call and its function (a pair,
// not a closure: one allocation less per call).
type startItem struct {
	c *hostCall
	f callbackFn
}

// startQueue holds the calls dispatched and not yet started, in call order.
var startQueue = make(chan startItem, 4096)

// startInOrder serves c with f on a goroutine, calls starting in the order given (docs/behaviour.md §2.9:
// calls start in call order). The scheduler runs new goroutines in no particular order
// (the newest first, others stolen by idle threads), so a goroutine does not take its own
// call: it takes the oldest call not yet started, and after it, while calls are waiting,
// the next ones (a goroutine whose stack has already grown; the goroutines started for
// those calls then find none and end). A goroutine is started for every call, and each
// takes its first call without waiting, so a call that blocks never holds another.
func startInOrder(c *hostCall, f callbackFn) {
	startQueue <- startItem{c, f}
	go runStarted()
}

func runStarted() {
	for {
		select {
		case item := <-startQueue:
			item.c.serve(item.f)
		default:
			return
		}
	}
}

// goPhaseoEvent runs on the core thread that emits the event (on_event is synchronous):
// it hands the event to the handler's goroutine and waits for it (see eventDelivery).
//
//export goPhaseoEvent
func goPhaseoEvent(userData C.uintptr_t, eventJSON *C.char) {
	h, _ := cgo.Handle(uintptr(userData)).Value().(*runHost)
	if h == nil || h.events == nil {
		return
	}
	h.events.deliver(parseEvent(C.GoString(eventJSON)))
}

//export goPhaseoDone
func goPhaseoDone(userData C.uintptr_t) {
	if h, ok := cgo.Handle(uintptr(userData)).Value().(*runHost); ok {
		h.finish()
	}
}

//export goPhaseoRelease
func goPhaseoRelease(userData C.uintptr_t) {
	handle := cgo.Handle(uintptr(userData))
	if h, ok := handle.Value().(*runHost); ok {
		h.finish()
	}
	handle.Delete()
}

//export goPhaseoCancel
func goPhaseoCancel(userData C.uintptr_t) {
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

// answer completes the call with a value. A value JSON cannot hold (a channel, NaN, a
// cycle, a MarshalJSON that fails or panics) completes it as invalid: tool_output_invalid
// for an executor, the callback's error elsewhere (ARCHITECTURE.md, C ABI).
func (c *hostCall) answer(v any) {
	text, err := encodeAnswer(v, c.order)
	var invalid string
	if err != nil {
		invalid = cleanText(err.Error()) // encodeAnswer's errors are its own, with a fixed text
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	c.done = true
	if err != nil {
		msg := cString(invalid)
		C.phaseo_call_complete_invalid(c.call, msg)
		freeC(msg)
		return
	}
	// Go memory, NUL-terminated: the core reads it during the call only (C.CString would
	// add two cgo calls, malloc and free, to every answer).
	c.wake(C.phaseo_go_complete(c.call, (*C.char)(unsafe.Pointer(&text[0])), false))
}

// wake wakes the driver an answer made ready. The driver running this call itself only
// gets the wake-up kept for it: it polls on when the call returns, unless a rescuer took
// over meanwhile, and then the rescuer takes it (drive.go).
func (c *hostCall) wake(driver C.uintptr_t) {
	d := uintptr(driver)
	if d == 0 || d != c.ownDriver {
		wakeDriver(d)
		return
	}
	if own := driverOf(d); own != nil {
		own.keepWake()
	}
}

// fail completes the call with an error. The error's text is taken before the call's
// lock (Error is host code: it may be slow, panic, or use the call) and made safe for the
// core by errorText: a typed nil or a panicking Error method is a failure that says so.
func (c *hostCall) fail(err error) {
	c.failText(errorText(err, callbackName(c.kind)))
}

// failText completes the call with an error message (valid UTF-8 without NUL).
func (c *hostCall) failText(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	c.done = true
	msg := cString(text)
	driver := C.phaseo_go_complete(c.call, msg, true)
	freeC(msg)
	c.wake(driver)
}

// serve runs f, the call's callback function, and makes sure the core is answered exactly
// once whatever f does. Every callbackFn answers before it returns; a panic that escapes
// it, or runtime.Goexit called by host code (t.FailNow in a test, a library ending its
// goroutine), unwinds through this deferred function, which answers with an error: the
// call fails on time with tool_failed (or the callback's error) instead of waiting for a
// timeout or hanging the run. The deferred function costs a few nanoseconds per call and
// reads no lock when f returned normally.
func (c *hostCall) serve(f callbackFn) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if r := recover(); r != nil {
			c.failText(panicText(r))
			return
		}
		c.failText("phaseoagent: " + callbackName(c.kind) + " called runtime.Goexit instead of returning")
	}()
	if !c.readArgs() {
		returned = true
		return
	}
	f(c)
	returned = true
}

// finish completes the call with a function's outcome.
func (c *hostCall) finish(v any, err error) {
	switch {
	case err != nil:
		c.fail(err)
	case v == pauseCall:
		c.pause()
	default:
		c.answer(v)
	}
}

// pauseAnswer is the answer of an interactive hook that did not complete its call.
type pauseAnswer struct{}

// pauseCall, answered by OnToolCalled's adapter, pauses the call for a person.
var pauseCall any = pauseAnswer{}

// pause answers an interactive hook's call with "not completed".
func (c *hostCall) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	c.done = true
	C.phaseo_call_pause(c.call)
}

// protect runs f, turning a panic into the call's error (never a crashed process).
func protect(f func() (any, error)) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			// Not fmt's %v: it recurses forever on a cyclic map (a fatal stack overflow).
			v, err = nil, errorString(panicText(r))
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
		rt.Attempt, rt.IdempotencyKey = a.attempt, a.idempotencyKey
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
		msg := cString(cleanText(encErr.Error()))
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
