// BulwarkStore: LangGraph's BaseStore (from @langchain/langgraph-checkpoint, a peer dependency)
// over a BulwarkClient. It implements batch(); BaseStore's get/put/delete/search/listNamespaces
// build operations and call it.
//
// Mapping (also in clients/README.md; the same as the Python adapter):
// - namespace ["memories", "u1"] <-> Bulwark namespace "memories.u1": labels joined by ".".
//   LangGraph forbids "." in labels; Bulwark names allow 1-64 of [A-Za-z0-9_.-] starting with a
//   letter or digit, so each label must be non-empty [A-Za-z0-9_-] and the first start with a
//   letter or digit (else InvalidNamespaceError).
// - item key <-> the entry's client key (an upsert: one live entry per key and namespace).
// - value <-> the entry's metadata, member for member (so `filter` is Bulwark's exact-match
//   metadata filter; members starting with "bulwark." are reserved by the server).
// - the embedded text: the `index` fields' values (top-level names or dotted paths) joined by
//   newlines, else the whole value as JSON with sorted keys.
// - search(prefix) covers the namespace the prefix names and every namespace below it the caller
//   can see (GET /v1/namespaces), hits merged by score; without a query it lists them.

import {
  BaseStore,
  InvalidNamespaceError,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  type GetOperation,
} from "@langchain/langgraph-checkpoint";

import type { BulwarkClient } from "./client.js";
import { NotFound } from "./errors.js";
import type { Entry } from "./types.js";

const LABEL = /^[A-Za-z0-9_-]+$/;

/** The Bulwark namespace of a LangGraph namespace; throws InvalidNamespaceError if none. */
export function namespaceName(namespace: string[]): string {
  if (namespace.length === 0 || !namespace.every((l) => typeof l === "string" && LABEL.test(l))) {
    throw new InvalidNamespaceError(`namespace ${JSON.stringify(namespace)}: labels must be non-empty [A-Za-z0-9_-]`);
  }
  const name = namespace.join(".");
  if (!/^[A-Za-z0-9]/.test(name) || name.length > 64) {
    throw new InvalidNamespaceError(`namespace ${JSON.stringify(namespace)}: must start with a letter or digit, <= 64 chars`);
  }
  return name;
}

/** The inverse of namespaceName. */
export function namespacePath(name: string): string[] {
  return name.split(".");
}

function atPath(value: Record<string, unknown>, path: string): unknown {
  let cur: unknown = value;
  for (const part of path.split(".")) {
    if (cur === null || typeof cur !== "object" || !(part in (cur as object))) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function sortedJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

function textOf(value: Record<string, unknown>, index: false | string[] | undefined): string {
  if (Array.isArray(index) && index.length > 0) {
    const parts = index
      .map((p) => atPath(value, p))
      .filter((p) => p !== undefined && p !== null)
      .map((p) => (typeof p === "string" ? p : sortedJson(p)));
    if (parts.some((p) => p.trim() !== "")) return parts.join("\n");
  }
  return sortedJson(value);
}

function isOperator(filter: Record<string, unknown>): boolean {
  return Object.entries(filter).some(
    ([k, v]) => k.startsWith("$") || (v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).some((x) => x.startsWith("$"))),
  );
}

export class BulwarkStore extends BaseStore {
  constructor(
    readonly client: BulwarkClient,
    private readonly pageSize = 100,
  ) {
    super();
  }

  private item(e: Entry, score?: number): SearchItem {
    const value = Object.fromEntries(Object.entries(e.metadata).filter(([k]) => !k.startsWith("bulwark.")));
    const it: SearchItem = {
      namespace: namespacePath(e.namespace), key: e.key ?? "", value,
      createdAt: new Date(e.createdAtUs / 1000), updatedAt: new Date(e.updatedAtUs / 1000),
    };
    if (score !== undefined) it.score = score;
    return it;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of operations) {
      if ("matchConditions" in op || ("limit" in op && "offset" in op && !("namespacePrefix" in op))) {
        results.push(await this.listOp(op as ListNamespacesOperation));
      } else if ("namespacePrefix" in op) {
        results.push(await this.searchOp(op as SearchOperation));
      } else if ("value" in op) {
        await this.putOp(op as PutOperation);
        results.push(undefined);
      } else {
        results.push(await this.getOp(op as GetOperation));
      }
    }
    return results as OperationResults<Op>;
  }

  private async getOp(op: GetOperation): Promise<Item | null> {
    try {
      const e = await this.client.getByKey(op.key, { namespace: namespaceName(op.namespace) });
      return e === null ? null : this.item(e);
    } catch (err) {
      if (err instanceof NotFound) return null;
      throw err;
    }
  }

  private async putOp(op: PutOperation): Promise<void> {
    const namespace = namespaceName(op.namespace);
    if (op.value === null) {
      try {
        const e = await this.client.getByKey(op.key, { namespace });
        if (e !== null) await this.client.delete(e.id, { namespace });
      } catch (err) {
        if (!(err instanceof NotFound)) throw err;
      }
      return;
    }
    await this.client.add(textOf(op.value, op.index), { metadata: op.value, key: op.key, namespace });
  }

  private async below(prefix: string[]): Promise<string[]> {
    const names = (await this.client.namespaces()).map((n) => String(n.namespace));
    if (prefix.length === 0) return names;
    const name = namespaceName(prefix);
    const found = names.filter((n) => n === name || n.startsWith(`${name}.`));
    return found.length > 0 ? found : [name];
  }

  private async searchOp(op: SearchOperation): Promise<SearchItem[]> {
    const limit = op.limit ?? 10;
    const offset = op.offset ?? 0;
    const filter = op.filter && Object.keys(op.filter).length > 0 ? op.filter : undefined;
    if (filter && isOperator(filter)) throw new TypeError("BulwarkStore: filter supports exact equality only");
    let out: SearchItem[] = [];
    for (const namespace of await this.below(op.namespacePrefix)) {
      try {
        if (op.query) {
          const r = await this.client.search(op.query, { k: Math.min(limit + offset, 100), filter, namespace });
          out.push(...r.hits.map((h) => this.item(h, h.score)));
        } else {
          for await (const e of this.client.list({ filter, namespace, pageSize: this.pageSize })) {
            out.push(this.item(e));
            if (out.length >= limit + offset) break;
          }
        }
      } catch (err) {
        if (!(err instanceof NotFound)) throw err;
      }
      if (!op.query && out.length >= limit + offset) break;
    }
    if (op.query) out = out.sort((a, b) => (b.score ?? 0) - (a.score ?? 0));
    return out.slice(offset, offset + limit);
  }

  private async listOp(op: ListNamespacesOperation): Promise<string[][]> {
    const match = (t: string[], pat: string[] | undefined, tail: boolean) => {
      if (!pat || pat.length === 0) return true;
      if (pat.length > t.length) return false;
      const part = tail ? t.slice(t.length - pat.length) : t.slice(0, pat.length);
      return pat.every((p, i) => p === "*" || p === part[i]);
    };
    const prefix = op.matchConditions?.find((c) => c.matchType === "prefix")?.path;
    const suffix = op.matchConditions?.find((c) => c.matchType === "suffix")?.path;
    const seen = new Map<string, string[]>();
    for (const n of await this.client.namespaces()) {
      if (Number(n.active ?? 0) + Number(n.quarantined ?? 0) === 0) continue;
      let t = namespacePath(String(n.namespace));
      if (!match(t, prefix, false) || !match(t, suffix, true)) continue;
      if (op.maxDepth !== undefined) t = t.slice(0, op.maxDepth);
      seen.set(t.join("\u0000"), t);
    }
    const sorted = [...seen.values()].sort((a, b) => (a.join("\u0000") < b.join("\u0000") ? -1 : 1));
    return sorted.slice(op.offset, op.offset + op.limit);
  }
}
