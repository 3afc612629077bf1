"""One keep-alive HTTP connection to `bulwark serve`, with bounded retries.

`Transport.request` sends one JSON request over a persistent `http.client` connection and returns
the decoded JSON answer, or raises the typed error of `errors.py`. Retries (only for requests the
caller marks retryable: reads, and adds carrying an Idempotency-Key) happen on 429 and 503,
waiting `Retry-After` seconds (else an exponential backoff), at most `max_retries` times and never
past `max_retry_wait` seconds in total; a transport failure of a retryable request is retried the
same way. The server closes a connection idle for 5 s, so one idle for 4 s is reopened before use.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.parse
from typing import Any, Mapping, Optional

from . import errors

USER_AGENT = "bulwark-python/0.1"
_IDLE_REOPEN_S = 4.0
_RETRY_STATUSES = (429, 503)


class Transport:
    """A thread-safe (one request at a time) keep-alive connection to one base URL."""

    def __init__(self, url: str, api_key: Optional[str], session: Optional[str], timeout: float,
                 max_retries: int, max_retry_wait: float) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http(s)://host[:port][/prefix], got {url!r}")
        if max_retries < 0 or max_retry_wait < 0 or timeout <= 0:
            raise ValueError("max_retries and max_retry_wait must be >= 0, timeout > 0")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._api_key = api_key
        self._session = session
        self._timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self._conn: Optional[http.client.HTTPConnection] = None
        self._last_used = 0.0
        self._lock = threading.Lock()

    def close(self) -> None:
        """Closes the connection; the next request opens a new one."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is not None and time.monotonic() - self._last_used > _IDLE_REOPEN_S:
            self._drop()
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=self._timeout)
        return self._conn

    def _headers(self, has_body: bool, extra: Optional[Mapping[str, str]]) -> dict:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        if self._session:
            headers["X-Bulwark-Session"] = self._session
        if has_body:
            headers["Content-Type"] = "application/json"
        headers.update(extra or {})
        return headers

    def _once(self, method: str, target: str, body: Optional[bytes],
              headers: dict) -> tuple[int, bytes, Optional[str]]:
        """One exchange. Returns (status, body, Retry-After); raises TransportError."""
        try:
            conn = self._connection()
            conn.request(method, target, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            if resp.will_close:
                self._drop()
            self._last_used = time.monotonic()
            return resp.status, data, resp.getheader("Retry-After")
        except (OSError, http.client.HTTPException) as e:
            self._drop()
            raise errors.TransportError("transport", 0, f"{type(e).__name__}: {e}") from e

    def request(self, method: str, path: str, query: Optional[Mapping[str, Any]] = None,
                body: Any = None, headers: Optional[Mapping[str, str]] = None,
                retryable: bool = False, raw: bool = False) -> Any:
        """Sends `method path?query` with `body` as JSON (None: no body).

        Returns the decoded JSON answer of a 2xx ({} for an empty one), or the text when `raw`.
        Raises the typed BulwarkError of a non-2xx answer (after retries when `retryable`),
        TransportError when no answer arrived.
        """
        target = self._prefix + path
        q = {k: v for k, v in (query or {}).items() if v is not None}
        if q:
            target += "?" + urllib.parse.urlencode(q)
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        hdrs = self._headers(data is not None, headers)
        deadline = time.monotonic() + self.max_retry_wait
        attempt = 0
        while True:
            try:
                with self._lock:
                    status, payload, retry_after = self._once(method, target, data, hdrs)
                err = None if 200 <= status < 300 else errors.error_from_response(
                    status, payload, retry_after)
            except errors.TransportError as e:
                err = e
            if err is None:
                if raw:
                    return payload.decode("utf-8", "replace")
                return json.loads(payload) if payload else {}
            if not retryable or attempt >= self.max_retries or not (
                    err.status in _RETRY_STATUSES or err.status == 0):
                raise err
            wait = err.retry_after if err.retry_after is not None else min(0.1 * 2**attempt, 2.0)
            if time.monotonic() + wait > deadline:
                raise err
            time.sleep(wait)
            attempt += 1


def default_timeout() -> float:
    """The socket timeout used when none is given (seconds)."""
    return socket.getdefaulttimeout() or 10.0
