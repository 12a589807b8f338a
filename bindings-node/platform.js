'use strict';
// Which prebuilt platform package (napi-rs layout) serves this process: its name, or null
// when none is published for this platform. Shared by native.js and scripts/install.js.

/** The platforms a prebuilt package exists for (`<platform>-<arch>-<abi>`). */
const SUPPORTED = ['linux-x64-gnu'];

/** Whether this Linux process runs on glibc, not musl: from `/usr/bin/ldd` (a script
 * naming its libc; fast), else from the process report (slower: it lists the process). */
function isGlibc() {
  try {
    const ldd = require('node:fs').readFileSync('/usr/bin/ldd', 'utf8');
    if (ldd.includes('musl')) return false;
    if (ldd.includes('GNU C Library') || ldd.includes('glibc')) return true;
  } catch {
    // No readable ldd: ask the process report.
  }
  try {
    if (process.report && typeof process.report.getReport === 'function') {
      process.report.excludeNetwork = true;
      const report = process.report.getReport();
      return Boolean(report && report.header && report.header.glibcVersionRuntime);
    }
  } catch {
    // Unknown: fall through.
  }
  return false;
}

/** This process's platform triple, as the platform packages are named. */
function platformTriple() {
  if (process.platform === 'linux') return `linux-${process.arch}-${isGlibc() ? 'gnu' : 'musl'}`;
  return `${process.platform}-${process.arch}`;
}

/** The package holding this platform's `.node` file, or null. */
function platformPackage() {
  const triple = platformTriple();
  return SUPPORTED.includes(triple) ? `@phaseo/agent-sdk-${triple}` : null;
}

module.exports = { SUPPORTED, platformPackage, platformTriple };
