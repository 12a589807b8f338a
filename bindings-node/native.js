'use strict';
// The private native module (Rust, napi-rs). Looked up, in order:
//   1. `phaseo-agent.node` next to this file: a build from source (`make node`,
//      `npm run build`, or an install with PHASEO_BUILD_FROM_SOURCE=1);
//   2. the prebuilt platform package (napi-rs layout), an optionalDependency of the
//      published package: `@phaseo/agent-sdk-linux-x64-gnu` on glibc Linux x64.
// `PHASEO_NATIVE_LIBRARY` names a native library to load instead of both (e.g. a cargo
// build of another profile, to compare them).
const fs = require('node:fs');
const path = require('node:path');
const { platformPackage, SUPPORTED } = require('./platform.js');

function load() {
  const override = process.env.PHASEO_NATIVE_LIBRARY;
  if (override) {
    // dlopen, not require: the file may keep cargo's name (`libphaseo_agent_node.so`).
    const module = { exports: {} };
    process.dlopen(module, path.resolve(override));
    return module.exports;
  }
  const local = path.join(__dirname, 'phaseo-agent.node');
  if (fs.existsSync(local)) return require(local);
  const wanted = platformPackage();
  if (wanted === null) {
    throw new Error(`@phaseo/agent-sdk has no prebuilt native module for ${process.platform}-${process.arch}`
      + ` (prebuilt: ${SUPPORTED.join(', ')}). Build it from source with a Rust toolchain: `
      + 'PHASEO_BUILD_FROM_SOURCE=1 npm install <repository>/bindings-node');
  }
  try {
    return require(wanted);
  } catch (error) {
    if (error && error.code === 'MODULE_NOT_FOUND' && String(error.message).includes(wanted)) {
      throw new Error(`@phaseo/agent-sdk needs its native module package ${wanted} (an optional dependency:`
        + ` install it with \`npm install ${wanted}\`, and do not install with --omit=optional or --no-optional),`
        + ' or a build from source: PHASEO_BUILD_FROM_SOURCE=1 npm install <repository>/bindings-node (in the repository: make node)');
    }
    throw error;
  }
}

module.exports = load();
