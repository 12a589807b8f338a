'use strict';
// The private native module (Rust, napi-rs), built by scripts/build.js.
module.exports = require('./phaseo-agent.node');
