#!/usr/bin/env node
// Builds the native addon from source with cargo (release by default, `--debug` for
// development) and places it next to index.js as `phaseo-agent.node`. Used by the npm
// `install` script, so `npm install <path>/bindings-node` builds on a fresh machine.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const pkgDir = path.resolve(__dirname, '..');
const debug = process.argv.includes('--debug');
const cargo = process.env.CARGO || 'cargo';
const args = ['build', '-p', 'phaseo-agent-node', '--message-format=json-render-diagnostics'];
if (!debug) args.push('--release');
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
console.error(`phaseo-agent: built ${path.relative(pkgDir, target)} (${debug ? 'debug' : 'release'})`);
