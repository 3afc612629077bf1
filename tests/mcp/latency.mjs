// Measurement, not a test: the cost of the MCP layer over the HTTP API on one live server. Adds
// ENTRIES memories, then times ROUNDS sequential searches (keep-alive, one client) three ways:
// POST /v1/memories/search, POST /mcp tools/call search_memories (2026-07-28), and the same
// through the official SDK client (legacy era). Prints the median and p90 in milliseconds.
//   BULWARK_BIN=build/tools/bulwark node tests/mcp/latency.mjs [ROUNDS] [ENTRIES]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { modernPost, startServer, tempStore } from './harness.mjs';

const ROUNDS = Math.min(Number(process.argv[2] ?? 300), 5000);
const ENTRIES = Math.min(Number(process.argv[3] ?? 200), 5000);
const QUERIES = ['seat preference on flights', 'hotel near the old town', 'vegetarian restaurants', 'meeting time'];

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return `median ${at(0.5).toFixed(2)} ms, p90 ${at(0.9).toFixed(2)} ms (n=${s.length})`;
}

async function time(fn) {
  const samples = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    await fn(QUERIES[i % QUERIES.length]);
    samples.push(performance.now() - t0);
  }
  return stats(samples);
}

const tmp = tempStore();
const server = await startServer(tmp.store, ['--rate', '0']);
try {
  const auth = { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' };
  const entries = Array.from({ length: ENTRIES }, (_, i) => ({ text: `note ${i}: ${QUERIES[i % QUERIES.length]} detail ${i * 7}` }));
  const added = await fetch(`${server.url}/v1/memories`, { method: 'POST', headers: auth, body: JSON.stringify({ namespace: 'bench', entries }) });
  if (added.status !== 201) throw new Error(`batch add: ${added.status} ${await added.text()}`);

  const rest = await time(async (query) => {
    const r = await fetch(`${server.url}/v1/memories/search`, { method: 'POST', headers: auth, body: JSON.stringify({ namespace: 'bench', query, k: 5 }) });
    await r.text();
  });
  const mcp = await time((query) => modernPost(server.url, server.adminKey, 'tools/call', { name: 'search_memories', arguments: { query, namespace: 'bench' } }));
  const client = new Client({ name: 'latency', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?namespace=bench`), { requestInit: { headers: { Authorization: `Bearer ${server.adminKey}` } } }));
  const sdk = await time((query) => client.callTool({ name: 'search_memories', arguments: { query } }));
  await client.close();
  console.log(`${ENTRIES} entries, k=5, ${ROUNDS} sequential searches each`);
  console.log(`POST /v1/memories/search         ${rest}`);
  console.log(`POST /mcp search_memories (raw)  ${mcp}`);
  console.log(`POST /mcp via the SDK client     ${sdk}`);
} finally {
  await server.stop();
  tmp.remove();
}
