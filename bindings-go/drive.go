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
)

// A run of Run, Continue or Recover is driven by the caller's goroutine: the core's
// future is polled here (phaseo_run_poll), not on a core thread. The calls a poll produces
// are started by this goroutine as soon as the poll returns, and the answer of a tool that
// makes the run ready wakes this goroutine through a channel, without a thread having to
// be woken (a run on a core thread costs two thread wake-ups per turn).
//
// When a poll leaves exactly one call of this run to start (a turn of one tool call), the
// driver runs it itself: starting a goroutine per call wakes an idle thread of the Go
// scheduler, which costs more than a trivial tool. The caller's goroutine never runs a
// call (Run must return when the run ends, whatever a call does): at the first such call
// it hands the driving to a driver goroutine of the run and waits for the end. A call may
// block for any time, and the run must still see its timeout, its cancellation or its
// other calls' answers on time: a wake-up that comes while the driver runs a call starts
// a new driver goroutine (a rescuer) that takes over the polling; the first one, once its
// call returns, leaves the run to it.

// driver is the waiting side of a driven run.
type driver struct {
	s      *started
	handle cgo.Handle
	// wake receives a value when the run can make progress (buffered: a wake-up that
	// comes before the driver waits is kept).
	wake chan struct{}
	// inline is set while the driving goroutine runs a call itself; whoever clears it
	// (the driver when its call returns, or a wake-up that starts a rescuer) decides who
	// drives on.
	inline atomic.Bool
	ended  chan struct{} // closed when the run ended
	once   sync.Once
	err    error // a poll that failed (set before ended is closed)
}

// wakeDriver wakes the driver whose cgo.Handle is handle (0: none; a driver whose run
// ended meanwhile is ignored).
func wakeDriver(handle uintptr) {
	if handle == 0 {
		return
	}
	if d := driverOf(handle); d != nil {
		d.notify()
	}
}

func driverOf(handle uintptr) (d *driver) {
	defer func() { _ = recover() }() // a deleted cgo.Handle panics
	d, _ = cgo.Handle(handle).Value().(*driver)
	return d
}

// notify tells the driver that the run can make progress; while the driver runs a call,
// a rescuer takes over the polling.
func (d *driver) notify() {
	d.keepWake()
	if d.inline.Load() && d.inline.CompareAndSwap(true, false) {
		go d.loop(false)
	}
}

// keepWake leaves a wake-up for whoever drives the run next, without starting a rescuer.
func (d *driver) keepWake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// freeBatches are the C buffers of drivers that ended, for the next drivers to take queued
// calls into (newBatch). Not a sync.Pool: a pool drops what it holds at a collection, and
// C memory dropped by the collector is never freed.
var freeBatches = make(chan []C.PhaseoGoCall, maxFreeBatches)

// maxFreeBatches bounds the buffers kept: one per run driven at once, up to this many.
const maxFreeBatches = 64

// getBatch is a kept buffer, or a new one when none is kept.
func getBatch() []C.PhaseoGoCall {
	select {
	case b := <-freeBatches:
		return b
	default:
		return newBatch()
	}
}

// putBatch keeps b for the next driver, or frees it when enough are kept.
func putBatch(b []C.PhaseoGoCall) {
	select {
	case freeBatches <- b:
	default:
		freeBatch(b)
	}
}

// drive polls the run until it ends. When ctx is done the run is cancelled (it ends
// "cancelled") and its event handler is no longer waited for, as in wait; that happens
// on a goroutine of its own, so that a handler that blocks inside a poll cannot hold it.
func (s *started) drive(ctx context.Context) error {
	d := &driver{s: s, wake: make(chan struct{}, 1), ended: make(chan struct{})}
	d.handle = cgo.NewHandle(d)
	defer d.handle.Delete()
	if ctx.Done() != nil {
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(fired)
			s.host.abandon()
			C.phaseo_run_cancel(s.run)
		})
		defer func() {
			if !stop() {
				<-fired // the run is freed after this returns: the cancel must be done with it
				if s.host.events != nil {
					s.host.events.waitIdle(abandonGrace)
				}
			}
		}()
	}
	d.loop(true)
	<-d.ended
	return d.err
}

// loop polls the run until it ends, or until the driving passed to another goroutine:
// from the caller's goroutine (onCaller) at the first call to run inline, from a driver
// goroutine to a rescuer while it ran a call.
func (d *driver) loop(onCaller bool) {
	batch := getBatch()
	defer putBatch(batch)
	for {
		st, err := status(func(e **C.char) C.enum_PhaseoStatus {
			return C.enum_PhaseoStatus(C.phaseo_go_poll(d.s.run, C.uintptr_t(d.handle), e))
		})
		if err != nil || st != C.PHASEO_STATUS_PENDING {
			takeAndDispatch(batch)
			d.once.Do(func() {
				d.err = err
				close(d.ended)
			})
			return
		}
		// The calls the poll queued (and any other run's) are started before anything
		// waits: the answer this driver waits for may be one of them.
		if c, f := d.takeOwn(batch); c != nil {
			if onCaller {
				go d.runThenLoop(c, f)
				return
			}
			if !d.runInline(c, f) {
				return // a rescuer drives on
			}
			continue
		}
		<-d.wake
	}
}

// runThenLoop is a driver goroutine of the run: it runs c, then drives on.
func (d *driver) runThenLoop(c *hostCall, f callbackFn) {
	if d.runInline(c, f) {
		d.loop(false)
	}
}

// takeOwn takes the queued items: when they are exactly one call of this run, it is
// returned to be run by the driver; anything else is dispatched.
func (d *driver) takeOwn(batch []C.PhaseoGoCall) (*hostCall, callbackFn) {
	dispatchMu.Lock()
	defer dispatchMu.Unlock()
	n := int(C.phaseo_go_take(&batch[0], C.int(len(batch))))
	if n == 1 && batch[0].kind != C.PHASEO_GO_WAKE && uintptr(batch[0].run) == d.s.runHandle {
		more := int(C.phaseo_go_take(&batch[1], C.int(len(batch)-1)))
		if more == 0 {
			return prepare(&batch[0])
		}
		n += more
	}
	for n > 0 {
		for i := range batch[:n] {
			dispatch(&batch[i])
		}
		n = int(C.phaseo_go_take(&batch[0], C.int(len(batch))))
	}
	return nil, nil
}

// runInline runs the run's only call on the driver's goroutine; false when a wake-up
// came meanwhile and a rescuer drives the run now.
func (d *driver) runInline(c *hostCall, f callbackFn) bool {
	d.inline.Store(true)
	// A wake-up kept from before the call is for something that happened since the poll
	// (a timeout, a cancellation): the call then runs on a goroutine of its own.
	select {
	case <-d.wake:
		if !d.inline.CompareAndSwap(true, false) {
			startInOrder(c, f)
			return false
		}
		startInOrder(c, f)
		return true
	default:
	}
	c.ownDriver = uintptr(d.handle)
	exited := true
	defer func() {
		// The call ended this goroutine (runtime.Goexit; serve has answered it): another
		// goroutine drives on, unless a rescuer already does.
		if exited && d.inline.CompareAndSwap(true, false) {
			go d.loop(false)
		}
	}()
	c.serve(f)
	exited = false
	if !d.inline.CompareAndSwap(true, false) {
		return false
	}
	// The call's own answer may have left a wake-up: the next poll sees it anyway.
	select {
	case <-d.wake:
	default:
	}
	return true
}
