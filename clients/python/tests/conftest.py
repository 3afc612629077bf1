"""Starts a real `bulwark serve` on 127.0.0.1 port 0 for the client tests.

The binary comes from $BULWARK_BIN (CTest sets it); the test is skipped with a clear reason
only when that variable is unset, so `ctest` always runs it. Each server gets a throwaway store,
its admin key is read from the `--json` start-up lines, and it is stopped (SIGTERM, then SIGKILL
after 5 s) at the end. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import pathlib
import select
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import bulwark  # noqa: E402

STARTUP_TIMEOUT_S = 30.0


class Server:
    """One running `bulwark serve`: url, admin_key, and stop()."""

    def __init__(self, *args: str) -> None:
        binary = os.environ.get("BULWARK_BIN")
        if not binary:
            pytest.fail("BULWARK_BIN is not set (the path of the bulwark binary)")
        self._dir = tempfile.TemporaryDirectory(prefix="bulwark-pyclient-")
        store = os.path.join(self._dir.name, "store")
        self._stderr = open(os.path.join(self._dir.name, "stderr"), "w+b")
        self.proc = subprocess.Popen(
            [binary, "--store", store, "--json", "serve", "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=self._stderr, stdin=subprocess.DEVNULL)
        self.admin_key, self.url = self._read_startup()

    def _read_startup(self) -> tuple:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        key, buf = None, b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if not ready:
                if self.proc.poll() is not None:
                    break
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                event = json.loads(line)
                if event.get("event") == "admin_created":
                    key = event["api_key"]
                elif event.get("event") == "listening":
                    return key, f"http://127.0.0.1:{event['port']}"
        self.stop()
        self._stderr.seek(0)
        pytest.fail("bulwark serve did not start: " + self._stderr.read()[-2000:].decode())

    def client(self, key: str = "", **kw) -> bulwark.Client:
        return bulwark.Client(self.url, key or self.admin_key, **kw)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._stderr.close()
        self._dir.cleanup()


@pytest.fixture(scope="session")
def server():
    s = Server("--rate", "0", "--threads", "4")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def slow_server():
    """A server whose keys may make one request per second (burst 1): for 429 retries."""
    s = Server("--rate", "1", "--burst", "1", "--threads", "2")
    yield s
    s.stop()


_counter = [0]


@pytest.fixture
def ns() -> str:
    """A fresh namespace name per test."""
    _counter[0] += 1
    return f"t{os.getpid()}-{_counter[0]}"
