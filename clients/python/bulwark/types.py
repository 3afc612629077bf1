"""Result types of the Bulwark client: entries, search results, list pages.

Each keeps the server's JSON in `raw`, so fields added by a newer server are not lost.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional


@dataclasses.dataclass
class Entry:
    """A memory entry as the server returns it (doc/api.md, "Memories"); `score` is set on
    search hits, `report` only for admins."""

    id: str
    namespace: str
    text: Optional[str]
    metadata: dict
    principal: str
    source: str
    kind: str
    state: str
    created_at_us: int
    updated_at_us: int
    key_id: int = 0
    tag: str = ""
    score: Optional[float] = None
    report: Optional[dict] = None
    raw: dict = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, j: dict) -> "Entry":
        """Builds an Entry from one JSON entry object; missing fields get neutral values."""
        return cls(id=j.get("id", ""), namespace=j.get("namespace", ""), text=j.get("text"),
                   metadata=j.get("metadata") or {}, principal=j.get("principal", ""),
                   source=j.get("source", ""), kind=j.get("kind", ""),
                   state=j.get("state", ""), created_at_us=int(j.get("created_at_us", 0)),
                   updated_at_us=int(j.get("updated_at_us", 0)),
                   key_id=int(j.get("key_id", 0)), tag=j.get("tag", ""), score=j.get("score"),
                   report=j.get("report"), raw=j)

    @property
    def key(self) -> Optional[str]:
        """The client-chosen key (metadata "bulwark.key"), or None."""
        return self.metadata.get("bulwark.key")


@dataclasses.dataclass
class SearchResult:
    """The answer of a search: hits best first, the count of withheld candidates, the query
    gate's decision, and with smoothing the smoothed answer."""

    hits: list
    withheld_candidates: int
    gate: dict
    k: int
    smoothed: Optional[dict] = None
    raw: dict = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, j: dict) -> "SearchResult":
        return cls(hits=[Entry.from_json(h) for h in j.get("hits", [])],
                   withheld_candidates=int(j.get("withheld_candidates", 0)),
                   gate=j.get("gate") or {}, k=int(j.get("k", 0)), smoothed=j.get("smoothed"),
                   raw=j)


@dataclasses.dataclass
class Page:
    """One page of `GET /v1/memories`: entries oldest first, the cursor of the next page (None
    at the end), and the count of rows withheld because they failed verification."""

    entries: list
    next_cursor: Optional[str]
    withheld: int

    @classmethod
    def from_json(cls, j: dict) -> "Page":
        return cls(entries=[Entry.from_json(e) for e in j.get("entries", [])],
                   next_cursor=j.get("next_cursor"), withheld=int(j.get("withheld", 0)))


def drop_none(d: dict) -> dict:
    """Returns d without its None values (absent optional fields)."""
    return {k: v for k, v in d.items() if v is not None}


def as_list(x: Any) -> list:
    return list(x) if x is not None else []
