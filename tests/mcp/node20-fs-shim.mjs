// node:fs plus the fs.globSync that Node 22 added. @modelcontextprotocol/conformance imports it
// (only its `tier-check` command calls it); Debian's and this machine's Node is 20, so the
// conformance suite is loaded with this module in place of node:fs (see node20-hooks.mjs).
import fs from 'node:fs';

export * from 'node:fs';
export default fs;

export function globSync() {
  throw new Error('fs.globSync needs Node 22 (the conformance tier-check command); not used by `server`');
}
