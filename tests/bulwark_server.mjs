// Starts the real `bulwark serve` for the node tests (tests/mcp, tests/ui, tests/mem0): on
// 127.0.0.1 port 0, with `--json` so that the admin key and the port are read back from its
// start-up lines. BULWARK_BIN names the binary (CTest sets it). Only node's own modules are
// imported, so any test folder can use this file whatever its node_modules hold.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

export const BIN = process.env.BULWARK_BIN;
if (!BIN) throw new Error('set BULWARK_BIN to the bulwark binary (ctest does)');

// Starts `bulwark --store STORE serve --port 0 --json EXTRA...` (creating the store and an admin
// key). Resolves to {url, port, adminKey, child, stop()} once the server listens; rejects if it
// exits first or does not listen within 20 s. stop() sends SIGTERM and resolves when it exited.
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
          port: event.port,
          adminKey,
          child,
          stop: () => new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', done);
            child.kill('SIGTERM');
          }),
        });
      }
    });
  });
}
