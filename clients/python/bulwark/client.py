"""The Bulwark Python client: every route of doc/api.md as a method.

    import bulwark
    client = bulwark.Client("http://127.0.0.1:8420", api_key, namespace="alice")
    client.add("Alice prefers a window seat", metadata={"category": "preferences"})
    hits = client.search("which seat does Alice like?", k=3).hits

Standard library only. A method that names a namespace takes `namespace=` and otherwise uses the
client's default (ValueError when neither is set). Every server error raises the typed subclass
of `bulwark.BulwarkError` (errors.py). Reads are retried on 429/503; an add only when it carries
`idempotency_key` (then a retry never stores twice); other writes are never retried.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from typing import Any, Iterator, Optional

from . import errors
from .transport import Transport
from .types import Entry, Page, SearchResult, drop_none


def _q(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


class Client:
    """A client of one `bulwark serve`. Thread-safe: requests are serialized on one keep-alive
    connection (use one Client per thread for parallel requests)."""

    def __init__(self, url: str = "http://127.0.0.1:8420", api_key: Optional[str] = None,
                 namespace: Optional[str] = None, session: Optional[str] = None,
                 timeout: float = 10.0, max_retries: int = 3,
                 max_retry_wait: float = 30.0) -> None:
        self.namespace = namespace
        self._t = Transport(url, api_key, session, timeout, max_retries, max_retry_wait)
        self.quarantine = _Quarantine(self)
        self.admin = _Admin(self)

    @classmethod
    def from_env(cls, **overrides: Any) -> "Client":
        """Builds a client from $BULWARK_URL (default http://127.0.0.1:8420), $BULWARK_API_KEY,
        $BULWARK_NAMESPACE and $BULWARK_SESSION; keyword arguments override them."""
        kw = drop_none({"url": os.environ.get("BULWARK_URL"),
                        "api_key": os.environ.get("BULWARK_API_KEY"),
                        "namespace": os.environ.get("BULWARK_NAMESPACE"),
                        "session": os.environ.get("BULWARK_SESSION")})
        kw.update(overrides)
        return cls(**kw)

    def close(self) -> None:
        self._t.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _ns(self, namespace: Optional[str]) -> str:
        ns = namespace or self.namespace
        if not ns:
            raise ValueError("no namespace: pass namespace= or set Client(namespace=...)")
        return ns

    def _call(self, method: str, path: str, **kw: Any) -> Any:
        return self._t.request(method, path, **kw)

    # --- memories -------------------------------------------------------------------------

    def add(self, text: str, metadata: Optional[dict] = None, *, source: Optional[str] = None,
            key: Optional[str] = None, expires_at_us: Optional[int] = None,
            principal: Optional[str] = None, namespace: Optional[str] = None,
            idempotency_key: Optional[str] = None) -> Entry:
        """Adds one entry (with `key`: an upsert). Returns the stored (or updated) entry; its
        `state` is the write decision ("active" or "quarantined")."""
        body = drop_none({"namespace": self._ns(namespace), "text": text, "metadata": metadata,
                          "source": source, "key": key, "expires_at_us": expires_at_us,
                          "principal": principal})
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        j = self._call("POST", "/v1/memories", body=body, headers=headers,
                       retryable=bool(idempotency_key))
        return Entry.from_json(j["entry"])

    def add_many(self, entries: list, *, namespace: Optional[str] = None,
                 idempotency_key: Optional[str] = None) -> list:
        """Adds a batch, all or nothing. `entries` holds dicts {"text", "metadata"?, "source"?,
        "expires_at_us"?} or strings. Returns the entries in order."""
        items = [{"text": e} if isinstance(e, str) else e for e in entries]
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        j = self._call("POST", "/v1/memories", body={"namespace": self._ns(namespace),
                                                      "entries": items},
                       headers=headers, retryable=bool(idempotency_key))
        return [Entry.from_json(e) for e in j["entries"]]

    def search(self, query: str, k: Optional[int] = None, *, filter: Optional[dict] = None,
               gate: Optional[str] = None, k_high: Optional[int] = None,
               smoothing: Any = None, include_quarantined: Optional[bool] = None,
               namespace: Optional[str] = None) -> SearchResult:
        """Top-k search. Raises QueryRejected when the query gate rejects the query."""
        body = drop_none({"namespace": self._ns(namespace), "query": query, "k": k,
                          "filter": filter, "gate": gate, "k_high": k_high,
                          "smoothing": smoothing, "include_quarantined": include_quarantined})
        return SearchResult.from_json(
            self._call("POST", "/v1/memories/search", body=body, retryable=True))

    def answer(self, question: str, *, smoothing: Optional[dict] = None,
               filter: Optional[dict] = None, gate: Optional[str] = None,
               namespace: Optional[str] = None) -> dict:
        """A smoothed answer with its certificate (the JSON of POST /v1/answer)."""
        body = drop_none({"namespace": self._ns(namespace), "question": question,
                          "smoothing": smoothing, "filter": filter, "gate": gate})
        return self._call("POST", "/v1/answer", body=body, retryable=True)

    def get(self, id: str, *, namespace: Optional[str] = None) -> Entry:
        """One entry in any state. Raises NotFound."""
        j = self._call("GET", f"/v1/memories/{_q(id)}", query={"namespace": self._ns(namespace)},
                       retryable=True)
        return Entry.from_json(j["entry"])

    def get_by_key(self, key: str, *, namespace: Optional[str] = None) -> Optional[Entry]:
        """The live entry holding client key `key`, or None."""
        page = self.list_page(key=key, namespace=namespace)
        return page.entries[0] if page.entries else None

    def history(self, id: str, *, namespace: Optional[str] = None) -> list:
        """The entry's signed history events, oldest first (dicts as the server sends them)."""
        return self._call("GET", f"/v1/memories/{_q(id)}/history",
                          query={"namespace": self._ns(namespace)}, retryable=True)["events"]

    def update(self, id: str, *, text: Optional[str] = None, metadata: Optional[dict] = None,
               namespace: Optional[str] = None) -> Entry:
        """Replaces text and/or metadata; returns the re-signed entry."""
        body = drop_none({"namespace": self._ns(namespace), "text": text, "metadata": metadata})
        return Entry.from_json(self._call("PATCH", f"/v1/memories/{_q(id)}", body=body)["entry"])

    def delete(self, id: str, *, namespace: Optional[str] = None) -> dict:
        """Soft delete. Returns {"id", "state": "deleted"}; Conflict when already deleted."""
        return self._call("DELETE", f"/v1/memories/{_q(id)}",
                          query={"namespace": self._ns(namespace)})

    def purge(self, id: str, *, namespace: Optional[str] = None) -> dict:
        """GDPR erasure (admin). Returns {"id", "state": "purged"}."""
        return self._call("POST", f"/v1/memories/{_q(id)}/purge",
                          body={"namespace": self._ns(namespace)})

    def list_page(self, *, state: Any = None, filter: Optional[dict] = None,
                  limit: Optional[int] = None, cursor: Optional[str] = None,
                  key: Optional[str] = None, namespace: Optional[str] = None) -> Page:
        """One page of entries, oldest first. `state`: a string or a list of states."""
        if state is not None and not isinstance(state, str):
            state = ",".join(state)
        query = {"namespace": self._ns(namespace), "state": state, "limit": limit,
                 "cursor": cursor, "key": key,
                 "filter": None if filter is None else json.dumps(filter, separators=(",", ":"))}
        return Page.from_json(self._call("GET", "/v1/memories", query=query, retryable=True))

    def list(self, *, state: Any = None, filter: Optional[dict] = None,
             page_size: Optional[int] = None, max_pages: int = 1_000_000,
             namespace: Optional[str] = None) -> Iterator[Entry]:
        """Iterates over every matching entry, oldest first, following cursors (at most
        `max_pages` requests)."""
        cursor = None
        for _ in range(max_pages):
            page = self.list_page(state=state, filter=filter, limit=page_size, cursor=cursor,
                                  namespace=namespace)
            yield from page.entries
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def namespaces(self) -> list:
        """The caller's namespaces with counts: [{"namespace", "active", "quarantined", ...}]."""
        return self._call("GET", "/v1/namespaces", retryable=True)["namespaces"]

    def delete_all(self, *, filter: Optional[dict] = None,
                   namespace: Optional[str] = None) -> dict:
        """Soft-deletes every matching entry of the namespace (admin). Returns {"deleted", "ids",
        "more"}; call again while "more" is true."""
        ns = self._ns(namespace)
        return self._call("POST", f"/v1/namespaces/{_q(ns)}/delete-all",
                          body=drop_none({"filter": filter}))

    def forget(self, *, filter: Optional[dict] = None, namespace: Optional[str] = None) -> dict:
        """Purges every matching entry of the namespace (admin). Returns {"purged", "ids",
        "more"}."""
        ns = self._ns(namespace)
        return self._call("POST", f"/v1/namespaces/{_q(ns)}/forget",
                          body=drop_none({"filter": filter}))

    # --- audit, health, metrics -----------------------------------------------------------

    def audit(self, *, principal: Optional[str] = None, session: Optional[str] = None,
              namespace: Optional[str] = None, entry_id: Optional[str] = None,
              since_us: Optional[int] = None, limit: Optional[int] = None) -> list:
        """Audit records, newest first (admin)."""
        query = {"principal": principal, "session": session, "namespace": namespace,
                 "entry_id": entry_id, "since_us": since_us, "limit": limit}
        return self._call("GET", "/v1/audit", query=query, retryable=True)["records"]

    def healthz(self) -> dict:
        return self._call("GET", "/healthz", retryable=True)

    def metrics(self) -> str:
        """Prometheus text (service admin)."""
        return self._call("GET", "/metrics", retryable=True, raw=True)


class _Quarantine:
    """client.quarantine: the review queue (admin)."""

    def __init__(self, c: Client) -> None:
        self._c = c

    def list(self, *, limit: Optional[int] = None, namespace: Optional[str] = None) -> list:
        j = self._c._call("GET", "/v1/quarantine", retryable=True,
                          query={"namespace": self._c._ns(namespace), "limit": limit})
        return [Entry.from_json(e) for e in j["entries"]]

    def add(self, id: str, *, reason: Optional[str] = None,
            namespace: Optional[str] = None) -> Entry:
        """Quarantines an active entry."""
        body = drop_none({"namespace": self._c._ns(namespace), "reason": reason})
        return Entry.from_json(
            self._c._call("POST", f"/v1/memories/{_q(id)}/quarantine", body=body)["entry"])

    def release(self, id: str, *, namespace: Optional[str] = None) -> Entry:
        return Entry.from_json(self._c._call("POST", f"/v1/quarantine/{_q(id)}/release",
                                             body={"namespace": self._c._ns(namespace)})["entry"])

    def reject(self, id: str, *, namespace: Optional[str] = None) -> Entry:
        return Entry.from_json(self._c._call("POST", f"/v1/quarantine/{_q(id)}/reject",
                                             body={"namespace": self._c._ns(namespace)})["entry"])


class _Admin:
    """client.admin: principals, keys, signing keys, verify, blocked sessions (service admin)."""

    def __init__(self, c: Client) -> None:
        self._c = c

    def principals(self) -> list:
        return self._c._call("GET", "/v1/admin/principals", retryable=True)["principals"]

    def create_principal(self, name: str, role: str, namespaces: list,
                         create_key: bool = True) -> dict:
        """Returns {"principal", "key_id", "api_key"}: the key is shown this once."""
        return self._c._call("POST", "/v1/admin/principals",
                             body={"name": name, "role": role, "namespaces": list(namespaces),
                                   "create_key": create_key})

    def principal(self, name: str) -> dict:
        return self._c._call("GET", f"/v1/admin/principals/{_q(name)}",
                             retryable=True)["principal"]

    def revoke_principal(self, name: str) -> dict:
        return self._c._call("POST", f"/v1/admin/principals/{_q(name)}/revoke")

    def keys(self, name: str) -> list:
        return self._c._call("GET", f"/v1/admin/principals/{_q(name)}/keys",
                             retryable=True)["keys"]

    def create_key(self, name: str) -> dict:
        return self._c._call("POST", f"/v1/admin/principals/{_q(name)}/keys")

    def revoke_key(self, key_id: str) -> dict:
        return self._c._call("POST", f"/v1/admin/keys/{_q(key_id)}/revoke")

    def rotate_signing_key(self) -> dict:
        return self._c._call("POST", "/v1/admin/signing-keys/rotate")

    def verify(self) -> dict:
        return self._c._call("POST", "/v1/admin/verify")

    def blocked_sessions(self, *, namespace: Optional[str] = None) -> list:
        return self._c._call("GET", "/v1/admin/sessions/blocked", retryable=True,
                             query={"namespace": namespace})["blocked"]

    def unblock(self, namespace: str, principal: str, session: Optional[str] = None) -> dict:
        return self._c._call("POST", "/v1/admin/sessions/unblock",
                             body=drop_none({"namespace": namespace, "principal": principal,
                                             "session": session}))


__all__ = ["Client", "errors"]
