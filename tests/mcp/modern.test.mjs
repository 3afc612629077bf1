// The stateless 2026-07-28 revision with the official v2 TypeScript client
// (@modelcontextprotocol/client): a client pinned to 2026-07-28 and one in 'auto' mode negotiate
// the modern era with server/discover and call tools with per-request _meta, over HTTP and over
// `bulwark mcp --store` (stdio).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { BIN, addPrincipal, cli, startServer, tempStore } from './harness.mjs';

function modernClient(mode) {
  return new Client({ name: 'bulwark-v2-test', version: '2.0.0' }, { versionNegotiation: { mode } });
}

describe('official v2 client, modern era', () => {
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

  for (const mode of [{ pin: '2026-07-28' }, 'auto']) {
    test(`HTTP, versionNegotiation ${JSON.stringify(mode)}`, async () => {
      const client = modernClient(mode);
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${writer.key}` } },
      }));
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.equal(client.getServerVersion().name, 'bulwark');
      assert.equal((await client.listTools()).tools.length, 7);
      const added = await client.callTool({ name: 'add_memory', arguments: { text: 'Bob booked a hotel near the Alfama' } });
      assert.equal(added.structuredContent.status, 'stored', JSON.stringify(added));
      const found = await client.callTool({ name: 'search_memories', arguments: { query: 'hotel Alfama' } });
      assert.ok(found.structuredContent.hits.length >= 1);
      assert.match(found.content[0].text, /text: "Bob booked a hotel near the Alfama"/);
      await client.close();
    });
  }

  test('stdio, bulwark mcp --store, pinned to 2026-07-28', async () => {
    const local = tempStore();
    cli(local.store, 'init');
    const client = modernClient({ pin: '2026-07-28' });
    await client.connect(new StdioClientTransport({ command: BIN, args: ['--store', local.store, 'mcp'], stderr: 'pipe' }));
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    const added = await client.callTool({ name: 'add_memory', arguments: { text: 'the printer on floor 2 is broken' } });
    assert.equal(added.structuredContent.namespace, 'default');
    await client.close();
    local.remove();
  });
});
