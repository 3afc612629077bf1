// Result types of the Bulwark TypeScript client, in camelCase. Each keeps the server's JSON in
// `raw`, so fields added by a newer server are not lost.

/** A memory entry (doc/api.md, "Memories"); `score` is set on search hits, `report` for admins. */
export interface Entry {
  id: string;
  namespace: string;
  text: string | null;
  metadata: Record<string, unknown>;
  principal: string;
  source: string;
  kind: string;
  state: string;
  createdAtUs: number;
  updatedAtUs: number;
  keyId: number;
  tag: string;
  /** The client-chosen key (metadata "bulwark.key"), or undefined. */
  key: string | undefined;
  score?: number;
  report?: Record<string, unknown>;
  raw: Record<string, unknown>;
}

/** The answer of a search: hits best first, withheld candidates, the query gate's decision. */
export interface SearchResult {
  hits: Entry[];
  withheldCandidates: number;
  gate: Record<string, unknown>;
  k: number;
  smoothed?: Record<string, unknown>;
  raw: Record<string, unknown>;
}

/** One page of `GET /v1/memories`, oldest first; nextCursor is null at the end. */
export interface Page {
  entries: Entry[];
  nextCursor: string | null;
  withheld: number;
}

type Json = Record<string, unknown>;

/** Builds an Entry from one JSON entry object; missing fields get neutral values. */
export function toEntry(j: Json): Entry {
  const metadata = (j.metadata as Json | undefined) ?? {};
  const key = metadata["bulwark.key"];
  const e: Entry = {
    id: String(j.id ?? ""),
    namespace: String(j.namespace ?? ""),
    text: typeof j.text === "string" ? j.text : null,
    metadata,
    principal: String(j.principal ?? ""),
    source: String(j.source ?? ""),
    kind: String(j.kind ?? ""),
    state: String(j.state ?? ""),
    createdAtUs: Number(j.created_at_us ?? 0),
    updatedAtUs: Number(j.updated_at_us ?? 0),
    keyId: Number(j.key_id ?? 0),
    tag: String(j.tag ?? ""),
    key: typeof key === "string" ? key : undefined,
    raw: j,
  };
  if (typeof j.score === "number") e.score = j.score;
  if (j.report !== undefined) e.report = j.report as Json;
  return e;
}

export function toSearchResult(j: Json): SearchResult {
  const r: SearchResult = {
    hits: ((j.hits as Json[] | undefined) ?? []).map(toEntry),
    withheldCandidates: Number(j.withheld_candidates ?? 0),
    gate: (j.gate as Json | undefined) ?? {},
    k: Number(j.k ?? 0),
    raw: j,
  };
  if (j.smoothed !== undefined) r.smoothed = j.smoothed as Json;
  return r;
}

export function toPage(j: Json): Page {
  return {
    entries: ((j.entries as Json[] | undefined) ?? []).map(toEntry),
    nextCursor: typeof j.next_cursor === "string" ? j.next_cursor : null,
    withheld: Number(j.withheld ?? 0),
  };
}

/** Returns o without its undefined members (absent optional fields). */
export function dropUndefined(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
