// Calls to the Bulwark API from the page. The API key lives in sessionStorage only (gone when the
// tab closes; no cookie is ever set or sent) and every call carries it as a Bearer token to this
// same origin. Answers are JSON; errors become ApiError with the API's code and message.

const KEY_ITEM = 'bulwark.apiKey';

export function storedKey(): string {
  return sessionStorage.getItem(KEY_ITEM) ?? '';
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY_ITEM, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY_ITEM);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'X-Bulwark-Session': 'dashboard' };
  // No key: a server started with --insecure-dev answers loopback calls as an admin.
  if (storedKey()) headers.Authorization = `Bearer ${storedKey()}`;
  const init: RequestInit = { method, headers, credentials: 'omit', cache: 'no-store', redirect: 'error' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  // A 429 was refused before any handler ran (the key's token bucket was empty), so sending the
  // same request again is safe for every method: wait what Retry-After says (at most 5 s), at
  // most three times.
  let response = await fetch(path, init);
  for (let retry = 0; response.status === 429 && retry < 3; retry++) {
    const seconds = Math.min(5, Math.max(1, Number(response.headers.get('Retry-After')) || 1));
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    response = await fetch(path, init);
  }
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(response.status, error?.code ?? 'http_' + response.status, error?.message ?? text.slice(0, 200));
  }
  return parsed as T;
}

export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

export interface WhoAmI {
  principal: string;
  role: 'reader' | 'writer' | 'admin';
  namespaces: string[];
  key_id: string;
  service_admin: boolean;
}

export interface DetectorReport {
  score?: number;
  threshold?: number;
  flagged?: boolean;
  calibrated?: boolean;
  reason?: string;
  detail?: unknown;
  conflict?: Conflict;
}

export interface Conflict {
  entry_id: string;
  similarity?: number;
  slots?: { kind: string; old: string; new: string }[];
  polarity_changed?: boolean;
}

export interface Entry {
  id: string;
  namespace: string;
  text?: string;
  metadata?: Record<string, unknown>;
  principal: string;
  source: string;
  kind: string;
  state: string;
  created_at_us: number;
  updated_at_us: number;
  key_id: number;
  tag: string;
  score?: number;
  // Admins only: {"gate": {"flagged", "detectors": {name: DetectorReport}, "reasons"}, "quarantine": ...}.
  report?: Record<string, unknown>;
}

export interface NamespaceCounts {
  namespace: string;
  active: number;
  quarantined: number;
  deleted: number;
  purged: number;
}

export interface AuditRecord {
  seq: number;
  at_us: number;
  principal: string;
  session: string;
  namespace: string;
  operation: string;
  query_hash?: string;
  returned_ids: string[];
  detail: Record<string, unknown>;
}

export interface HistoryEvent {
  seq: number;
  entry_id: string;
  event: string;
  actor: string;
  at_us: number;
  detail: unknown;
  verified: boolean;
}

export interface Principal {
  name: string;
  role: string;
  namespaces: string[];
  revoked: boolean;
  created_at_us: number;
  keys?: { key_id: string; created_at_us: number; revoked: boolean }[];
}

export function time(us: number | undefined): string {
  if (!us) return '';
  return new Date(us / 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function age(us: number, nowMs = Date.now()): string {
  const s = Math.max(0, Math.round((nowMs * 1000 - us) / 1e6));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

export function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.status} ${e.code}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}
