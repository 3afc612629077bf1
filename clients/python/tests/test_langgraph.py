"""BulwarkStore (the LangGraph-style store) against a real `bulwark serve`: put/get/search/
delete/list_namespaces/batch, the namespace mapping, filters and ttl."""

from __future__ import annotations

import time

import pytest

from bulwark.langgraph import (BulwarkStore, GetOp, ListNamespacesOp, MatchCondition, PutOp,
                               SearchOp, namespace_name, namespace_tuple)


def test_namespace_mapping():
    assert namespace_name(("memories", "u-1")) == "memories.u-1"
    assert namespace_tuple("memories.u-1") == ("memories", "u-1")
    for bad in [(), ("a.b",), ("",), ("_x",), ("a b",), ("x" * 65,)]:
        with pytest.raises(ValueError):
            namespace_name(bad)


def test_put_get_search_delete(server, ns):
    store = BulwarkStore(server.client())
    space = (ns, "u1")
    store.put(space, "seat", {"text": "Alice prefers a window seat", "kind": "pref"},
              index=["text"])
    store.put(space, "food", {"text": "Alice is allergic to peanuts", "kind": "health"})
    item = store.get(space, "seat")
    assert item.key == "seat" and item.namespace == space
    assert item.value == {"text": "Alice prefers a window seat", "kind": "pref"}
    store.put(space, "seat", {"text": "Alice prefers an aisle seat", "kind": "pref"})
    assert store.get(space, "seat").value["text"] == "Alice prefers an aisle seat"
    assert store.get(space, "nothing") is None
    hits = store.search(space, query="which seat does Alice like", limit=1)
    assert [h.key for h in hits] == ["seat"] and hits[0].score is not None
    assert [i.key for i in store.search(space, filter={"kind": "health"})] == ["food"]
    assert sorted(i.key for i in store.search((ns,))) == ["food", "seat"]
    assert len(store.search(space, limit=1, offset=1)) == 1
    with pytest.raises(ValueError):
        store.search(space, filter={"kind": {"$ne": "x"}})
    store.delete(space, "seat")
    assert store.get(space, "seat") is None
    store.delete(space, "seat")  # deleting nothing is not an error
    store.put(space, "food", None)
    assert store.search(space) == []


def test_list_namespaces_and_batch(server, ns):
    store = BulwarkStore(server.client())
    res = store.batch([PutOp((ns, "a"), "k1", {"v": "one"}),
                       PutOp((ns, "b"), "k2", {"v": "two"}), GetOp((ns, "a"), "k1"),
                       SearchOp((ns, "b"), query="two")])
    assert res[0] is None and res[2].value == {"v": "one"} and res[3][0].key == "k2"
    assert store.list_namespaces(prefix=(ns,)) == [(ns, "a"), (ns, "b")]
    assert store.list_namespaces(prefix=(ns,), suffix=("b",)) == [(ns, "b")]
    assert store.list_namespaces(prefix=(ns,), max_depth=1) == [(ns,)]
    op = ListNamespacesOp(match_conditions=(MatchCondition("prefix", (ns, "*")),), limit=1)
    assert store.batch([op]) == [[(ns, "a")]]


def test_ttl_expires_items(server, ns):
    store = BulwarkStore(server.client())
    store.put((ns,), "short", {"text": "gone soon"}, ttl=1.0 / 60)  # one second
    assert store.get((ns,), "short") is not None
    time.sleep(1.5)
    assert store.get((ns,), "short") is None
