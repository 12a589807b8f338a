package phaseoagent

import (
	"sync"
	"time"
)

// eventDelivery runs an EventHandler on Go goroutines, one event after the other, in
// order. The core's on_event is called on a core thread that is not Go's: a handler run
// there could not call runtime.Goexit (fatal on a thread Go did not create) and, blocked,
// would hold the core thread past the run's cancellation. So the core thread (or a
// stream's pump) only queues the event and waits until the handler has returned — or
// until the run is abandoned (its ctx is done, StreamResult.Cancel), after which nothing
// waits for the handler any more.
//
// After the abandonment the run's end no longer waits for the handler, but Run (and a
// stream's Result) still gives a handler that keeps up the events that came meanwhile,
// run.cancelled included: it waits until the queue is delivered, or abandonGrace, at
// most, for a handler that does not return.
//
// A goroutine is started when an event arrives and none is delivering, and ends when the
// queue is empty: a run without events, or between events, holds none.
type eventDelivery struct {
	handler EventHandler
	mu      sync.Mutex
	queue   []pendingEvent
	busy    bool          // a goroutine is delivering the queue
	idle    chan struct{} // closed when busy turns false (made by waitIdle)

	abandonOnce sync.Once
	abandoned   chan struct{} // closed when nobody waits for the handler any more
}

// pendingEvent is an event queued for the handler; done is closed once it was handled.
type pendingEvent struct {
	event AgentEvent
	done  chan struct{}
}

func newEventDelivery(handler EventHandler) *eventDelivery {
	return &eventDelivery{handler: handler, abandoned: make(chan struct{})}
}

// deliver hands e to the handler and waits until the handler returned (panicked, or
// ended its goroutine) or the delivery was abandoned.
func (d *eventDelivery) deliver(e AgentEvent) {
	p := pendingEvent{event: e, done: make(chan struct{})}
	d.mu.Lock()
	d.queue = append(d.queue, p)
	start := !d.busy
	d.busy = true
	d.mu.Unlock()
	if start {
		go d.drain()
	}
	select {
	case <-p.done:
	case <-d.abandoned:
	}
}

// abandon stops every wait for the handler, now and later: the events still queued, and
// those that come, are handed to it in order when (if) it returns.
func (d *eventDelivery) abandon() {
	d.abandonOnce.Do(func() { close(d.abandoned) })
}

// abandonGrace is how long Run, once its run ended after an abandonment, still waits for
// the handler to take the events queued meanwhile: far more than a handler that keeps up
// needs (microseconds per event), short enough for a run to end on time.
const abandonGrace = 100 * time.Millisecond

// waitIdle waits until every queued event was handled, or limit passed.
func (d *eventDelivery) waitIdle(limit time.Duration) {
	d.mu.Lock()
	if !d.busy {
		d.mu.Unlock()
		return
	}
	if d.idle == nil {
		d.idle = make(chan struct{})
	}
	idle := d.idle
	d.mu.Unlock()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	}
}

// drain hands the queued events to the handler until the queue is empty.
func (d *eventDelivery) drain() {
	for {
		d.mu.Lock()
		if len(d.queue) == 0 {
			d.busy = false
			if d.idle != nil {
				close(d.idle)
				d.idle = nil
			}
			d.mu.Unlock()
			return
		}
		p := d.queue[0]
		d.queue[0] = pendingEvent{}
		d.queue = d.queue[1:]
		d.mu.Unlock()
		if !d.handle(p) {
			return // the handler called runtime.Goexit: a new goroutine took over
		}
	}
}

// handle runs the handler for one event. A panic is dropped (an event has no call to
// fail, and the run must not depend on its listener); runtime.Goexit ends this goroutine,
// so the deferred function starts another for the rest of the queue.
func (d *eventDelivery) handle(p pendingEvent) (returned bool) {
	defer func() {
		if recover() != nil {
			returned = true
		}
		close(p.done)
		if !returned {
			go d.drain()
		}
	}()
	d.handler(p.event)
	return true
}
