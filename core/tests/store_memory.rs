//! The run-store suite against the in-memory store.
mod store_common;

store_suite!(store_common::Memory);
