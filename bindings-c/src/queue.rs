//! The dispatch queue: a [`PhaseoHost`] whose callbacks never run host code on a core
//! thread. Each callback becomes an item of one process-wide queue that a thread of the
//! host's own drains with `phaseo_queue_next`.
//!
//! For runtimes where a foreign thread must not enter managed code: Mono attaches every
//! foreign thread that calls a managed function pointer as a runtime thread and, at exit,
//! waits forever for the core's worker threads (which never end). A host using the queue
//! runs its callbacks on its own drain thread instead (the C# binding does).
//!
//! Differences from a direct host: `on_event` does not make the run wait for the host's
//! handler (events still arrive in order, and before the run's `on_done`).

use std::collections::VecDeque;
use std::ffi::{c_char, c_void, CStr};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use crate::error::{guard, owned_string, PhaseoStatus};
use crate::host::{phaseo_call_on_cancel, PhaseoCall, PhaseoHost};

/// What a queued item reports (which callback of the host it stands for).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseoQueuedKind {
    /// `invoke`: `call` is the call (owned by the host until `phaseo_call_complete`).
    Invoke = 0,
    /// `on_event`: `event_json` is the event (owned by the host: `phaseo_string_free`).
    Event = 1,
    /// `on_done`.
    Done = 2,
    /// `release`: the SDK no longer uses `user_data`.
    Release = 3,
    /// A call registered with `phaseo_queue_on_cancel` was cancelled.
    Cancel = 4,
    /// Posted by the host itself with `phaseo_queue_post` (a marker: every item queued
    /// before it has been taken).
    Post = 5,
    /// A run polled with `phaseo_queue_run_poll` can make progress: poll it again.
    /// `user_data` is the `driver` given there.
    Wake = 6,
}

/// One queued callback.
#[repr(C)]
pub struct PhaseoQueued {
    /// Which callback.
    pub kind: PhaseoQueuedKind,
    /// The `user_data` given to `phaseo_queue_host` (or `phaseo_queue_on_cancel`).
    pub user_data: *mut c_void,
    /// The call (`Invoke` only, else NULL).
    pub call: *mut PhaseoCall,
    /// The event's JSON text (`Event` only, else NULL), freed with `phaseo_string_free`.
    pub event_json: *mut c_char,
}

struct Item(PhaseoQueued);

// SAFETY: the pointers are handed to the host as they were given; the ABI requires
// `user_data` to be usable from any thread, calls may be completed from any thread, and
// the event text is a fresh allocation owned by whoever takes the item.
unsafe impl Send for Item {}

struct Queue {
    items: Mutex<VecDeque<Item>>,
    ready: Condvar,
}

fn queue() -> &'static Queue {
    static QUEUE: OnceLock<Queue> = OnceLock::new();
    QUEUE.get_or_init(|| Queue {
        items: Mutex::new(VecDeque::new()),
        ready: Condvar::new(),
    })
}

/// Queues an item (or keeps it for the thread that polls its run: `queue_drive`).
pub(crate) fn push(
    kind: PhaseoQueuedKind,
    user_data: *mut c_void,
    call: *mut PhaseoCall,
    event_json: *mut c_char,
) {
    let Some(item) = crate::queue_drive::keep_local(PhaseoQueued {
        kind,
        user_data,
        call,
        event_json,
    }) else {
        return;
    };
    let q = queue();
    let mut items = q.items.lock().unwrap_or_else(|e| e.into_inner());
    items.push_back(Item(item));
    drop(items);
    q.ready.notify_one();
}

unsafe extern "C" fn queue_invoke(user_data: *mut c_void, call: *mut PhaseoCall) {
    push(
        PhaseoQueuedKind::Invoke,
        user_data,
        call,
        std::ptr::null_mut(),
    );
}

unsafe extern "C" fn queue_event(user_data: *mut c_void, event_json: *const c_char) {
    if event_json.is_null() {
        return;
    }
    // SAFETY: the SDK passes a NUL-terminated string valid during this call.
    let text = unsafe { CStr::from_ptr(event_json) }
        .to_string_lossy()
        .into_owned();
    push(
        PhaseoQueuedKind::Event,
        user_data,
        std::ptr::null_mut(),
        owned_string(text),
    );
}

unsafe extern "C" fn queue_done(user_data: *mut c_void) {
    push(
        PhaseoQueuedKind::Done,
        user_data,
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
}

unsafe extern "C" fn queue_release(user_data: *mut c_void) {
    push(
        PhaseoQueuedKind::Release,
        user_data,
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
}

unsafe extern "C" fn queue_cancel(user_data: *mut c_void) {
    push(
        PhaseoQueuedKind::Cancel,
        user_data,
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
}

/// A host whose callbacks are queued for `phaseo_queue_next` instead of being called:
/// `invoke` and `release` always, `on_event` when `events`, `on_done` when `done`.
#[no_mangle]
pub extern "C" fn phaseo_queue_host(
    user_data: *mut c_void,
    events: bool,
    done: bool,
) -> PhaseoHost {
    PhaseoHost {
        user_data,
        invoke: Some(queue_invoke),
        on_event: if events { Some(queue_event) } else { None },
        on_done: if done { Some(queue_done) } else { None },
        release: Some(queue_release),
    }
}

/// Registers the call's cancellation as a queued `Cancel` item carrying `user_data` (as
/// `phaseo_call_on_cancel`, which it uses).
#[no_mangle]
pub unsafe extern "C" fn phaseo_queue_on_cancel(
    call: *mut PhaseoCall,
    user_data: *mut c_void,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    // SAFETY: forwarded as given (the same contract).
    unsafe { phaseo_call_on_cancel(call, Some(queue_cancel), user_data, out_error) }
}

/// Queues a `Post` item carrying `user_data`, after every item queued so far: when the host
/// takes it, it has taken those (e.g. every event of a streamed run whose result it holds).
#[no_mangle]
pub extern "C" fn phaseo_queue_post(user_data: *mut c_void) {
    push(
        PhaseoQueuedKind::Post,
        user_data,
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
}

/// Takes the next queued item into `*out_item`: `PHASEO_STATUS_OK`, or `PHASEO_STATUS_END`
/// when none came within `timeout_ms` (wait again). Items come in the order the core
/// produced them. Blocks: call it from the host's own drain thread.
#[no_mangle]
pub unsafe extern "C" fn phaseo_queue_next(
    timeout_ms: u32,
    out_item: *mut PhaseoQueued,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        if out_item.is_null() {
            return Err(crate::error::CError::argument("out_item is NULL"));
        }
        let q = queue();
        let items = q.items.lock().unwrap_or_else(|e| e.into_inner());
        let (mut items, _) = q
            .ready
            .wait_timeout_while(items, Duration::from_millis(u64::from(timeout_ms)), |i| {
                i.is_empty()
            })
            .unwrap_or_else(|e| e.into_inner());
        match items.pop_front() {
            Some(Item(item)) => {
                // SAFETY: checked non-NULL; the caller passes writable memory.
                unsafe { out_item.write(item) };
                Ok(PhaseoStatus::Ok)
            }
            None => Ok(PhaseoStatus::End),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next() -> Option<PhaseoQueued> {
        let mut item = PhaseoQueued {
            kind: PhaseoQueuedKind::Done,
            user_data: std::ptr::null_mut(),
            call: std::ptr::null_mut(),
            event_json: std::ptr::null_mut(),
        };
        // SAFETY: a writable item, no error output.
        let status = unsafe { phaseo_queue_next(50, &mut item, std::ptr::null_mut()) };
        (status == PhaseoStatus::Ok).then_some(item)
    }

    #[test]
    fn callbacks_become_items_in_order_and_an_empty_queue_times_out() {
        let tag = 0x5eed as *mut c_void;
        let host = phaseo_queue_host(tag, true, false);
        assert!(host.on_done.is_none());
        let text = std::ffi::CString::new(r#"{"type":"run.started"}"#).unwrap();
        // SAFETY: the queue host's own callbacks, called as the SDK would.
        unsafe {
            host.on_event.unwrap()(tag, text.as_ptr());
            host.release.unwrap()(tag);
        }
        let event = next().expect("the event");
        assert_eq!(event.kind, PhaseoQueuedKind::Event);
        assert_eq!(event.user_data, tag);
        // SAFETY: the item's text is ours to read and free.
        let copied = unsafe { CStr::from_ptr(event.event_json) }
            .to_str()
            .unwrap()
            .to_owned();
        unsafe { crate::error::phaseo_string_free(event.event_json) };
        assert_eq!(copied, r#"{"type":"run.started"}"#);
        assert_eq!(next().expect("the release").kind, PhaseoQueuedKind::Release);
        phaseo_queue_post(tag);
        let marker = next().expect("the marker");
        assert_eq!(
            (marker.kind, marker.user_data),
            (PhaseoQueuedKind::Post, tag)
        );
        assert!(next().is_none());
    }
}
