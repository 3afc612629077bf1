// One base URL of `bulwark serve`, reached with the global fetch (undici keeps connections
// alive), with bounded retries.
//
// request() sends one JSON request and returns the decoded JSON answer, or throws the typed error
// of errors.ts. Retries (only for requests marked retryable: reads, and adds carrying an
// Idempotency-Key) happen on 429 and 503 and on transport failures, waiting Retry-After seconds
// (else an exponential backoff), at most maxRetries times and never past maxRetryWaitMs in total.

import { BulwarkError, TransportError, errorFromResponse } from "./errors.js";

export const USER_AGENT = "bulwark-typescript/0.1";

export interface TransportOptions {
  url: string;
  apiKey?: string | undefined;
  session?: string | undefined;
  timeoutMs: number;
  maxRetries: number;
  maxRetryWaitMs: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  retryable?: boolean;
  raw?: boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Transport {
  private readonly base: string;

  constructor(private readonly opts: TransportOptions) {
    const u = new URL(opts.url);
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new TypeError(`url must be http(s)://host[:port][/prefix], got ${opts.url}`);
    }
    if (opts.maxRetries < 0 || opts.maxRetryWaitMs < 0 || opts.timeoutMs <= 0) {
      throw new RangeError("maxRetries and maxRetryWaitMs must be >= 0, timeoutMs > 0");
    }
    this.base = u.origin + u.pathname.replace(/\/+$/, "");
  }

  private headers(hasBody: boolean, extra?: Record<string, string>): Record<string, string> {
    const h: Record<string, string> = { Accept: "application/json", "User-Agent": USER_AGENT };
    if (this.opts.apiKey) h.Authorization = `Bearer ${this.opts.apiKey}`;
    if (this.opts.session) h["X-Bulwark-Session"] = this.opts.session;
    if (hasBody) h["Content-Type"] = "application/json";
    return { ...h, ...extra };
  }

  /** One exchange: the answer's text on a 2xx, else throws the typed error. */
  private async once(method: string, url: string, body: string | undefined, headers: Record<string, string>): Promise<string> {
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.opts.timeoutMs) });
      text = await res.text();
    } catch (e) {
      // fetch reports "fetch failed" and keeps the reason (ECONNREFUSED, a timeout) in `cause`.
      const cause = e instanceof Error && e.cause instanceof Error ? ` (${e.cause.message})` : "";
      throw new TransportError("transport", 0, e instanceof Error ? `${e.name}: ${e.message}${cause}` : String(e));
    }
    if (res.status < 200 || res.status >= 300) {
      throw errorFromResponse(res.status, text, res.headers.get("Retry-After"));
    }
    return text;
  }

  /**
   * Sends `method path?query` with `body` as JSON. Returns the decoded JSON of a 2xx answer ({} when
   * empty; the text when `raw`); throws the typed BulwarkError otherwise (after bounded retries
   * when `retryable`).
   */
  async request<T = Record<string, unknown>>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    const url = this.base + path + (qs ? `?${qs}` : "");
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    const headers = this.headers(body !== undefined, o.headers);
    const deadline = Date.now() + this.opts.maxRetryWaitMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const text = await this.once(method, url, body, headers);
        if (o.raw) return text as T;
        return (text ? JSON.parse(text) : {}) as T;
      } catch (e) {
        if (!(e instanceof BulwarkError)) throw e;
        const retriable = e.status === 0 || e.status === 429 || e.status === 503;
        if (!o.retryable || !retriable || attempt >= this.opts.maxRetries) throw e;
        const waitMs = e.retryAfter !== undefined ? e.retryAfter * 1000 : Math.min(100 * 2 ** attempt, 2000);
        if (Date.now() + waitMs > deadline) throw e;
        await sleep(waitMs);
      }
    }
  }
}
