"""Error mapping without a server: every documented code gives its typed error, with code,
status, message and Retry-After; a body that is not the error shape still gives an error."""

from __future__ import annotations

import json

import pytest

import bulwark
from bulwark.errors import error_from_response, parse_retry_after


@pytest.mark.parametrize("status,code,cls", [
    (400, "unknown_field", bulwark.BadRequest), (401, "unauthenticated", bulwark.Unauthenticated),
    (403, "forbidden", bulwark.Forbidden), (403, "query_rejected", bulwark.QueryRejected),
    (403, "session_blocked", bulwark.SessionBlocked), (404, "not_found", bulwark.NotFound),
    (404, "namespace_not_found", bulwark.NamespaceNotFound), (409, "conflict", bulwark.Conflict),
    (409, "already_exists", bulwark.AlreadyExists), (413, "payload_too_large",
                                                     bulwark.PayloadTooLarge),
    (429, "rate_limited", bulwark.RateLimited), (503, "overloaded", bulwark.Overloaded),
    (503, "audit_unavailable", bulwark.AuditUnavailable), (500, "data_loss", bulwark.DataLoss),
    (500, "internal", bulwark.ServerError), (504, "timeout", bulwark.Unavailable),
])
def test_codes_map_to_types(status, code, cls):
    body = json.dumps({"error": {"code": code, "message": "m"}}).encode()
    err = error_from_response(status, body, "3")
    assert type(err) is cls and isinstance(err, bulwark.BulwarkError)
    assert (err.code, err.status, err.message, err.retry_after) == (code, status, "m", 3.0)


def test_unshaped_body_and_retry_after():
    err = error_from_response(502, b"<html>bad gateway</html>")
    assert type(err) is bulwark.ServerError and err.code == "http_502"
    assert "bad gateway" in err.message
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("-1") is None and parse_retry_after(" 1 ") == 1.0
