//! Node binding of the Phaseo Agent SDK: the private native module behind
//! `@phaseo/agent-sdk` (the public layer is `index.js` + `index.d.ts`).

mod adapters;
mod agent;
mod errors;
mod host;
mod spec;
