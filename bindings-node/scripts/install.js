#!/usr/bin/env node
// The npm `install` script. It never runs cargo unless asked: the published package gets
// its native module from the prebuilt platform package (an optionalDependency, see
// platform.js). With PHASEO_BUILD_FROM_SOURCE=1 (or `npm install --build-from-source`) it
// builds the addon from the repository's sources instead (needs a Rust toolchain).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { platformPackage, platformTriple } = require('../platform.js');

const pkgDir = path.resolve(__dirname, '..');
const fromSource = ['1', 'true'].includes(String(process.env.PHASEO_BUILD_FROM_SOURCE || '').toLowerCase())
  || String(process.env.npm_config_build_from_source || '') === 'true';

if (fromSource) {
  require('./build.js');
} else if (!fs.existsSync(path.join(pkgDir, 'phaseo-agent.node'))) {
  const wanted = platformPackage();
  let found = false;
  if (wanted !== null) {
    try {
      require.resolve(`${wanted}/package.json`, { paths: [pkgDir] });
      found = true;
    } catch {
      found = false;
    }
  }
  if (!found) {
    console.warn(wanted === null
      ? `@phaseo/agent-sdk: no prebuilt native module for ${platformTriple()}; build it from source with PHASEO_BUILD_FROM_SOURCE=1 (needs Rust)`
      : `@phaseo/agent-sdk: the native module package ${wanted} is not installed (optional dependencies omitted?); install it, or build from source with PHASEO_BUILD_FROM_SOURCE=1 (needs Rust)`);
  }
}
