//! # phaseo-agent-c
//!
//! The C ABI of the Phaseo Agent SDK: a small, stable interface over the Rust core for any
//! language with a C FFI (the Go binding is built on it). Everything crosses as opaque
//! handles, JSON text and function pointers with a `user_data` pointer; host callbacks are
//! answered asynchronously with [`host::phaseo_call_complete`]. No run-loop logic lives
//! here: every behaviour is the core's.
//!
//! Ownership, threads and lifetimes are written down in `ARCHITECTURE.md` ("C ABI"); the
//! header `include/phaseo_agent.h` is generated from this crate by cbindgen.

#![warn(missing_docs)]
// Every exported function checks its pointers for NULL itself; the remaining contract
// (valid handles, NUL-terminated UTF-8) is the one the header documents.
#![allow(clippy::missing_safety_doc)]

pub mod adapters;
pub mod agent;
pub mod client;
pub mod drive;
pub mod error;
pub mod host;
pub mod queue;
pub mod queue_drive;
pub mod run;
pub mod schema;
pub mod serve;
pub mod store;
pub mod store_accessor;
pub mod stream;
pub mod stream_client;
pub mod tracing;
pub mod validator;

pub use error::PhaseoStatus;

// The run loop allocates many small, short-lived values on the core's threads, where
// glibc's per-thread arenas keep growing and trimming (as in the Python and Node bindings).
#[global_allocator]
static GLOBAL: phaseo_agent::allocator::MiMalloc = phaseo_agent::allocator::MiMalloc;
