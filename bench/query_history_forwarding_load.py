#!/usr/bin/env python3
"""Search cost on a follower with MemSAD query-history forwarding on or off (issue #17 point 2;
doc/scale-out.md, "The write gate's state on takeover").

    bench/query_history_forwarding_load.py BULWARK_BINARY PG_PORT on|off [SEARCHES_PER_THREAD=500]

Needs a running PostgreSQL 15 on 127.0.0.1:PG_PORT that user postgres reaches without a password
(a throwaway cluster: initdb -A trust, pg_ctl start -o "-p PORT -c listen_addresses=127.0.0.1").
Creates a fresh database, starts three `bulwark serve --replica-id` processes (R = 2, rate limit
off, --forward-query-history on|off) on 127.0.0.1 port 0, writes 200 memories into namespace "h",
finds the replica that holds but does not lead "h" (the follower), then sends 4 threads x N
searches with distinct queries to the follower only: a warm-up round, then a measured one. Prints
one JSON line: searches per second (wall time), the follower's and the leader's CPU time (user +
system, from /proc) per search in the measured round, and the query-history counters. Bounded:
every request has a 10 s timeout; the replicas are stopped at the end (and on any failure).
"""
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


def main():
    binary, pg_port, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    per_thread = int(sys.argv[4]) if len(sys.argv) > 4 else 500
    assert mode in ("on", "off") and 0 < per_thread <= 10000
    db = f"qhbench_{mode}_{os.getpid()}_{int(time.time())}"
    psql = ["psql", "-h", "127.0.0.1", "-p", pg_port, "-U", "postgres", "-q"]
    subprocess.run(psql + ["-c", f"CREATE DATABASE {db}"], check=True, timeout=30)
    url = f"postgresql://postgres@127.0.0.1:{pg_port}/{db}"
    work = tempfile.mkdtemp(prefix="qhbench-")
    procs = {}
    try:
        for rid in ("r1", "r2", "r3"):
            procs[rid] = start(binary, url, work, rid, mode)
        print(json.dumps(run(procs, psql, db, per_thread, mode)))
    finally:
        for info in procs.values():
            info["p"].terminate()
        for info in procs.values():
            info["p"].wait(timeout=30)


def start(binary, url, work, rid, mode):
    p = subprocess.Popen(
        [binary, "--store", url, "--json", "serve", "--port", "0", "--keyring", f"{work}/keyring.json",
         "--replica-id", rid, "--replication-factor", "2", "--lease-ttl-ms", "2000", "--rate", "0",
         "--forward-query-history", "true" if mode == "on" else "false"],
        stdout=subprocess.PIPE, stderr=open(f"{work}/{rid}.stderr", "w"), text=True)
    info = {"p": p}
    deadline = time.time() + 60
    while time.time() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        event = json.loads(line)
        if event.get("event") == "admin_created":
            info["key"] = event["api_key"]
        if event.get("event") == "listening":
            info["port"] = event["port"]
            return info
    raise RuntimeError(f"{rid} did not start")


def run(procs, psql, db, per_thread, mode):
    key = procs["r1"]["key"]

    def req(rid, method, path, body=None, conn=None):
        c = conn or http.client.HTTPConnection("127.0.0.1", procs[rid]["port"], timeout=10)
        c.request(method, path, body=json.dumps(body) if body is not None else None,
                  headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read()

    entries = [{"text": f"memory {i}: the meeting {i} is in room {i % 17}"} for i in range(200)]
    status, _ = req("r1", "POST", "/v1/memories", {"namespace": "h", "entries": entries})
    assert status == 201, status
    holder = subprocess.run(psql + ["-d", db, "-At", "-c", "SELECT holder FROM namespace_leases WHERE namespace = 'h'"],
                            capture_output=True, text=True, timeout=30).stdout.strip()
    leader = holder.split("/")[0]
    follower = None
    deadline = time.time() + 15
    while follower is None and time.time() < deadline:
        for rid in procs:
            if rid != leader:
                _, body = req(rid, "GET", "/v1/admin/stats")
                if "h" in json.loads(body).get("replica", {}).get("held_namespaces", []):
                    follower = rid
        time.sleep(0.2)
    assert follower, "no follower holds h"

    def cpu(rid):  # user + system CPU seconds of the replica's process
        fields = open(f"/proc/{procs[rid]['p'].pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def worker(t, out):
        c = http.client.HTTPConnection("127.0.0.1", procs[follower]["port"], timeout=10)
        ok = 0
        for i in range(per_thread):
            query = {"namespace": "h", "query": f"where is meeting {t * per_thread + i}", "k": 5}
            ok += req(follower, "POST", "/v1/memories/search", query, conn=c)[0] == 200
        out.append(ok)

    for _ in range(2):  # a warm-up round, then the measured one
        out = []
        threads = [threading.Thread(target=worker, args=(t, out)) for t in range(4)]
        before = {rid: cpu(rid) for rid in procs}
        t0 = time.time()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        elapsed = time.time() - t0
        time.sleep(0.2)  # the last batches reach the leader
        after = {rid: cpu(rid) for rid in procs}

    def metric(rid, name):
        _, body = req(rid, "GET", "/metrics")
        for line in body.decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return None

    n = 4 * per_thread
    return {"mode": mode, "searches": n, "ok": sum(out), "seconds": round(elapsed, 3),
            "per_s": round(sum(out) / elapsed, 1), "load1": open("/proc/loadavg").read().split()[0],
            "follower_cpu_us_per_search": round((after[follower] - before[follower]) / n * 1e6, 1),
            "leader_cpu_us_per_search": round((after[leader] - before[leader]) / n * 1e6, 1),
            "leader_received_total": metric(leader, "bulwark_query_history_received_total"),
            "follower_forwarded_total": metric(follower, "bulwark_query_history_forwarded_total"),
            "follower_dropped_total": metric(follower, "bulwark_query_history_forward_dropped_total")}


if __name__ == "__main__":
    main()
