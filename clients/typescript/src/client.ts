// The Bulwark TypeScript client: every route of doc/api.md as a method, in camelCase.
//
//   const client = new BulwarkClient({ url: "http://127.0.0.1:8420", apiKey, namespace: "alice" });
//   await client.add("Alice prefers a window seat", { metadata: { category: "preferences" } });
//   const { hits } = await client.search("which seat does Alice like?", { k: 3 });
//
// Zero runtime dependencies (global fetch). A method that names a namespace takes `namespace` in
// its options and otherwise uses the client's default (TypeError when neither is set). Server
// errors throw the typed subclasses of BulwarkError (errors.ts). Reads are retried on 429/503; an
// add only when it carries `idempotencyKey`; other writes are never retried.

import { Transport, type RequestOptions } from "./transport.js";
import { type Entry, type Page, type SearchResult, dropUndefined, toEntry, toPage, toSearchResult } from "./types.js";

type Json = Record<string, unknown>;
type NsOpt = { namespace?: string };

export interface ClientOptions {
  /** Base URL, default http://127.0.0.1:8420. */
  url?: string;
  apiKey?: string;
  namespace?: string;
  /** Sent as X-Bulwark-Session (1-128 printable ASCII, no spaces). */
  session?: string;
  timeoutMs?: number;
  maxRetries?: number;
  maxRetryWaitMs?: number;
}

export interface AddOptions extends NsOpt {
  metadata?: Json;
  source?: string;
  key?: string;
  expiresAtUs?: number;
  principal?: string;
  idempotencyKey?: string;
}

export interface SearchOptions extends NsOpt {
  k?: number;
  filter?: Json;
  gate?: string;
  kHigh?: number;
  smoothing?: boolean | Json;
  includeQuarantined?: boolean;
}

export interface ListOptions extends NsOpt {
  state?: string | string[];
  filter?: Json;
  limit?: number;
  cursor?: string;
  key?: string;
}

export interface AuditOptions {
  principal?: string;
  session?: string;
  namespace?: string;
  entryId?: string;
  sinceUs?: number;
  limit?: number;
}

const seg = (s: string) => encodeURIComponent(s);

export class BulwarkClient {
  namespace: string | undefined;
  readonly quarantine: QuarantineApi;
  readonly admin: AdminApi;
  private readonly t: Transport;

  constructor(o: ClientOptions = {}) {
    this.namespace = o.namespace;
    this.t = new Transport({
      url: o.url ?? "http://127.0.0.1:8420",
      apiKey: o.apiKey,
      session: o.session,
      timeoutMs: o.timeoutMs ?? 10_000,
      maxRetries: o.maxRetries ?? 3,
      maxRetryWaitMs: o.maxRetryWaitMs ?? 30_000,
    });
    this.quarantine = new QuarantineApi(this);
    this.admin = new AdminApi(this);
  }

  /** From $BULWARK_URL, $BULWARK_API_KEY, $BULWARK_NAMESPACE, $BULWARK_SESSION; `o` overrides. */
  static fromEnv(o: ClientOptions = {}): BulwarkClient {
    const env = process.env;
    const fromEnv = dropUndefined({
      url: env.BULWARK_URL,
      apiKey: env.BULWARK_API_KEY,
      namespace: env.BULWARK_NAMESPACE,
      session: env.BULWARK_SESSION,
    }) as ClientOptions;
    return new BulwarkClient({ ...fromEnv, ...o });
  }

  /** @internal */
  ns(namespace?: string): string {
    const ns = namespace ?? this.namespace;
    if (!ns) throw new TypeError("no namespace: pass { namespace } or set it on the client");
    return ns;
  }

  /** @internal */
  call<T = Json>(method: string, path: string, o?: RequestOptions): Promise<T> {
    return this.t.request<T>(method, path, o);
  }

  /** Adds one entry (with `key`: an upsert); its `state` is the write decision. */
  async add(text: string, o: AddOptions = {}): Promise<Entry> {
    const body = dropUndefined({
      namespace: this.ns(o.namespace), text, metadata: o.metadata, source: o.source, key: o.key,
      expires_at_us: o.expiresAtUs, principal: o.principal,
    });
    const headers = o.idempotencyKey ? { "Idempotency-Key": o.idempotencyKey } : undefined;
    const j = await this.call<{ entry: Json }>("POST", "/v1/memories", { body, headers, retryable: !!o.idempotencyKey });
    return toEntry(j.entry);
  }

  /** Adds a batch, all or nothing: strings or {text, metadata?, source?, expires_at_us?}. */
  async addMany(entries: (string | Json)[], o: NsOpt & { idempotencyKey?: string } = {}): Promise<Entry[]> {
    const items = entries.map((e) => (typeof e === "string" ? { text: e } : e));
    const headers = o.idempotencyKey ? { "Idempotency-Key": o.idempotencyKey } : undefined;
    const j = await this.call<{ entries: Json[] }>("POST", "/v1/memories", {
      body: { namespace: this.ns(o.namespace), entries: items }, headers, retryable: !!o.idempotencyKey,
    });
    return j.entries.map(toEntry);
  }

  /** Top-k search; throws QueryRejected when the query gate rejects the query. */
  async search(query: string, o: SearchOptions = {}): Promise<SearchResult> {
    const body = dropUndefined({
      namespace: this.ns(o.namespace), query, k: o.k, filter: o.filter, gate: o.gate, k_high: o.kHigh,
      smoothing: o.smoothing, include_quarantined: o.includeQuarantined,
    });
    return toSearchResult(await this.call("POST", "/v1/memories/search", { body, retryable: true }));
  }

  /** A smoothed answer with its certificate (the JSON of POST /v1/answer). */
  answer(question: string, o: NsOpt & { smoothing?: Json; filter?: Json; gate?: string } = {}): Promise<Json> {
    const body = dropUndefined({ namespace: this.ns(o.namespace), question, smoothing: o.smoothing, filter: o.filter, gate: o.gate });
    return this.call("POST", "/v1/answer", { body, retryable: true });
  }

  /** One entry in any state; throws NotFound. */
  async get(id: string, o: NsOpt = {}): Promise<Entry> {
    const j = await this.call<{ entry: Json }>("GET", `/v1/memories/${seg(id)}`, { query: { namespace: this.ns(o.namespace) }, retryable: true });
    return toEntry(j.entry);
  }

  /** The live entry holding client key `key`, or null. */
  async getByKey(key: string, o: NsOpt = {}): Promise<Entry | null> {
    const page = await this.listPage({ ...o, key });
    return page.entries[0] ?? null;
  }

  /** The entry's signed history events, oldest first. */
  async history(id: string, o: NsOpt = {}): Promise<Json[]> {
    const j = await this.call<{ events: Json[] }>("GET", `/v1/memories/${seg(id)}/history`, { query: { namespace: this.ns(o.namespace) }, retryable: true });
    return j.events;
  }

  /** Replaces text and/or metadata; returns the re-signed entry. */
  async update(id: string, o: NsOpt & { text?: string; metadata?: Json }): Promise<Entry> {
    const body = dropUndefined({ namespace: this.ns(o.namespace), text: o.text, metadata: o.metadata });
    return toEntry((await this.call<{ entry: Json }>("PATCH", `/v1/memories/${seg(id)}`, { body })).entry);
  }

  /** Soft delete: {id, state: "deleted"}; Conflict when already deleted. */
  delete(id: string, o: NsOpt = {}): Promise<Json> {
    return this.call("DELETE", `/v1/memories/${seg(id)}`, { query: { namespace: this.ns(o.namespace) } });
  }

  /** GDPR erasure (admin): {id, state: "purged"}. */
  purge(id: string, o: NsOpt = {}): Promise<Json> {
    return this.call("POST", `/v1/memories/${seg(id)}/purge`, { body: { namespace: this.ns(o.namespace) } });
  }

  /** One page of entries, oldest first. */
  async listPage(o: ListOptions = {}): Promise<Page> {
    const query = {
      namespace: this.ns(o.namespace),
      state: Array.isArray(o.state) ? o.state.join(",") : o.state,
      filter: o.filter === undefined ? undefined : JSON.stringify(o.filter),
      limit: o.limit, cursor: o.cursor, key: o.key,
    };
    return toPage(await this.call("GET", "/v1/memories", { query, retryable: true }));
  }

  /** Every matching entry, oldest first, following cursors (at most maxPages requests). */
  async *list(o: Omit<ListOptions, "cursor" | "key" | "limit"> & { pageSize?: number; maxPages?: number } = {}): AsyncGenerator<Entry> {
    let cursor: string | undefined;
    for (let i = 0; i < (o.maxPages ?? 1_000_000); i++) {
      const page = await this.listPage({ namespace: o.namespace, state: o.state, filter: o.filter, limit: o.pageSize, cursor });
      yield* page.entries;
      if (page.nextCursor === null) return;
      cursor = page.nextCursor;
    }
  }

  /** The caller's namespaces with counts. */
  async namespaces(): Promise<Json[]> {
    return (await this.call<{ namespaces: Json[] }>("GET", "/v1/namespaces", { retryable: true })).namespaces;
  }

  /** Soft-deletes every matching entry (admin): {deleted, ids, more}; call again while more. */
  deleteAll(o: NsOpt & { filter?: Json } = {}): Promise<Json> {
    return this.call("POST", `/v1/namespaces/${seg(this.ns(o.namespace))}/delete-all`, { body: dropUndefined({ filter: o.filter }) });
  }

  /** Purges every matching entry (admin): {purged, ids, more}. */
  forget(o: NsOpt & { filter?: Json } = {}): Promise<Json> {
    return this.call("POST", `/v1/namespaces/${seg(this.ns(o.namespace))}/forget`, { body: dropUndefined({ filter: o.filter }) });
  }

  /** Audit records, newest first (admin). */
  async audit(o: AuditOptions = {}): Promise<Json[]> {
    const query = { principal: o.principal, session: o.session, namespace: o.namespace, entry_id: o.entryId, since_us: o.sinceUs, limit: o.limit };
    return (await this.call<{ records: Json[] }>("GET", "/v1/audit", { query, retryable: true })).records;
  }

  healthz(): Promise<Json> {
    return this.call("GET", "/healthz", { retryable: true });
  }

  /** Prometheus text (service admin). */
  metrics(): Promise<string> {
    return this.call<string>("GET", "/metrics", { retryable: true, raw: true });
  }
}

/** client.quarantine: the review queue (admin). */
export class QuarantineApi {
  constructor(private readonly c: BulwarkClient) {}

  async list(o: NsOpt & { limit?: number } = {}): Promise<Entry[]> {
    const j = await this.c.call<{ entries: Json[] }>("GET", "/v1/quarantine", { query: { namespace: this.c.ns(o.namespace), limit: o.limit }, retryable: true });
    return j.entries.map(toEntry);
  }

  async add(id: string, o: NsOpt & { reason?: string } = {}): Promise<Entry> {
    const body = dropUndefined({ namespace: this.c.ns(o.namespace), reason: o.reason });
    return toEntry((await this.c.call<{ entry: Json }>("POST", `/v1/memories/${seg(id)}/quarantine`, { body })).entry);
  }

  async release(id: string, o: NsOpt = {}): Promise<Entry> {
    return toEntry((await this.c.call<{ entry: Json }>("POST", `/v1/quarantine/${seg(id)}/release`, { body: { namespace: this.c.ns(o.namespace) } })).entry);
  }

  async reject(id: string, o: NsOpt = {}): Promise<Entry> {
    return toEntry((await this.c.call<{ entry: Json }>("POST", `/v1/quarantine/${seg(id)}/reject`, { body: { namespace: this.c.ns(o.namespace) } })).entry);
  }
}

/** client.admin: principals, keys, signing keys, verify, blocked sessions (service admin). */
export class AdminApi {
  constructor(private readonly c: BulwarkClient) {}

  async principals(): Promise<Json[]> {
    return (await this.c.call<{ principals: Json[] }>("GET", "/v1/admin/principals", { retryable: true })).principals;
  }

  /** {principal, key_id, api_key}: the key is shown this once. */
  createPrincipal(name: string, role: string, namespaces: string[], createKey = true): Promise<Json> {
    return this.c.call("POST", "/v1/admin/principals", { body: { name, role, namespaces, create_key: createKey } });
  }

  async principal(name: string): Promise<Json> {
    return (await this.c.call<{ principal: Json }>("GET", `/v1/admin/principals/${seg(name)}`, { retryable: true })).principal;
  }

  revokePrincipal(name: string): Promise<Json> {
    return this.c.call("POST", `/v1/admin/principals/${seg(name)}/revoke`);
  }

  async keys(name: string): Promise<Json[]> {
    return (await this.c.call<{ keys: Json[] }>("GET", `/v1/admin/principals/${seg(name)}/keys`, { retryable: true })).keys;
  }

  createKey(name: string): Promise<Json> {
    return this.c.call("POST", `/v1/admin/principals/${seg(name)}/keys`);
  }

  revokeKey(keyId: string): Promise<Json> {
    return this.c.call("POST", `/v1/admin/keys/${seg(keyId)}/revoke`);
  }

  rotateSigningKey(): Promise<Json> {
    return this.c.call("POST", "/v1/admin/signing-keys/rotate");
  }

  verify(): Promise<Json> {
    return this.c.call("POST", "/v1/admin/verify");
  }

  async blockedSessions(o: { namespace?: string } = {}): Promise<Json[]> {
    return (await this.c.call<{ blocked: Json[] }>("GET", "/v1/admin/sessions/blocked", { query: { namespace: o.namespace }, retryable: true })).blocked;
  }

  unblock(namespace: string, principal: string, session?: string): Promise<Json> {
    return this.c.call("POST", "/v1/admin/sessions/unblock", { body: dropUndefined({ namespace, principal, session }) });
  }
}
