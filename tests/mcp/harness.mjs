// The MCP tests' harness: a fresh store in a temp directory, principals made with the CLI, the real
// `bulwark serve` (startServer, from tests/bulwark_server.mjs) and modern-era MCP requests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN, startServer } from '../bulwark_server.mjs';

export { BIN, startServer };

export function tempStore() {
  const dir = mkdtempSync(path.join(tmpdir(), 'bulwark-mcp-'));
  return { dir, store: path.join(dir, 'store'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function cli(store, ...args) {
  return execFileSync(BIN, ['--store', store, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// A principal and its first key: {name, key}.
export function addPrincipal(store, name, role, namespaces) {
  const out = cli(store, '--json', 'principals', 'add', name, '--role', role, '--namespaces', namespaces);
  return { name, key: JSON.parse(out).api_key };
}

export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bulwark-node-test', version: '1.0.0' },
};

// One modern-era POST /mcp with the headers the 2026-07-28 transport requires (override or drop
// them with `headers`). Resolves to {status, body (parsed JSON or null)}.
export async function modernPost(url, key, method, params = {}, { headers = {}, id = 1, path = '/mcp' } = {}) {
  const h = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': method,
    ...(key ? { Authorization: `Bearer ${key}` } : {}),
    ...(method === 'tools/call' ? { 'Mcp-Name': params.name } : {}),
    ...headers,
  };
  for (const [k, v] of Object.entries(h)) if (v === undefined) delete h[k];
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: MODERN_META } };
  const res = await fetch(url + path, { method: 'POST', headers: h, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
