//! Driven runs for queue hosts: a run started driven (`phaseo_agent_run_driven`, …) that a
//! host using the dispatch queue (`phaseo_queue_host`) polls on its own threads.
//!
//! Why: a run on the core's runtime hands every tool call over three times — a core thread
//! queues it, the host's drain thread takes it and starts it on a worker thread, whose
//! answer wakes a core thread again. A turn of one call then costs three thread wake-ups.
//! Polled by the host with `phaseo_queue_run_poll` instead, the run does its work on the
//! polling thread, the calls the poll produces are kept for that thread
//! (`phaseo_queue_take_local`) instead of going through the queue, and the host may run a
//! call right there: an answer given meanwhile on that thread is not queued as a wake-up
//! (`phaseo_queue_inline_begin`), the host polls again when the call returns.
//!
//! Everything else a driven run's host receives still comes through the queue, in order:
//! its events, its `on_done`, its `release`, and the calls produced on other threads. When
//! the run can make progress and no thread is polling it, a `Wake` item carrying the poll's
//! `driver` is queued: the host polls the run again.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ffi::{c_char, c_void};

use crate::drive::phaseo_run_poll;
use crate::error::{guard, CError, PhaseoStatus};
use crate::queue::{push, PhaseoQueued, PhaseoQueuedKind};
use crate::run::PhaseoRun;

thread_local! {
    /// Whether this thread is inside `phaseo_queue_run_poll`: the calls produced meanwhile
    /// are this thread's to start.
    static POLLING: Cell<bool> = const { Cell::new(false) };
    /// The calls this thread's polls produced, not yet taken.
    static LOCAL: RefCell<VecDeque<PhaseoQueued>> = const { RefCell::new(VecDeque::new()) };
    /// The driver whose call this thread runs (`phaseo_queue_inline_begin`; NULL: none).
    static INLINE: Cell<*mut c_void> = const { Cell::new(std::ptr::null_mut()) };
}

/// Keeps an invoke produced while this thread polls a run for that thread; gives the item
/// back when it is to be queued.
pub(crate) fn keep_local(item: PhaseoQueued) -> Option<PhaseoQueued> {
    if item.kind != PhaseoQueuedKind::Invoke || !POLLING.with(Cell::get) {
        return Some(item);
    }
    LOCAL.with(|local| local.borrow_mut().push_back(item));
    None
}

/// The wake function of a run polled with `phaseo_queue_run_poll`: `data` is its driver.
unsafe extern "C" fn queue_wake(data: *mut c_void) {
    // The driver runs a call on this thread: it polls again when the call returns.
    if INLINE.with(Cell::get) == data {
        return;
    }
    push(
        PhaseoQueuedKind::Wake,
        data,
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
}

/// Restores the thread's polling flag when a poll ends (also by a panic in the core).
struct PollingSection(bool);

impl Drop for PollingSection {
    fn drop(&mut self) {
        POLLING.with(|p| p.set(self.0));
    }
}

/// Polls a driven run whose host is a queue host (see `phaseo_run_poll` for the statuses).
/// The calls the poll produces on this thread are not queued: take them with
/// `phaseo_queue_take_local` and start them. When the run can make progress later, a
/// `PHASEO_QUEUED_KIND_WAKE` item whose `user_data` is `driver` is queued (unless it happens
/// in a call `driver` runs on its own thread, see `phaseo_queue_inline_begin`): poll again.
/// One thread at a time per run.
#[no_mangle]
pub unsafe extern "C" fn phaseo_queue_run_poll(
    run: *const PhaseoRun,
    driver: *mut c_void,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let _section = PollingSection(POLLING.with(|p| p.replace(true)));
    // SAFETY: forwarded as given (the same contract).
    unsafe { phaseo_run_poll(run, Some(queue_wake), driver, out_error) }
}

/// Takes the next call this thread's polls produced into `*out_item` (an `Invoke` item, as
/// `phaseo_queue_next` gives it): `PHASEO_STATUS_OK`, or `PHASEO_STATUS_END` when none is
/// left. Never blocks.
#[no_mangle]
pub unsafe extern "C" fn phaseo_queue_take_local(
    out_item: *mut PhaseoQueued,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        if out_item.is_null() {
            return Err(CError::argument("out_item is NULL"));
        }
        match LOCAL.with(|local| local.borrow_mut().pop_front()) {
            Some(item) => {
                // SAFETY: checked non-NULL; the caller passes writable memory.
                unsafe { out_item.write(item) };
                Ok(PhaseoStatus::Ok)
            }
            None => Ok(PhaseoStatus::End),
        }
    })
}

/// Marks this thread as running a call for `driver` until `phaseo_queue_inline_end`: a
/// wake-up of `driver`'s run on this thread meanwhile is not queued (the driver polls the
/// run again when the call returns). Returns the mark it replaces, for
/// `phaseo_queue_inline_end`.
#[no_mangle]
pub extern "C" fn phaseo_queue_inline_begin(driver: *mut c_void) -> *mut c_void {
    INLINE.with(|i| i.replace(driver))
}

/// Ends the mark of `phaseo_queue_inline_begin`, restoring `previous` (what it returned).
#[no_mangle]
pub extern "C" fn phaseo_queue_inline_end(previous: *mut c_void) {
    INLINE.with(|i| i.set(previous));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invoke(tag: usize) -> PhaseoQueued {
        PhaseoQueued {
            kind: PhaseoQueuedKind::Invoke,
            user_data: tag as *mut c_void,
            call: std::ptr::null_mut(),
            event_json: std::ptr::null_mut(),
        }
    }

    fn take() -> Option<PhaseoQueued> {
        let mut item = invoke(0);
        // SAFETY: a writable item, no error output.
        let status = unsafe { phaseo_queue_take_local(&mut item, std::ptr::null_mut()) };
        (status == PhaseoStatus::Ok).then_some(item)
    }

    #[test]
    fn invokes_made_while_polling_stay_with_the_thread_in_order() {
        assert!(keep_local(invoke(1)).is_some(), "not polling: queued");
        {
            let _section = PollingSection(POLLING.with(|p| p.replace(true)));
            assert!(keep_local(invoke(2)).is_none());
            assert!(keep_local(invoke(3)).is_none());
            let mut done = invoke(4);
            done.kind = PhaseoQueuedKind::Done;
            assert!(keep_local(done).is_some(), "only invokes are kept");
        }
        assert!(!POLLING.with(Cell::get), "the section restores the flag");
        assert_eq!(take().map(|i| i.user_data as usize), Some(2));
        assert_eq!(take().map(|i| i.user_data as usize), Some(3));
        assert!(take().is_none());
        // SAFETY: NULL output: refused with an error.
        let refused =
            unsafe { phaseo_queue_take_local(std::ptr::null_mut(), std::ptr::null_mut()) };
        assert_eq!(refused, PhaseoStatus::Error);
    }

    #[test]
    fn inline_marks_nest() {
        let outer = 7usize as *mut c_void;
        let inner = 9usize as *mut c_void;
        let before = phaseo_queue_inline_begin(outer);
        assert!(before.is_null());
        let saved = phaseo_queue_inline_begin(inner);
        assert_eq!(saved, outer);
        phaseo_queue_inline_end(saved);
        assert_eq!(INLINE.with(Cell::get), outer);
        phaseo_queue_inline_end(before);
        assert!(INLINE.with(Cell::get).is_null());
    }
}
