// The official MCP conformance suite (@modelcontextprotocol/conformance, `server` mode, suite
// "active") against a live `bulwark serve`. The suite's client sends no API key, so this server
// runs with --insecure-dev (anonymous requests are admins; loopback only); the key handling is
// covered by http.test.mjs. Scenarios that need the reference server's own tools, resources or
// prompts are listed in conformance-baseline.yml; the suite fails on any other failure and on a
// listed scenario that passes. Node 20 lacks fs.globSync, which the package imports: it is loaded
// with node20-register.mjs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { startServer, tempStore } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

let tmp;
let server;
before(async () => {
  tmp = tempStore();
  server = await startServer(tmp.store, ['--insecure-dev']);
});
after(async () => {
  await server?.stop();
  tmp?.remove();
});

test('conformance suite: every scenario passes except the baseline', () => {
  const run = spawnSync(process.execPath, [
    '--import', path.join(here, 'node20-register.mjs'),
    path.join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'),
    'server', '--url', `${server.url}/mcp`,
    '--expected-failures', path.join(here, 'conformance-baseline.yml'),
  ], { cwd: tmp.dir, encoding: 'utf8', timeout: 240000 });
  const summary = run.stdout.slice(run.stdout.indexOf('=== SUMMARY ==='));
  assert.equal(run.status, 0, `${summary}\n${run.stderr}`);
  for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) {
    assert.match(summary, new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`), summary);
  }
});
