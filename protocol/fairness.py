"""The fairness commitment: proof that a race's deal was fixed before it started.

At the start the server publishes ``sha256(f"{variant}|{deal}|{salt}")`` (hex); when
the race ends it reveals ``deal`` and ``salt``, and anyone can recompute the hash.
The salt (128 random bits) keeps the deal from being guessed from the commitment.
"""

from __future__ import annotations

import hashlib
import secrets


def new_salt() -> str:
    return secrets.token_hex(16)


def commitment(variant: str, deal: str, salt: str) -> str:
    return hashlib.sha256(f"{variant}|{deal}|{salt}".encode()).hexdigest()


def verify(variant: str, deal: str, salt: str, published: str) -> bool:
    """Whether the revealed ``deal`` and ``salt`` match the ``published`` commitment."""
    return secrets.compare_digest(commitment(variant, deal, salt), published)
