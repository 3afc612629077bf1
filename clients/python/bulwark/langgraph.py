"""A LangGraph-style store over Bulwark: `BulwarkStore` has BaseStore's methods without
importing LangGraph (duck-typed; pass it wherever a store is expected).

Mapping (also in clients/README.md):
- namespace tuple ("memories", "u1") <-> Bulwark namespace "memories.u1": labels joined by ".".
  LangGraph forbids "." in labels; Bulwark names allow 1-64 of [A-Za-z0-9_.-] starting with a
  letter or digit, so each label must be non-empty [A-Za-z0-9_-] and the first start with a
  letter or digit (else ValueError).
- item key <-> the entry's client key (an upsert: one live entry per key and namespace).
- value (a JSON object) <-> the entry's metadata, member for member (so `filter` is Bulwark's
  exact-match metadata filter; members starting with "bulwark." are reserved by the server).
- the embedded text: the values of the `index` fields (top-level names or dotted paths) joined by
  newlines, else the whole value as canonical JSON.
- ttl (minutes) <-> expires_at_us; `refresh_ttl` is not supported (expiry is fixed at write).
- search(prefix) searches the namespace the prefix names and every namespace below it that the
  caller can see (GET /v1/namespaces), merging hits by score; without a query it lists them.
"""

from __future__ import annotations

import collections
import datetime
import json
import re
import time
from typing import Any, Iterable, Optional

from . import errors
from .client import Client
from .types import Entry

_LABEL = re.compile(r"^[A-Za-z0-9_-]+$")

# Operation shapes of langgraph.store.base (same names and fields), for callers without LangGraph.
GetOp = collections.namedtuple("GetOp", "namespace key refresh_ttl", defaults=(True,))
PutOp = collections.namedtuple("PutOp", "namespace key value index ttl", defaults=(None, None))
SearchOp = collections.namedtuple("SearchOp", "namespace_prefix filter limit offset query "
                                  "refresh_ttl", defaults=(None, 10, 0, None, True))
MatchCondition = collections.namedtuple("MatchCondition", "match_type path")
ListNamespacesOp = collections.namedtuple("ListNamespacesOp", "match_conditions max_depth "
                                          "limit offset", defaults=(None, None, 100, 0))


class Item:
    """A stored item: namespace tuple, key, value and times (as langgraph.store.base.Item)."""

    def __init__(self, namespace: tuple, key: str, value: dict, created_at: datetime.datetime,
                 updated_at: datetime.datetime, score: Optional[float] = None) -> None:
        self.namespace, self.key, self.value = namespace, key, value
        self.created_at, self.updated_at, self.score = created_at, updated_at, score

    def __repr__(self) -> str:
        return f"Item(namespace={self.namespace!r}, key={self.key!r}, value={self.value!r})"


def namespace_name(namespace: Iterable[str]) -> str:
    """Returns the Bulwark namespace of a LangGraph namespace tuple; ValueError if it has none."""
    labels = tuple(namespace)
    if not labels or not all(isinstance(x, str) and _LABEL.match(x) for x in labels):
        raise ValueError(f"namespace {labels!r}: labels must be non-empty [A-Za-z0-9_-]")
    name = ".".join(labels)
    if not name[0].isalnum() or len(name) > 64:
        raise ValueError(f"namespace {labels!r}: must start with a letter or digit, <= 64 chars")
    return name


def namespace_tuple(name: str) -> tuple:
    """The inverse of namespace_name."""
    return tuple(name.split("."))


def _time(us: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(us / 1e6, tz=datetime.timezone.utc)


def _path(value: dict, path: str) -> Any:
    cur: Any = value
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _text(value: dict, index: Any) -> str:
    if isinstance(index, list) and index:
        parts = [_path(value, p) for p in index]
        parts = [p if isinstance(p, str) else json.dumps(p, sort_keys=True)
                 for p in parts if p is not None]
        if parts and any(p.strip() for p in parts):
            return "\n".join(parts)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class BulwarkStore:
    """BaseStore's surface (batch, get, put, delete, search, list_namespaces) over a Client."""

    def __init__(self, client: Client, *, page_size: int = 100) -> None:
        self.client = client
        self._page = page_size

    def _item(self, e: Entry, score: Optional[float] = None) -> Item:
        value = {k: v for k, v in e.metadata.items() if not k.startswith("bulwark.")}
        return Item(namespace_tuple(e.namespace), e.key or "", value, _time(e.created_at_us),
                    _time(e.updated_at_us), score)

    def get(self, namespace: tuple, key: str, *, refresh_ttl: Optional[bool] = None) -> Optional[Item]:
        """The item stored under key, or None (also for a namespace the caller cannot see)."""
        try:
            e = self.client.get_by_key(key, namespace=namespace_name(namespace))
        except errors.NotFound:
            return None
        return None if e is None else self._item(e)

    def put(self, namespace: tuple, key: str, value: Optional[dict], index: Any = None, *,
            ttl: Optional[float] = None) -> None:
        """Stores value under key (replacing any live one); value None deletes."""
        if value is None:
            self.delete(namespace, key)
            return
        if not isinstance(value, dict):
            raise ValueError("value must be a dict")
        expires = None if ttl is None else int((time.time() + ttl * 60) * 1e6)
        self.client.add(_text(value, index), metadata=value, key=key, expires_at_us=expires,
                        namespace=namespace_name(namespace))

    def delete(self, namespace: tuple, key: str) -> None:
        """Deletes the item under key; nothing when there is none."""
        ns = namespace_name(namespace)
        try:
            e = self.client.get_by_key(key, namespace=ns)
            if e is not None:
                self.client.delete(e.id, namespace=ns)
        except errors.NotFound:
            pass

    def _below(self, prefix: tuple) -> list:
        names = [n["namespace"] for n in self.client.namespaces()]
        if not prefix:
            return names
        name = namespace_name(prefix)
        found = [n for n in names if n == name or n.startswith(name + ".")]
        return found or [name]

    def search(self, namespace_prefix: tuple, /, *, query: Optional[str] = None,
               filter: Optional[dict] = None, limit: int = 10, offset: int = 0,
               refresh_ttl: Optional[bool] = None) -> list:
        """Items under the prefix: by relevance with a query (score set), else oldest first.
        `filter` is exact equality on top-level value members (operators -> ValueError)."""
        if filter and any(isinstance(k, str) and k.startswith("$") or isinstance(v, dict)
                          and any(str(x).startswith("$") for x in v) for k, v in filter.items()):
            raise ValueError("filter supports exact equality only")
        out: list = []
        for ns in self._below(tuple(namespace_prefix)):
            try:
                if query:
                    r = self.client.search(query, k=min(limit + offset, 100), filter=filter or None,
                                           namespace=ns)
                    out += [self._item(h, h.score) for h in r.hits]
                else:
                    it = self.client.list(filter=filter or None, page_size=self._page, namespace=ns)
                    for e in it:
                        out.append(self._item(e))
                        if len(out) >= limit + offset:
                            break
            except errors.NotFound:
                continue
        if query:
            out.sort(key=lambda i: -(i.score or 0.0))
        return out[offset:offset + limit]

    def list_namespaces(self, *, prefix: Optional[tuple] = None, suffix: Optional[tuple] = None,
                        max_depth: Optional[int] = None, limit: int = 100,
                        offset: int = 0) -> list:
        """Namespace tuples that hold live items, sorted; "*" in prefix/suffix matches any label."""
        def match(t: tuple, pat: Optional[tuple], tail: bool) -> bool:
            if not pat:
                return True
            if len(pat) > len(t):
                return False
            part = t[-len(pat):] if tail else t[:len(pat)]
            return all(p == "*" or p == x for p, x in zip(pat, part))
        seen = set()
        for n in self.client.namespaces():
            if n.get("active", 0) + n.get("quarantined", 0) == 0:
                continue
            t = namespace_tuple(n["namespace"])
            if match(t, tuple(prefix or ()), False) and match(t, tuple(suffix or ()), True):
                seen.add(t[:max_depth] if max_depth else t)
        return sorted(seen)[offset:offset + limit]

    def batch(self, ops: Iterable[Any]) -> list:
        """Runs ops in order (GetOp, PutOp, SearchOp, ListNamespacesOp by field names); returns
        one result per op (None for a put)."""
        results = []
        for op in ops:
            kind = type(op).__name__
            if kind == "GetOp":
                results.append(self.get(op.namespace, op.key))
            elif kind == "PutOp":
                self.put(op.namespace, op.key, op.value, getattr(op, "index", None),
                         ttl=getattr(op, "ttl", None))
                results.append(None)
            elif kind == "SearchOp":
                results.append(self.search(op.namespace_prefix, query=op.query, filter=op.filter,
                                           limit=op.limit, offset=op.offset))
            elif kind == "ListNamespacesOp":
                results.append(self._list_op(op))
            else:
                raise ValueError(f"unknown store operation {kind}")
        return results

    def _list_op(self, op: Any) -> list:
        prefix = suffix = None
        for c in op.match_conditions or ():
            if c.match_type == "prefix":
                prefix = tuple(c.path)
            elif c.match_type == "suffix":
                suffix = tuple(c.path)
        return self.list_namespaces(prefix=prefix, suffix=suffix, max_depth=op.max_depth,
                                    limit=op.limit, offset=op.offset)

    async def abatch(self, ops: Iterable[Any]) -> list:
        return self.batch(ops)
