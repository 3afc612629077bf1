// Typed errors for the Bulwark HTTP API.
//
// Every error answer of `bulwark serve` is {"error": {"code", "message"}} (doc/api.md, "Errors").
// errorFromResponse() turns one into the subclass of BulwarkError named by its code (falling back
// on the HTTP status), so callers can test `err instanceof NotFound` or `err.code`.

/** An error answered by the server, or a transport failure (status 0, code "transport"). */
export class BulwarkError extends Error {
  /** The server's `error.code`, e.g. "not_found". */
  readonly code: string;
  /** The HTTP status; 0 when no answer arrived. */
  readonly status: number;
  /** Seconds from the `Retry-After` header, or undefined. */
  readonly retryAfter: number | undefined;

  constructor(code: string, status: number, message: string, retryAfter?: number) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** No HTTP answer: connection refused or reset, timeout. */
export class TransportError extends BulwarkError {}
/** 400: invalid_json, unknown_field, missing_field, wrong_type, out_of_range, ... */
export class BadRequest extends BulwarkError {}
/** 401: no key, or not a valid key. */
export class Unauthenticated extends BulwarkError {}
/** 403: role too low in a granted namespace, a refused origin. */
export class Forbidden extends BulwarkError {}
/** 403 query_rejected: the query gate rejected the query. */
export class QueryRejected extends Forbidden {}
/** 403 session_blocked: the honeypot monitor blocked this session or principal. */
export class SessionBlocked extends Forbidden {}
/** 404: not_found, namespace_not_found (an ungranted namespace answers the same), no_route. */
export class NotFound extends BulwarkError {}
/** 404 namespace_not_found. */
export class NamespaceNotFound extends NotFound {}
/** 409: the state does not allow it; an Idempotency-Key reused with another body. */
export class Conflict extends BulwarkError {}
/** 409 already_exists: a principal name is taken. */
export class AlreadyExists extends Conflict {}
/** 413: body above the server's --max-body-bytes. */
export class PayloadTooLarge extends BulwarkError {}
/** 429: the key's token bucket is empty; retryAfter says when to come back. */
export class RateLimited extends BulwarkError {}
/** 503 and 504: overloaded, audit_unavailable, an LLM unavailable. */
export class Unavailable extends BulwarkError {}
/** 503 overloaded. */
export class Overloaded extends Unavailable {}
/** 503 audit_unavailable: the audit log cannot write; nothing is served meanwhile. */
export class AuditUnavailable extends Unavailable {}
/** 500 and other 5xx: internal, data_loss. */
export class ServerError extends BulwarkError {}
/** 500 data_loss: the stored entry failed signature verification and was withheld. */
export class DataLoss extends ServerError {}

type ErrorClass = new (code: string, status: number, message: string, retryAfter?: number) => BulwarkError;

const BY_CODE: Record<string, ErrorClass> = {
  query_rejected: QueryRejected,
  session_blocked: SessionBlocked,
  namespace_not_found: NamespaceNotFound,
  already_exists: AlreadyExists,
  rate_limited: RateLimited,
  overloaded: Overloaded,
  audit_unavailable: AuditUnavailable,
  data_loss: DataLoss,
  unauthenticated: Unauthenticated,
  payload_too_large: PayloadTooLarge,
};

const BY_STATUS: Record<number, ErrorClass> = {
  400: BadRequest,
  401: Unauthenticated,
  403: Forbidden,
  404: NotFound,
  405: NotFound,
  409: Conflict,
  413: PayloadTooLarge,
  429: RateLimited,
  503: Unavailable,
  504: Unavailable,
};

/** The delta-seconds of a Retry-After header, or undefined if absent or not a number. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value.trim());
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

/**
 * The typed error of a non-2xx answer. A body that is not the documented shape still gives an
 * error (code "http_<status>", message = the first 200 characters of the body).
 */
export function errorFromResponse(status: number, body: string, retryAfter: string | null): BulwarkError {
  let code = `http_${status}`;
  let message = body.slice(0, 200);
  try {
    const err = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } }).error;
    if (err && typeof err.code === "string") {
      code = err.code;
      message = typeof err.message === "string" ? err.message : "";
    }
  } catch {
    // not JSON: keep the raw text
  }
  const cls = BY_CODE[code] ?? BY_STATUS[status] ?? (status >= 500 ? ServerError : BulwarkError);
  return new cls(code, status, message, parseRetryAfter(retryAfter));
}
