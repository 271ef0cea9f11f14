"""Player identity: names, ids and resume tokens.

A guest's resume token is ``<player id>.<signature>``, the signature an HMAC-SHA256 of the
id under the server secret (kept in Redis, so every server process sharing that Redis
accepts the same tokens). An account's token is ``<player id>.<generation>.<signature>``,
signing both: it is good only while the account's generation is the one it carries, so
raising the generation (password change, log out everywhere) revokes every token at once.
Holding a valid token is what proves one is that player.
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


def sign(player: str, secret: bytes, generation: int = 0) -> str:
    """The resume token of ``player``: a guest's (``generation`` 0) or an account's."""
    signed = player if generation == 0 else f"{player}.{generation}"
    signature = hmac.new(secret, signed.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{signed}.{signature}"


def verify_token(token: str, secret: bytes) -> tuple[str, int] | None:
    """The player id and generation (0 for a guest's token) ``token`` proves, or None if it
    was not signed with ``secret``: None for any other string whatever, never an exception.
    Whether the generation is still the account's is the caller's to check."""
    # ASCII first: str.isalnum accepts other scripts' letters and digits, and
    # hmac.compare_digest refuses non-ASCII text with a TypeError.
    if not token.isascii():
        return None
    parts = token.split(".")
    if len(parts) not in (2, 3):
        return None
    player = parts[0]
    if not player.isalnum() or len(player) > 32:
        return None
    generation = 0
    if len(parts) == 3:
        if not parts[1].isdigit() or len(parts[1]) > 12 or int(parts[1]) == 0:
            return None
        generation = int(parts[1])
    if not hmac.compare_digest(sign(player, secret, generation).encode(), token.encode()):
        return None
    return player, generation


def verify(token: str, secret: bytes) -> str | None:
    """The player id ``token`` proves (see :func:`verify_token`), or None."""
    proved = verify_token(token, secret)
    return None if proved is None else proved[0]


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
