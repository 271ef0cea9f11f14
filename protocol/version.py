"""The versions a server announces in ``welcome``: the protocol's and its own software's.

``welcome.protocol`` is :data:`~protocol.values.PROTOCOL_VERSION`, the version of this wire
contract; ``welcome.server_version`` is the version of the installed ``solitaire-race``
distribution (pyproject.toml), for people and bug reports, never for a client to branch on.
PROTOCOL.md (Session) says how the two are used.
"""

from __future__ import annotations

import functools
from importlib import metadata

from protocol.values import PROTOCOL_VERSION as PROTOCOL_VERSION

#: The distribution the server, the client and this package ship in (pyproject.toml's name).
DISTRIBUTION = "solitaire-race"


@functools.cache
def server_version() -> str:
    """The installed distribution's version (``"0.1.0"``); ``""`` (left out of ``welcome``)
    when the code runs from a tree that was never installed, so no version is known."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return ""
