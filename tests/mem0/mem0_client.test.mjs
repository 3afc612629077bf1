// The real `mem0ai` npm client (MemoryClient, pinned in package-lock.json) against a local
// `bulwark serve` on 127.0.0.1 (issue #15 point 3; doc/mem0.md). Registered with CTest
// (tests/CMakeLists.txt), which passes the binary as BULWARK_BIN. Telemetry is off through the
// client's documented switch MEM0_TELEMETRY=false, and every fetch the client makes is checked to go
// to the local server: nothing reaches the internet.
import assert from 'node:assert/strict';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {after, before, test} from 'node:test';

import {startServer} from '../bulwark_server.mjs';

process.env.MEM0_TELEMETRY = 'false';  // read when the module loads: set before the import below

let server;
let host;
let adminKey;
const dir = mkdtempSync(join(tmpdir(), 'bulwark-mem0-'));
const foreignCalls = [];
const realFetch = globalThis.fetch;
globalThis.fetch = (url, options) => {
  const target = String(url instanceof Request ? url.url : url);
  if (!target.startsWith(host)) {
    foreignCalls.push(target);
    return Promise.reject(new Error(`blocked non-local fetch to ${target}`));
  }
  return realFetch(url, options);
};

async function admin(method, path, body) {
  const response = await realFetch(`${host}${path}`, {
    method,
    headers: {'Authorization': `Bearer ${adminKey}`, 'Content-Type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {status: response.status, json: await response.json()};
}

let MemoryClient;
before(async () => {
  server = await startServer(join(dir, 'store'));
  host = server.url;
  adminKey = server.adminKey;
  ({MemoryClient} = await import('mem0ai'));
});

after(async () => {
  await server?.stop();
  rmSync(dir, {recursive: true, force: true});
});

test('the Mem0 client works against Bulwark by changing its host', async () => {
  const made = await admin('POST', '/v1/admin/principals', {name: 'agent-1', role: 'writer', namespaces: ['alice']});
  assert.equal(made.status, 201);
  const client = new MemoryClient({apiKey: made.json.api_key, host});
  await client.ping();

  const added = await client.add(
      [{role: 'user', content: 'I prefer a window seat on long flights'},
       {role: 'assistant', content: 'Noted: window seat'}],
      {userId: 'alice', metadata: {category: 'travel'}, infer: false});
  assert.equal(added.length, 2, 'infer is off: each message is stored verbatim');
  assert.equal(added[0].event, 'ADD');
  assert.equal(added[0].memory, 'I prefer a window seat on long flights');
  const id = added[0].id;

  const found = await client.search('which seat on flights?', {filters: {user_id: 'alice'}, topK: 1});
  assert.equal(found.results.length, 1);
  assert.equal(found.results[0].id, id);
  assert.equal(found.results[0].userId, 'alice');
  assert.deepEqual(found.results[0].metadata, {category: 'travel'});
  assert.ok(found.results[0].score > 0);

  const all = await client.getAll({filters: {AND: [{user_id: 'alice'}]}, page: 1, pageSize: 1});
  assert.equal(all.count, 2);
  assert.equal(all.results.length, 1);
  assert.ok(all.next);

  const one = await client.get(id);
  assert.equal(one.memory, 'I prefer a window seat on long flights');
  const updated = await client.update(id, {text: 'I prefer an aisle seat'});
  assert.equal(updated.memory, 'I prefer an aisle seat');
  const history = await client.history(id);
  assert.deepEqual(history.map((h) => h.event), ['ADD', 'UPDATE']);
  assert.equal(history[1].oldMemory, 'I prefer a window seat on long flights');
  assert.equal(history[1].newMemory, 'I prefer an aisle seat');

  const removed = await client.delete(id);
  assert.match(removed.message, /deleted/);
  await assert.rejects(client.get(id), /not found/);
  assert.deepEqual(foreignCalls, [], 'no call left the machine');
});

test('namespaces stay hard partitions through the Mem0 paths', async () => {
  const made = await admin('POST', '/v1/admin/principals', {name: 'agent-2', role: 'writer', namespaces: ['carol']});
  const client = new MemoryClient({apiKey: made.json.api_key, host});
  await assert.rejects(client.search('anything', {filters: {OR: [{user_id: 'carol'}, {user_id: 'alice'}]}}),
                       /OR filters are refused/);
  // Another user's namespace answers like one that does not exist.
  const other = await client.search('seat', {filters: {user_id: 'alice'}}).catch((e) => e);
  const missing = await client.search('seat', {filters: {user_id: 'nobody'}}).catch((e) => e);
  assert.ok(other instanceof Error && missing instanceof Error);
  assert.equal(other.message, missing.message);
  assert.match(other.message, /namespace_not_found/);
  await assert.rejects(client.add('x', {userId: 'alice'}), /namespace_not_found/);
  // A writer may not delete everything; an admin may.
  await client.add('carol likes tea', {userId: 'carol', infer: false});
  await assert.rejects(client.deleteAll({userId: 'carol'}), /forbidden/);
  const adminClient = new MemoryClient({apiKey: adminKey, host});
  const cleared = await adminClient.deleteAll({userId: 'carol'});
  assert.match(cleared.message, /deleted/);
  const left = await adminClient.getAll({filters: {user_id: 'carol'}});
  assert.equal(left.count, 0);
  assert.deepEqual(foreignCalls, [], 'no call left the machine');
});
