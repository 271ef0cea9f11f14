"""Player identity: names, ids and resume tokens.

A resume token is ``<player id>.<signature>``, the signature an HMAC-SHA256 of the id
under the server secret (kept in Redis, so every server process sharing that Redis
accepts the same tokens). Holding a token is what proves one is that player.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata

MAX_NAME_LENGTH = 24


class InvalidName(ValueError):
    """A display name that cannot be used; the message says why."""


def new_player_id() -> str:
    return secrets.token_hex(8)


def sign(player: str, secret: bytes) -> str:
    """The resume token of ``player``."""
    signature = hmac.new(secret, player.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{player}.{signature}"


def verify(token: str, secret: bytes) -> str | None:
    """The player id ``token`` proves, or None if it was not signed with ``secret``: None for
    any other string whatever, never an exception."""
    # ASCII first: str.isalnum accepts other scripts' letters and digits, and
    # hmac.compare_digest refuses non-ASCII text with a TypeError.
    if not token.isascii():
        return None
    player, dot, _ = token.partition(".")
    if not dot or not player.isalnum() or len(player) > 32:
        return None
    return player if hmac.compare_digest(sign(player, secret).encode(), token.encode()) else None


def clean_name(name: str) -> str:
    """``name`` with outer spaces removed; :class:`InvalidName` if it is empty, longer than
    24 characters, or holds control or other non-printable characters."""
    cleaned = unicodedata.normalize("NFC", name).strip()
    if not cleaned:
        raise InvalidName("a name needs at least one visible character")
    if len(cleaned) > MAX_NAME_LENGTH:
        raise InvalidName(f"a name has at most {MAX_NAME_LENGTH} characters")
    if not cleaned.isprintable():
        raise InvalidName("a name may not hold control or other non-printable characters")
    return cleaned
