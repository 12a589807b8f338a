//! Node binding of the Phaseo Agent SDK: the private native module behind
//! `@phaseo/agent-sdk` (the public layer is `index.js` + `index.d.ts`).

// napi-rs registers exports outside test builds, so a test build sees them as unused.
#![cfg_attr(test, allow(dead_code))]

mod adapters;
mod agent;
mod errors;
mod host;
mod spec;
