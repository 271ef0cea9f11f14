"""A revealed deal checked against the commitment published before it was played: the check
the daily challenge screen runs on yesterday's deal (:func:`check`), and its verdict in words
for a challenge's line in the inbox and a bracket's closed round (:func:`verdict`).

The commitment checked is the one this client saw before the reveal when it kept one, or else
the one the server quotes beside the reveal (PROTOCOL.md, "Fairness: commitment and replay"):
a server that quotes another commitment than the one it published first is caught by comparing
the two, and a deal that does not hash to it by hashing.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from protocol.fairness import verify

#: What a check found: the deal hashes to the commitment; it does not; or the server now quotes
#: another commitment than the one this client saw before the reveal.
Check = Literal["fair", "unfair", "changed"]

#: The opening words of a verdict (coloured by :func:`coloured`).
FAIR: Final = "✓ Fair:"
NOT_FAIR: Final = "✗ NOT FAIR:"

#: When the commitments of challenges and bracket rounds are published: before their deal is.
BEFORE: Final = "before the reveal"

_OPENING = re.compile(rf"^(\s*)({re.escape(FAIR)}|{re.escape(NOT_FAIR)})", re.MULTILINE)


def check(variant: str, deal: str, salt: str, quoted: str, first_seen: str | None) -> Check:
    """Whether ``deal`` and ``salt`` hash to the commitment this client saw first
    (``first_seen``, None when it saw none before the reveal), which the server must still
    quote (``quoted``); without one, to the quoted commitment."""
    if first_seen is not None and first_seen != quoted:
        return "changed"
    return "fair" if verify(variant, deal, salt, first_seen or quoted) else "unfair"


def verdict(variant: str, deal: str, salt: str, quoted: str | None, first_seen: str | None, when: str = BEFORE) -> str:
    """The verdict on a revealed deal in one line of plain text, opening with :data:`FAIR` or
    :data:`NOT_FAIR`: ``quoted`` is the commitment the server sends beside the reveal (None from
    an older server: then the deal is only shown), ``first_seen`` the one this client saw
    ``when`` (None if it did not)."""
    if quoted is None:
        return f"Deal {deal} (revealed; the server sent no commitment to check it against)."
    found = check(variant, deal, salt, quoted, first_seen)
    if found == "changed" and first_seen is not None:
        return f"{NOT_FAIR} {when} this server committed to {first_seen[:16]}…, but now quotes {quoted[:16]}…."
    published = f"the commitment {(first_seen or quoted)[:16]}…"
    source = f"which you saw {when}" if first_seen else f"as the server quotes it (this client did not see it {when})"
    if found == "fair":
        return f"{FAIR} deal {deal} hashes to {published}, {source}."
    return f"{NOT_FAIR} deal {deal} with salt {salt} does not hash to {published}, {source}."


def coloured(text: str) -> str:
    """``text`` (Rich markup, its own words already escaped) with the opening words of each line
    that is a verdict coloured as the daily challenge screen colours them."""

    def colour(found: re.Match[str]) -> str:
        words = found.group(2)
        return f"{found.group(1)}[{'green' if words == FAIR else 'red'}]{words}[/]"

    return _OPENING.sub(colour, text)
