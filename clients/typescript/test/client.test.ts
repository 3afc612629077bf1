// The TypeScript client against a real `bulwark serve`: every route family, typed errors, the
// list iterator over cursors, idempotent adds and bounded retries on 429.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { BadRequest, BulwarkClient, Conflict, Forbidden, NamespaceNotFound, NotFound, RateLimited, TransportError, Unauthenticated } from "../src/index.js";
import { Server, freshNamespace } from "./server.js";

let server: Server;
let slow: Server;
before(async () => {
  server = await Server.start("--rate", "0", "--threads", "4");
  slow = await Server.start("--rate", "1", "--burst", "1", "--threads", "2");
});
after(async () => {
  await server?.stop();
  await slow?.stop();
});

test("add, get, search, update, history, delete", async () => {
  const c = server.client({ namespace: freshNamespace() });
  const e = await c.add("Alice prefers a window seat", { metadata: { category: "preferences" }, source: "agent" });
  assert.equal(e.state, "active");
  assert.deepEqual((await c.get(e.id)).metadata, { category: "preferences" });
  await c.add("Dentist on Friday at 10", { metadata: { category: "health" } });
  const r = await c.search("which seat does Alice like?", { k: 1 });
  assert.deepEqual(r.hits.map((h) => h.id), [e.id]);
  assert.equal(typeof r.hits[0]!.score, "number");
  const f = await c.search("seat", { filter: { category: "health" } });
  assert.match(f.hits[0]!.text ?? "", /^Dentist/);
  const u = await c.update(e.id, { text: "Alice prefers an aisle seat" });
  assert.equal(u.text, "Alice prefers an aisle seat");
  assert.deepEqual((await c.history(e.id)).map((ev) => ev.event), ["add", "update"]);
  assert.equal((await c.delete(e.id)).state, "deleted");
  await assert.rejects(c.delete(e.id), (err: unknown) => err instanceof Conflict && err.status === 409 && err.code === "conflict");
});

test("typed errors carry code, status and message", async () => {
  const c = server.client({ namespace: freshNamespace() });
  await assert.rejects(c.get("01M807153J8V4939MARY9AFXES"), (err: unknown) => {
    assert.ok(err instanceof NotFound);
    assert.deepEqual([err.status, err.code, err.message], [404, "not_found", "entry not found"]);
    return true;
  });
  await assert.rejects(c.search("x", { k: 0 }), (err: unknown) => err instanceof BadRequest && err.code === "out_of_range");
  const bad = server.client({ apiKey: `bwk_0000000000000000_${"0".repeat(64)}`, namespace: "x" });
  await assert.rejects(bad.search("x"), Unauthenticated);
  assert.throws(() => server.client().ns(), TypeError);
  const closed = new BulwarkClient({ url: "http://127.0.0.1:2", namespace: "x", maxRetries: 1, maxRetryWaitMs: 1000 });
  await assert.rejects(closed.search("x"), (err: unknown) => err instanceof TransportError && err.status === 0 && /ECONNREFUSED/.test(err.message));
});

test("roles and isolation", async () => {
  const ns = freshNamespace();
  const admin = server.client({ namespace: ns });
  const made = await admin.admin.createPrincipal(`reader-${ns}`, "reader", [ns]);
  const reader = server.client({ apiKey: String(made.api_key), namespace: ns });
  assert.deepEqual((await reader.search("anything")).hits, []);
  await assert.rejects(reader.add("readers cannot write"), (err: unknown) => err instanceof Forbidden && err.code === "forbidden");
  await assert.rejects(reader.search("x", { namespace: `${ns}-other` }), NamespaceNotFound);
  assert.deepEqual((await reader.namespaces()).map((n) => n.namespace), [ns]);
  await admin.admin.revokeKey(String(made.key_id));
  await assert.rejects(reader.search("x"), Unauthenticated);
});

test("list iterates over cursors", async () => {
  const c = server.client({ namespace: freshNamespace() });
  const ids = (await c.addMany(Array.from({ length: 7 }, (_, i) => `fact number ${i}`))).map((e) => e.id);
  const page = await c.listPage({ limit: 3 });
  assert.equal(page.entries.length, 3);
  assert.notEqual(page.nextCursor, null);
  const all: string[] = [];
  for await (const e of c.list({ pageSize: 3 })) all.push(e.id);
  assert.deepEqual(all, ids);
  const two: string[] = [];
  for await (const e of c.list({ pageSize: 3, maxPages: 2 })) two.push(e.id);
  assert.deepEqual(two, ids.slice(0, 6));
  await c.add("tagged", { metadata: { user_id: "u1" } });
  const tagged: string[] = [];
  for await (const e of c.list({ filter: { user_id: "u1" } })) tagged.push(e.text ?? "");
  assert.deepEqual(tagged, ["tagged"]);
});

test("keys upsert and idempotency keys", async () => {
  const c = server.client({ namespace: freshNamespace() });
  const first = await c.add("v1", { key: "profile" });
  const second = await c.add("v2", { key: "profile" });
  assert.equal(second.id, first.id);
  assert.equal((await c.getByKey("profile"))?.text, "v2");
  assert.equal(await c.getByKey("missing"), null);
  const a = await c.add("only once", { idempotencyKey: "idem-1" });
  const b = await c.add("only once", { idempotencyKey: "idem-1" });
  assert.equal(a.id, b.id);
  await assert.rejects(c.add("another body", { idempotencyKey: "idem-1" }), Conflict);
});

test("forget, delete-all, purge, quarantine, answer, audit, admin, metrics", async () => {
  const ns = freshNamespace();
  const c = server.client({ namespace: ns, session: "chat-ts" });
  const u1 = await c.add("u1 likes tea", { metadata: { user_id: "u1" } });
  await c.add("u2 likes coffee", { metadata: { user_id: "u2" } });
  const gone = await c.forget({ filter: { user_id: "u1" } });
  assert.deepEqual([gone.purged, gone.ids], [1, [u1.id]]);
  const q = await c.add("suspicious");
  assert.equal((await c.quarantine.add(q.id, { reason: "test" })).state, "quarantined");
  assert.deepEqual((await c.quarantine.list()).map((e) => e.id), [q.id]);
  assert.equal((await c.quarantine.release(q.id)).state, "active");
  await c.quarantine.add(q.id);
  assert.equal((await c.quarantine.reject(q.id)).state, "deleted");
  const p = await c.add("to purge");
  assert.equal((await c.purge(p.id)).state, "purged");
  assert.equal((await c.deleteAll()).deleted, 1);
  await c.add("Alice prefers a window seat");
  const ans = await c.answer("which seat does Alice like?");
  assert.equal(ans.abstained, false);
  await new Promise((r) => setTimeout(r, 200)); // the audit log group-commits every 50 ms
  const ops = (await c.audit({ namespace: ns, session: "chat-ts" })).map((r) => r.operation);
  assert.ok(ops.includes("answer"), JSON.stringify(ops));
  assert.equal((await c.admin.verify()).ok, true);
  assert.match(await c.metrics(), /bulwark_http_requests_total/);
  assert.deepEqual(await c.healthz(), { status: "ok" });
});

test("fromEnv reads BULWARK_URL, BULWARK_API_KEY, BULWARK_NAMESPACE", async () => {
  const ns = freshNamespace();
  Object.assign(process.env, { BULWARK_URL: server.url, BULWARK_API_KEY: server.adminKey, BULWARK_NAMESPACE: ns });
  const c = BulwarkClient.fromEnv();
  assert.equal((await c.add("from the environment")).namespace, ns);
});

test("retries honour Retry-After, are bounded, and skip adds without a key", async () => {
  const ns = freshNamespace();
  const c = slow.client({ namespace: ns, maxRetries: 3, maxRetryWaitMs: 10_000 });
  await c.search("spend the single token");
  const t0 = Date.now();
  await c.search("retried after Retry-After");
  assert.ok(Date.now() - t0 >= 500, "waited for the bucket instead of failing");
  await assert.rejects(c.add("never retried without an idempotency key"), (err: unknown) => err instanceof RateLimited && err.retryAfter !== undefined);
  await assert.rejects(slow.client({ namespace: ns, maxRetries: 0 }).search("no retries"), RateLimited);
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal((await c.add("retried with a key", { idempotencyKey: "k-1" })).state, "active");
  assert.equal((await c.add("retried with a key", { idempotencyKey: "k-1" })).state, "active");
});
