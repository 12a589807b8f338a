//! Kotlin (JVM, Android) and Swift (iOS, macOS) binding of the Phaseo Agent SDK, built with
//! uniffi 0.32 proc-macros (library mode: `uniffi-bindgen generate <this cdylib>`).
//!
//! Thin by design (see `ARCHITECTURE.md`): definitions and options cross as uniffi records,
//! open-ended values (tool input and output, context, events, requests, state) as JSON text,
//! and every host-implemented hook is a uniffi *foreign trait* declared here (`traits.rs`)
//! with one small adapter to the matching core trait. Errors are one uniffi error enum
//! carrying the docs/behaviour.md §9 code. Run-loop logic lives in the core only.

// `PhaseoError` is plain data crossing the FFI (uniffi lowers it field by field, so it
// cannot be boxed); it is built once per failed call, on the cold path.
#![allow(clippy::result_large_err)]

uniffi::setup_scaffolding!();

// The run loop allocates many small, short-lived values, and on the JVM they are often freed
// on another thread than the one that made them (a result released by the cleaner's
// thread): glibc's arenas then spend more time consolidating than the run spends working.
#[global_allocator]
static GLOBAL: phaseo_agent::allocator::MiMalloc = phaseo_agent::allocator::MiMalloc;

mod api;
mod conversions;
mod defs;
mod errors;
mod jvm_dispatch;
mod jvm_drive;
mod mcp;
mod serve;
mod start_order;
mod store;
mod tracing;
mod traits;

pub use api::*;
pub use defs::*;
pub use errors::*;
pub use mcp::*;
pub use serve::*;
pub use store::*;
pub use tracing::*;
pub use traits::*;
