// Starts a real `bulwark serve` on 127.0.0.1 port 0 for the tests: the binary from $BULWARK_BIN
// (CTest sets it), a throwaway store, the admin key read from the --json start-up lines. Every
// wait is bounded; stop() sends SIGTERM, then SIGKILL after 5 s.

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { BulwarkClient, type ClientOptions } from "../src/index.js";

export class Server {
  private constructor(
    readonly url: string,
    readonly adminKey: string,
    private readonly proc: ChildProcess,
    private readonly dir: string,
  ) {}

  static async start(...args: string[]): Promise<Server> {
    const bin = process.env.BULWARK_BIN;
    if (!bin) throw new Error("BULWARK_BIN is not set (the path of the bulwark binary)");
    const dir = mkdtempSync(join(tmpdir(), "bulwark-tsclient-"));
    const proc = spawn(bin, ["--store", join(dir, "store"), "--json", "serve", "--port", "0", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    proc.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const lines = createInterface({ input: proc.stdout! });
    let key = "";
    const started = new Promise<string>((resolve, reject) => {
      lines.on("line", (line) => {
        const ev = JSON.parse(line) as { event?: string; api_key?: string; port?: number };
        if (ev.event === "admin_created") key = ev.api_key ?? "";
        if (ev.event === "listening") resolve(`http://127.0.0.1:${ev.port}`);
      });
      proc.on("exit", (code) => reject(new Error(`bulwark serve exited (${code}): ${stderr}`)));
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`bulwark serve did not start in 30 s: ${stderr}`)), 30_000);
    });
    try {
      const url = await Promise.race([started, timeout]);
      return new Server(url, key, proc, dir);
    } catch (e) {
      proc.kill("SIGKILL");
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  client(o: ClientOptions = {}): BulwarkClient {
    return new BulwarkClient({ url: this.url, apiKey: this.adminKey, ...o });
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null) {
      const exited = new Promise<void>((resolve) => this.proc.once("exit", () => resolve()));
      this.proc.kill("SIGTERM");
      const t = setTimeout(() => this.proc.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(t);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

let counter = 0;
/** A fresh namespace name per test. */
export function freshNamespace(): string {
  counter += 1;
  return `ts${process.pid}-${counter}`;
}
