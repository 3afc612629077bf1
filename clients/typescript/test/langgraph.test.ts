// BulwarkStore against the real @langchain/langgraph-checkpoint BaseStore and a real
// `bulwark serve`: BaseStore's own get/put/delete/search/listNamespaces drive our batch().

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { BaseStore, InvalidNamespaceError } from "@langchain/langgraph-checkpoint";

import { BulwarkStore, namespaceName, namespacePath } from "../src/langgraph.js";
import { Server, freshNamespace } from "./server.js";

let server: Server;
before(async () => {
  server = await Server.start("--rate", "0", "--threads", "4");
});
after(async () => {
  await server?.stop();
});

test("namespace mapping", () => {
  assert.equal(namespaceName(["memories", "u-1"]), "memories.u-1");
  assert.deepEqual(namespacePath("memories.u-1"), ["memories", "u-1"]);
  for (const bad of [[], ["a.b"], [""], ["_x"], ["a b"], ["x".repeat(65)]]) {
    assert.throws(() => namespaceName(bad), InvalidNamespaceError);
  }
});

test("is a BaseStore: put, get, search, delete", async () => {
  const store = new BulwarkStore(server.client());
  assert.ok(store instanceof BaseStore);
  const ns = freshNamespace();
  const space = [ns, "u1"];
  await store.put(space, "seat", { text: "Alice prefers a window seat", kind: "pref" }, ["text"]);
  await store.put(space, "food", { text: "Alice is allergic to peanuts", kind: "health" });
  const item = await store.get(space, "seat");
  assert.deepEqual([item?.key, item?.namespace, item?.value], [
    "seat", space, { text: "Alice prefers a window seat", kind: "pref" },
  ]);
  assert.ok(item?.createdAt instanceof Date);
  await store.put(space, "seat", { text: "Alice prefers an aisle seat", kind: "pref" });
  assert.equal((await store.get(space, "seat"))?.value.text, "Alice prefers an aisle seat");
  assert.equal(await store.get(space, "nothing"), null);
  const hits = await store.search(space, { query: "which seat does Alice like", limit: 1 });
  assert.deepEqual(hits.map((h) => h.key), ["seat"]);
  assert.equal(typeof hits[0]!.score, "number");
  assert.deepEqual((await store.search(space, { filter: { kind: "health" } })).map((i) => i.key), ["food"]);
  assert.deepEqual((await store.search([ns])).map((i) => i.key).sort(), ["food", "seat"]);
  assert.equal((await store.search(space, { limit: 1, offset: 1 })).length, 1);
  await assert.rejects(store.search(space, { filter: { kind: { $ne: "x" } } }), TypeError);
  await store.delete(space, "seat");
  assert.equal(await store.get(space, "seat"), null);
  await store.delete(space, "seat"); // deleting nothing is not an error
  await store.delete(space, "food");
  assert.deepEqual(await store.search(space), []);
});

test("listNamespaces and batch", async () => {
  const store = new BulwarkStore(server.client());
  const ns = freshNamespace();
  const res = await store.batch([
    { namespace: [ns, "a"], key: "k1", value: { v: "one" } },
    { namespace: [ns, "b"], key: "k2", value: { v: "two" } },
    { namespace: [ns, "a"], key: "k1" },
    { namespacePrefix: [ns, "b"], query: "two" },
  ] as const);
  assert.equal(res[0], undefined);
  assert.deepEqual(res[2]?.value, { v: "one" });
  assert.equal(res[3]?.[0]?.key, "k2");
  assert.deepEqual(await store.listNamespaces({ prefix: [ns] }), [[ns, "a"], [ns, "b"]]);
  assert.deepEqual(await store.listNamespaces({ prefix: [ns], suffix: ["b"] }), [[ns, "b"]]);
  assert.deepEqual(await store.listNamespaces({ prefix: [ns], maxDepth: 1 }), [[ns]]);
  assert.deepEqual(await store.listNamespaces({ prefix: [ns, "*"], limit: 1 }), [[ns, "a"]]);
});
