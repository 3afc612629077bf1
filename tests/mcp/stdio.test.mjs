// `bulwark mcp` on stdio, driven by the official SDK's stdio client: embedded on a store
// (`--store DIR`), two such processes writing to one store at once (none of the 2N writes is
// lost), and the proxy to a live server (`--url`, key from $BULWARK_API_KEY).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { BIN, addPrincipal, cli, startServer, tempStore } from './harness.mjs';

// Entries written by each of the two processes; MCP_STRESS_N (at most 1000) to measure more.
const N = Math.min(Number(process.env.MCP_STRESS_N ?? 200), 1000);

async function stdioClient(args, env = {}) {
  const client = new Client({ name: 'bulwark-stdio-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: BIN, args, env, stderr: 'pipe' }));
  return client;
}

async function allIds(client) {
  const ids = [];
  let cursor;
  for (let page = 0; page < 1000; page++) {
    const r = await client.callTool({ name: 'get_memories', arguments: cursor ? { limit: 100, cursor } : { limit: 100 } });
    assert.equal(r.isError, undefined, JSON.stringify(r));
    ids.push(...r.structuredContent.memories.map((m) => m.id));
    cursor = r.structuredContent.next_cursor;
    if (cursor === null) return ids;
  }
  throw new Error('more than 1000 pages');
}

describe('bulwark mcp --store (embedded stdio)', () => {
  let tmp;
  before(() => {
    tmp = tempStore();
    cli(tmp.store, 'init');
  });
  after(() => tmp?.remove());

  test('tools work in-process, as a writer', async () => {
    const client = await stdioClient(['--store', tmp.store, '-n', 'notes', 'mcp']);
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.equal(names.length, 7);
    const added = await client.callTool({ name: 'add_memory', arguments: { text: 'the standup moved to 9:30' } });
    assert.equal(added.structuredContent.status, 'stored', JSON.stringify(added));
    assert.equal(added.structuredContent.namespace, 'notes');
    const found = await client.callTool({ name: 'search_memories', arguments: { query: 'when is standup' } });
    assert.equal(found.structuredContent.hits[0].id, added.structuredContent.id);
    assert.match(found.structuredContent.hits[0].principal, /^local:/);
    await client.close();
  });

  test(`two processes on one store each write ${N} entries and all ${2 * N} are kept`, async () => {
    const args = ['--store', tmp.store, '-n', 'shared', 'mcp'];
    const [a, b] = await Promise.all([stdioClient(args), stdioClient(args)]);
    const write = async (client, tag) => {
      const ids = [];
      for (let i = 0; i < N; i++) {
        const r = await client.callTool({ name: 'add_memory', arguments: { text: `process ${tag} wrote entry ${i} about the shared plan` } });
        assert.equal(r.isError, undefined, JSON.stringify(r));
        ids.push(r.structuredContent.id);
      }
      return ids;
    };
    const [idsA, idsB] = await Promise.all([write(a, 'A'), write(b, 'B')]);
    await Promise.all([a.close(), b.close()]);

    // Every write is in the store, whatever the write gate decided (stored or held for review).
    const exported = cli(tmp.store, '-n', 'shared', 'export', '--all-states').trim().split('\n').map((l) => JSON.parse(l));
    const inStore = new Set(exported.map((e) => e.id));
    assert.equal(inStore.size, 2 * N);
    for (const id of [...idsA, ...idsB]) assert.ok(inStore.has(id), id);
    // And get_memories pages over exactly the active ones.
    const reader = await stdioClient(args);
    const listed = await allIds(reader);
    await reader.close();
    const active = exported.filter((e) => e.state === 'active').map((e) => e.id);
    assert.deepEqual(new Set(listed), new Set(active));
  });
});

describe('bulwark mcp --url (stdio proxy)', () => {
  let tmp;
  let server;
  let writer;
  before(async () => {
    tmp = tempStore();
    server = await startServer(tmp.store);
    writer = addPrincipal(tmp.store, 'bob', 'writer', 'travel');
  });
  after(async () => {
    await server?.stop();
    tmp?.remove();
  });

  test('each message goes to POST /mcp with the key from the environment', async () => {
    const client = await stdioClient(['mcp', '--url', server.url], { BULWARK_API_KEY: writer.key });
    const added = await client.callTool({ name: 'add_memory', arguments: { text: 'Bob flies to Lisbon in May' } });
    assert.equal(added.structuredContent.namespace, 'travel');  // bob's only grant
    const found = await client.callTool({ name: 'search_memories', arguments: { query: 'Lisbon trip' } });
    assert.equal(found.structuredContent.hits[0].principal, 'bob');
    await client.close();

    // The URL may name /mcp and a default namespace, as HTTP client configs do.
    const admin = await stdioClient(['mcp', '--url', `${server.url}/mcp?namespace=ops`], { BULWARK_API_KEY: server.adminKey });
    const ops = await admin.callTool({ name: 'add_memory', arguments: { text: 'backups run at 02:00' } });
    assert.equal(ops.structuredContent.namespace, 'ops', JSON.stringify(ops));
    await admin.close();

    const anonymous = new Client({ name: 'no-key', version: '1.0.0' });
    await assert.rejects(
      anonymous.connect(new StdioClientTransport({ command: BIN, args: ['mcp', '--url', server.url], stderr: 'pipe' })),
      /HTTP 401/);
    await anonymous.close();
  });
});
