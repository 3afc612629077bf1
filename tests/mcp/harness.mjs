// Starts the real `bulwark` binary for the MCP tests: a fresh store in a temp directory, principals
// made with the CLI, and `bulwark serve` on 127.0.0.1 port 0 (the port is read back from its
// "listening" line). BULWARK_BIN names the binary (CTest sets it).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

export const BIN = process.env.BULWARK_BIN;
if (!BIN) throw new Error('set BULWARK_BIN to the bulwark binary (ctest does)');

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

// Starts `bulwark serve` (creating the store and an admin key). Resolves to
// {url, adminKey, stop()}; rejects if it does not listen within 20 s.
export function startServer(store, extraArgs = []) {
  const child = spawn(BIN, ['--store', store, 'serve', '--port', '0', '--json', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    let adminKey = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no listening line: ${stderr}`)); }, 20000);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`serve exited ${code}: ${stderr}`)); });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const event = JSON.parse(line);
      if (event.event === 'admin_created') adminKey = event.api_key;
      if (event.event === 'listening') {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({
          url: event.url,
          adminKey,
          stop: () => new Promise((done) => { child.once('exit', done); child.kill('SIGTERM'); }),
        });
      }
    });
  });
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
