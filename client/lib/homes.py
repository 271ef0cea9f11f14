"""Where a room's home server is reached: the service's address, with ``?home=`` for the
balancer to route by (PROTOCOL.md, "Going home")."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable

#: The address of the server named ``home``, from the address in use: (url, home) -> url.
HomeAddress = Callable[[str, str], str]


def home_address(url: str, home: str) -> str:
    """``url`` with its ``home`` query parameter set to ``home`` (its other parameters kept)."""
    parts = urllib.parse.urlsplit(url)
    query = [
        (key, value) for key, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True) if key != "home"
    ]
    query.append(("home", home))
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))
