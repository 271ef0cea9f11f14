"""Player identity: names, ids and resume tokens.

A resume token is ``<player id>.<generation>.<device>.<expires>.<signature>``: the
signature is an HMAC-SHA256 (its first 128 bits, in hex) of the rest under the server
secret (kept in Redis, so every server process sharing that Redis accepts the same tokens).

- ``generation`` is 0 in a guest's token and the account's generation in an account's: the
  token is good only while the account's generation is the one it carries, so raising it
  (password change, log out everywhere) revokes every token at once.
- ``device`` (16 hex digits) names the client that holds the token. It is drawn for a new
  guest and kept by every token issued to that client after (renewals, log-ins, register),
  so a ``logout`` can revoke one device's tokens, and a log-in can tell a device that signed
  in to the account before.
- ``expires`` is when the token stops resuming, in Unix seconds.

Tokens signed before tokens expired, ``<player id>.<signature>`` and
``<player id>.<generation>.<signature>``, still verify: they carry no device (their device is
read from their signature, so that they can be revoked like the others) and no expiry (the
caller decides how long they are good). Holding a valid token is what proves one is that
player.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata
from dataclasses import dataclass

from server.storage.name_skeleton import is_default_ignorable

MAX_NAME_LENGTH = 24
#: Combining marks one character of a name may carry in a row (Burmese ကျော်, Kyaw, has four).
MAX_MARKS = 4


class InvalidName(ValueError):
    """A display name that cannot be used; the message says why."""


def new_player_id() -> str:
    return secrets.token_hex(8)


def new_device_id() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Token:
    """What a resume token proves: ``player``, with ``generation`` (0: a guest's token), held
    by ``device``, good for resuming until ``expires`` (Unix seconds; None for a token signed
    before tokens expired)."""

    player: str
    generation: int
    device: str
    expires: int | None


def _signature(signed: str, secret: bytes) -> str:
    return hmac.new(secret, signed.encode(), hashlib.sha256).hexdigest()[:32]


def sign(token: Token, secret: bytes) -> str:
    """The text of ``token`` (which must have an expiry), signed with ``secret``."""
    if token.expires is None:
        raise ValueError("a token is signed with its expiry")
    signed = f"{token.player}.{token.generation}.{token.device}.{token.expires}"
    # The prefix keeps these signed bytes apart from any legacy token's.
    return f"{signed}.{_signature('t2:' + signed, secret)}"


def sign_legacy(player: str, secret: bytes, generation: int = 0) -> str:
    """A token as servers signed them before tokens expired (verified for a deployment's
    sake, see :func:`verify_token`; issued by nobody but tests)."""
    signed = player if generation == 0 else f"{player}.{generation}"
    return f"{signed}.{_signature(signed, secret)}"


def _number(text: str) -> int | None:
    """``text`` as a number of at most 12 ASCII digits, or None."""
    return int(text) if text.isdigit() and len(text) <= 12 else None


def verify_token(text: str, secret: bytes) -> Token | None:
    """What ``text`` proves if ``secret`` signed it, or None: None for any other string
    whatever, never an exception. Whether the token expired, was revoked, or carries the
    account's current generation is the caller's to check."""
    # ASCII first: str.isalnum accepts other scripts' letters and digits, and
    # hmac.compare_digest refuses non-ASCII text with a TypeError.
    if not text.isascii():
        return None
    parts = text.split(".")
    player = parts[0]
    if not player.isalnum() or len(player) > 32:
        return None
    if len(parts) == 5:
        generation, expires = _number(parts[1]), _number(parts[3])
        device = parts[2]
        if generation is None or expires is None or len(device) != 16 or not device.isalnum():
            return None
        token = Token(player, generation, device, expires)
        if not hmac.compare_digest(sign(token, secret).encode(), text.encode()):
            return None
        return token
    if len(parts) not in (2, 3):
        return None
    generation = 0
    if len(parts) == 3:
        number = _number(parts[1])
        if number is None or number == 0:
            return None
        generation = number
    expected = sign_legacy(player, secret, generation)
    if not hmac.compare_digest(expected.encode(), text.encode()):
        return None
    return Token(player, generation, expected.rsplit(".", 1)[1][:16], None)


def verify(text: str, secret: bytes) -> str | None:
    """The player id ``text`` proves (see :func:`verify_token`), or None."""
    proved = verify_token(text, secret)
    return None if proved is None else proved.player


# Letters and symbols to Unicode that show as blank space (besides the default-ignorable
# Hangul fillers): padding that looks like nothing.
_BLANK = frozenset("\u2800")
# Categories of what renders as nothing, or as a box at best.
_HIDDEN = {
    "Cc": "a control character",
    "Cf": "a format character",
    "Co": "a private-use character",
    "Cs": "a surrogate",
    "Cn": "an unassigned code point",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}


def _code(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


def _refuse_hidden(char: str) -> None:
    """:class:`InvalidName` if ``char`` shows as nothing or as blank space (an ASCII space
    is the caller's to place)."""
    if char != " " and char.isspace():
        raise InvalidName(f"a name may not hold {_code(char)}: its only white space is one plain space between words")
    if is_default_ignorable(char) or char in _BLANK:
        raise InvalidName(f"a name may not hold {_code(char)}: it shows as nothing or as blank space")
    kind = _HIDDEN.get(unicodedata.category(char))
    if kind is not None:
        raise InvalidName(f"a name may not hold {_code(char)}: it is {kind}")


def clean_name(name: str) -> str:
    """``name`` in NFC without outer white space, if every character of it can be seen;
    :class:`InvalidName` otherwise, its message naming the character (``U+XXXX``). Refused:
    an empty name or one longer than 24 characters; control, format, private-use, surrogate
    and unassigned code points, line and paragraph separators, default-ignorable code points
    and blank fillers (U+3164, U+FFA0, U+115F, U+1160, U+2800); white space other than single
    ASCII spaces between words; a combining mark at the start of a word, or more than
    :data:`MAX_MARKS` of them in a row."""
    cleaned = unicodedata.normalize("NFC", name).strip()
    if not cleaned:
        raise InvalidName("a name needs at least one visible character")
    if len(cleaned) > MAX_NAME_LENGTH:
        raise InvalidName(f"a name has at most {MAX_NAME_LENGTH} characters")
    previous, marks = " ", 0
    for char in cleaned:
        _refuse_hidden(char)
        if char == " " == previous:
            raise InvalidName("a name may not hold two spaces in a row")
        if unicodedata.category(char).startswith("M"):
            if previous == " ":
                raise InvalidName(f"a name may not start a word with {_code(char)}: a mark needs a letter to sit on")
            marks += 1
            if marks > MAX_MARKS:
                raise InvalidName(
                    f"a name may not stack more than {MAX_MARKS} marks on a letter: {_code(char)} is one too many"
                )
        else:
            marks = 0
        previous = char
    return cleaned
