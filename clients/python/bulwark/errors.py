"""Typed errors for the Bulwark HTTP API.

Every error answer of `bulwark serve` has the shape {"error": {"code", "message"}} (doc/api.md,
"Errors"). `error_from_response` turns one into the subclass of `BulwarkError` named by its code
(falling back on the HTTP status), so callers can `except bulwark.NotFound:`.
"""

from __future__ import annotations

import json
from typing import Optional


class BulwarkError(Exception):
    """An error answered by the server (or a transport failure, status 0).

    Attributes: code (the server's `error.code`, e.g. "not_found"), status (HTTP status, 0 when
    no answer arrived), message (the server's message), retry_after (seconds from `Retry-After`,
    or None).
    """

    def __init__(self, code: str, status: int, message: str,
                 retry_after: Optional[float] = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.code = code
        self.status = status
        self.message = message
        self.retry_after = retry_after


class TransportError(BulwarkError):
    """No HTTP answer: connection refused or reset, timeout (status 0, code "transport")."""


class BadRequest(BulwarkError):
    """400: invalid_json, unknown_field, missing_field, wrong_type, out_of_range, ..."""


class Unauthenticated(BulwarkError):
    """401: no key, or not a valid key."""


class Forbidden(BulwarkError):
    """403: role too low in a granted namespace, or a refused origin."""


class QueryRejected(Forbidden):
    """403 query_rejected: the namespace's query gate rejected the query."""


class SessionBlocked(Forbidden):
    """403 session_blocked: the honeypot monitor blocked this session or principal."""


class NotFound(BulwarkError):
    """404: not_found, namespace_not_found (an ungranted namespace answers the same), no_route."""


class NamespaceNotFound(NotFound):
    """404 namespace_not_found."""


class Conflict(BulwarkError):
    """409: conflict (state does not allow it; an Idempotency-Key reused with another body)."""


class AlreadyExists(Conflict):
    """409 already_exists: a principal name is taken."""


class PayloadTooLarge(BulwarkError):
    """413: body above the server's --max-body-bytes."""


class RateLimited(BulwarkError):
    """429: the key's token bucket is empty; retry_after says when to come back."""


class Unavailable(BulwarkError):
    """503 (overloaded, audit_unavailable, an LLM unavailable) and 504."""


class Overloaded(Unavailable):
    """503 overloaded: every worker busy and the queue full."""


class AuditUnavailable(Unavailable):
    """503 audit_unavailable: the audit log cannot write; nothing is served meanwhile."""


class ServerError(BulwarkError):
    """500: internal, data_loss, and any other 5xx not listed above."""


class DataLoss(ServerError):
    """500 data_loss: the stored entry failed signature verification and was withheld."""


_BY_CODE = {
    "query_rejected": QueryRejected,
    "session_blocked": SessionBlocked,
    "namespace_not_found": NamespaceNotFound,
    "already_exists": AlreadyExists,
    "rate_limited": RateLimited,
    "overloaded": Overloaded,
    "audit_unavailable": AuditUnavailable,
    "data_loss": DataLoss,
    "unauthenticated": Unauthenticated,
    "payload_too_large": PayloadTooLarge,
}

_BY_STATUS = {
    400: BadRequest, 401: Unauthenticated, 403: Forbidden, 404: NotFound, 405: NotFound,
    409: Conflict, 413: PayloadTooLarge, 429: RateLimited, 503: Unavailable, 504: Unavailable,
}


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Returns the delta-seconds of a Retry-After header, or None if absent or not a number."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def error_from_response(status: int, body: bytes,
                        retry_after: Optional[str] = None) -> BulwarkError:
    """Builds the typed error for a non-2xx answer. A body that is not the documented error shape
    still gives an error (code "http_<status>", message = the first 200 bytes of the body)."""
    code, message = f"http_{status}", body[:200].decode("utf-8", "replace")
    try:
        err = json.loads(body)["error"]
        code, message = str(err["code"]), str(err.get("message", ""))
    except (ValueError, KeyError, TypeError):
        pass
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else BulwarkError
    return cls(code, status, message, parse_retry_after(retry_after))
