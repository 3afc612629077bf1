"""The Python client against a real `bulwark serve`: every route family, typed errors, the list
iterator over cursors, idempotent adds, keep-alive, and bounded retries on 429."""

from __future__ import annotations

import time

import pytest

import bulwark


def test_add_get_search_update_history_delete(server, ns):
    c = server.client(namespace=ns)
    e = c.add("Alice prefers a window seat", {"category": "preferences"}, source="agent")
    assert e.state == "active" and e.namespace == ns and e.text.startswith("Alice")
    assert c.get(e.id).metadata == {"category": "preferences"}
    c.add("Dentist on Friday at 10", {"category": "health"})
    r = c.search("which seat does Alice like?", k=1)
    assert [h.id for h in r.hits] == [e.id] and r.hits[0].score is not None
    assert c.search("seat", k=5, filter={"category": "health"}).hits[0].text.startswith("Dentist")
    u = c.update(e.id, text="Alice prefers an aisle seat")
    assert u.text == "Alice prefers an aisle seat" and u.id == e.id
    assert [ev["event"] for ev in c.history(e.id)] == ["add", "update"]
    assert c.delete(e.id)["state"] == "deleted"
    assert c.get(e.id).state == "deleted"
    with pytest.raises(bulwark.Conflict) as err:
        c.delete(e.id)
    assert err.value.status == 409 and err.value.code == "conflict"


def test_typed_errors(server, ns):
    c = server.client(namespace=ns)
    with pytest.raises(bulwark.NotFound) as nf:
        c.get("01M807153J8V4939MARY9AFXES")
    assert (nf.value.status, nf.value.code, nf.value.message) == (404, "not_found",
                                                                    "entry not found")
    with pytest.raises(bulwark.BadRequest) as br:
        c.search("x", k=0)
    assert br.value.code == "out_of_range"
    with pytest.raises(bulwark.Unauthenticated) as un:
        server.client("bwk_0000000000000000_" + "0" * 64, namespace=ns).search("x")
    assert un.value.status == 401
    with pytest.raises(ValueError):
        server.client().search("no namespace given")
    closed = bulwark.Client("http://127.0.0.1:2", "k", namespace=ns, max_retries=1,
                            max_retry_wait=1)
    with pytest.raises(bulwark.TransportError) as te:
        closed.search("nothing listens on port 2")
    assert te.value.status == 0 and "ConnectionRefused" in te.value.message


def test_roles_and_isolation(server, ns):
    admin = server.client(namespace=ns)
    made = admin.admin.create_principal(f"reader-{ns}", "reader", [ns])
    assert made["api_key"].startswith("bwk_")
    reader = server.client(made["api_key"], namespace=ns)
    assert reader.search("anything").hits == []
    with pytest.raises(bulwark.Forbidden) as fb:
        reader.add("readers cannot write")
    assert fb.value.code == "forbidden"
    with pytest.raises(bulwark.NamespaceNotFound):
        reader.search("x", namespace=ns + "-other")
    assert [n["namespace"] for n in reader.namespaces()] == [ns]
    admin.admin.revoke_key(made["key_id"])
    with pytest.raises(bulwark.Unauthenticated):
        reader.search("x")


def test_list_iterates_over_cursors(server, ns):
    c = server.client(namespace=ns)
    ids = [e.id for e in c.add_many([f"fact number {i}" for i in range(7)])]
    page = c.list_page(limit=3)
    assert len(page.entries) == 3 and page.next_cursor is not None
    assert [e.id for e in c.list(page_size=3)] == ids
    assert [e.id for e in c.list(page_size=3, max_pages=2)] == ids[:6]
    c.add("tagged", {"user_id": "u1"})
    assert [e.text for e in c.list(filter={"user_id": "u1"})] == ["tagged"]
    c.delete(ids[0])
    assert [e.id for e in c.list(state=["deleted"])] == [ids[0]]


def test_keys_upsert_and_idempotency(server, ns):
    c = server.client(namespace=ns)
    first = c.add("v1", key="profile")
    second = c.add("v2", key="profile")
    assert second.id == first.id and c.get_by_key("profile").text == "v2"
    assert c.get_by_key("missing") is None
    a = c.add("only once", idempotency_key="idem-1")
    b = c.add("only once", idempotency_key="idem-1")
    assert a.id == b.id
    assert sum(1 for e in c.list() if e.text == "only once") == 1
    with pytest.raises(bulwark.Conflict):
        c.add("a different body", idempotency_key="idem-1")


def test_delete_all_forget_purge_quarantine(server, ns):
    c = server.client(namespace=ns)
    u1 = c.add("u1 likes tea", {"user_id": "u1"})
    c.add("u2 likes coffee", {"user_id": "u2"})
    gone = c.forget(filter={"user_id": "u1"})
    assert gone["purged"] == 1 and gone["ids"] == [u1.id] and c.get(u1.id).state == "purged"
    q = c.add("suspicious")
    assert c.quarantine.add(q.id, reason="test").state == "quarantined"
    assert [e.id for e in c.quarantine.list()] == [q.id]
    assert c.quarantine.release(q.id).state == "active"
    c.quarantine.add(q.id)
    assert c.quarantine.reject(q.id).state == "deleted"
    p = c.add("to purge")
    assert c.purge(p.id)["state"] == "purged"
    assert c.delete_all()["deleted"] == 1
    assert list(c.list()) == []


def test_answer_audit_admin_metrics(server, ns):
    c = server.client(namespace=ns, session="chat-42")
    c.add("Alice prefers a window seat")
    ans = c.answer("which seat does Alice like?")
    assert ans["abstained"] is False and "window" in ans["answer"]
    assert c.search("seat").hits
    time.sleep(0.2)  # the audit log group-commits every 50 ms
    recs = c.audit(namespace=ns, session="chat-42", limit=10)
    assert "search" in [r["operation"] for r in recs]
    assert "admin" in [p["name"] for p in c.admin.principals()]
    assert c.admin.verify()["ok"] is True
    assert "bulwark_http_requests_total" in c.metrics()
    assert c.healthz() == {"status": "ok"}


def test_keep_alive_reuses_one_connection(server, ns):
    c = server.client(namespace=ns)
    c.healthz()
    conn = c._t._conn
    for _ in range(5):
        c.healthz()
    assert c._t._conn is conn and conn.sock is not None


def test_from_env(server, ns, monkeypatch):
    monkeypatch.setenv("BULWARK_URL", server.url)
    monkeypatch.setenv("BULWARK_API_KEY", server.admin_key)
    monkeypatch.setenv("BULWARK_NAMESPACE", ns)
    c = bulwark.Client.from_env()
    assert c.add("from the environment").namespace == ns


def test_retries_honour_retry_after_and_are_bounded(slow_server, ns):
    c = slow_server.client(namespace=ns, max_retries=3, max_retry_wait=10)
    c.healthz()  # no key needed; does not spend the bucket
    c.search("spend the single token")  # may itself wait for a refill
    t0 = time.monotonic()
    c.search("retried after Retry-After")
    assert time.monotonic() - t0 >= 0.5  # waited for the bucket instead of failing
    with pytest.raises(bulwark.RateLimited) as rl:
        c.add("an add without an idempotency key is never retried")
    assert rl.value.status == 429 and rl.value.retry_after is not None
    impatient = slow_server.client(namespace=ns, max_retries=0)
    with pytest.raises(bulwark.RateLimited):
        impatient.search("no retries allowed")
    time.sleep(1.1)
    assert c.add("with a key it is retried", idempotency_key="k-1").state == "active"
    assert c.add("with a key it is retried", idempotency_key="k-1").state == "active"


def test_idle_connection_is_reopened_before_a_write(server, ns):
    # The server closes a connection idle for 5 s; a non-retryable write after that must not
    # fail on the stale socket (the client reopens one idle for 4 s).
    c = server.client(namespace=ns)
    e = c.add("before the pause")
    time.sleep(5.5)
    assert c.update(e.id, text="after the pause").text == "after the pause"
