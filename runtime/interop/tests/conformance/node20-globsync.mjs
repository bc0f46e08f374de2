// Node `--import` preload for the conformance suite on Node 20: the suite's bundle names
// `globSync` in its static `import ... from "fs"`, an export Node added in 22, so on 20 the
// whole CLI fails to link before running anything. Only its `tier-check` command ever calls
// globSync, so a stub that throws is enough for `server`, `list` and `client`.
//
// This one file is both the preload and the loader hooks it registers (Node runs hooks in a
// separate thread, so they have to live in a module of their own; this module is it).
// On Node >= 22 it registers nothing.
import fs from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

// The `fs` the bundle gets instead: all of node:fs, plus the missing name.
const STAND_IN = 'mcp-conformance-shim:fs';
const STAND_IN_SOURCE = `
import fs from 'node:fs';
export * from 'node:fs';
export default fs;
export function globSync() {
  throw new Error('fs.globSync needs Node >= 22 (the conformance suite uses it only in tier-check)');
}
`;

// Only the suite's own modules are redirected, so nothing else sees a different `fs`.
const SUITE = '/node_modules/@modelcontextprotocol/conformance/';

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes(SUITE)) {
    return { url: STAND_IN, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (url === STAND_IN) {
    return { format: 'module', source: STAND_IN_SOURCE, shortCircuit: true };
  }
  return nextLoad(url, context);
}

// The hooks thread imports this module too; only the preload registers it.
if (isMainThread && typeof fs.globSync !== 'function') {
  register(import.meta.url);
}
