#!/usr/bin/env node
// Builds the native addon from source with cargo (release by default, `--debug` for
// development, `--profile=<name>` for another cargo profile such as `dist`) and places it
// next to index.js as `phaseo-agent.node`, where native.js looks first. Run by `make node`
// (debug), `npm run build`, and by the npm `install` script only when asked
// (PHASEO_BUILD_FROM_SOURCE=1): needs the repository's sources and a Rust toolchain.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const pkgDir = path.resolve(__dirname, '..');
if (!fs.existsSync(path.join(pkgDir, 'Cargo.toml'))) {
  console.error('phaseo-agent: building from source needs the repository checkout (bindings-node/ with Cargo.toml):'
    + ' PHASEO_BUILD_FROM_SOURCE=1 npm install <repository>/bindings-node');
  process.exit(1);
}
const debug = process.argv.includes('--debug');
const profileArg = process.argv.find((a) => a.startsWith('--profile='));
const profile = debug ? 'debug' : profileArg ? profileArg.slice('--profile='.length) : 'release';
const cargo = process.env.CARGO || 'cargo';
const args = ['build', '-p', 'phaseo-agent-node', '--message-format=json-render-diagnostics'];
if (profile === 'release') args.push('--release');
else if (profile !== 'debug') args.push('--profile', profile);
const output = execFileSync(cargo, args, { cwd: pkgDir, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 1 << 28 });
let library = null;
for (const line of output.split('\n')) {
  if (!line.startsWith('{')) continue;
  const message = JSON.parse(line);
  if (message.reason === 'compiler-artifact' && message.target && message.target.name === 'phaseo_agent_node') {
    library = message.filenames.find((f) => /\.(so|dylib|dll)$/.test(f)) || library;
  }
}
if (!library) {
  console.error('phaseo-agent: cargo did not report the native library');
  process.exit(1);
}
const target = path.join(pkgDir, 'phaseo-agent.node');
fs.copyFileSync(library, target + '.tmp');
fs.renameSync(target + '.tmp', target);
console.error(`phaseo-agent: built ${path.relative(pkgDir, target)} (${profile})`);
