"""Bulwark: a Python client (standard library only) for `bulwark serve`.

    import bulwark
    client = bulwark.Client.from_env()          # $BULWARK_URL, $BULWARK_API_KEY, $BULWARK_NAMESPACE
    client.add("Alice prefers a window seat")
"""

from .client import Client
from .errors import (AlreadyExists, AuditUnavailable, BadRequest, BulwarkError, Conflict,
                     DataLoss, Forbidden, NamespaceNotFound, NotFound, Overloaded,
                     PayloadTooLarge, QueryRejected, RateLimited, ServerError, SessionBlocked,
                     TransportError, Unauthenticated, Unavailable)
from .types import Entry, Page, SearchResult

__version__ = "0.1.0"
__all__ = [
    "Client", "Entry", "Page", "SearchResult", "BulwarkError", "TransportError", "BadRequest",
    "Unauthenticated", "Forbidden", "QueryRejected", "SessionBlocked", "NotFound",
    "NamespaceNotFound", "Conflict", "AlreadyExists", "PayloadTooLarge", "RateLimited",
    "Unavailable", "Overloaded", "AuditUnavailable", "ServerError", "DataLoss",
]
