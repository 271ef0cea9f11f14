"""The fairness commitment: it verifies for the revealed deal and salt, and for nothing else."""

from __future__ import annotations

import hashlib
import re

import pytest

from protocol.fairness import commitment, new_salt, verify

SALT = "5f" * 16


def test_commitment_is_sha256_of_variant_deal_and_salt() -> None:
    expected = hashlib.sha256(f"scorpion|617|{SALT}".encode()).hexdigest()
    assert commitment("scorpion", "617", SALT) == expected
    assert re.fullmatch(r"[0-9a-f]{64}", expected)


def test_verify_accepts_the_right_deal_and_salt() -> None:
    published = commitment("antares", "24", SALT)
    assert verify("antares", "24", SALT, published)


@pytest.mark.parametrize(
    ("variant", "deal", "salt"),
    [
        ("antares", "25", SALT),
        ("antares", "024", SALT),
        ("antares", "24", "5f" * 15 + "5e"),
        ("antares", "24", ""),
        ("scorpion", "24", SALT),
        ("antares", "24|", SALT[1:]),
    ],
)
def test_verify_refuses_anything_else(variant: str, deal: str, salt: str) -> None:
    published = commitment("antares", "24", SALT)
    assert not verify(variant, deal, salt, published)


def test_verify_refuses_a_tampered_commitment() -> None:
    published = commitment("antares", "24", SALT)
    assert not verify("antares", "24", SALT, published.upper())
    assert not verify("antares", "24", SALT, published[:-1] + ("0" if published[-1] != "0" else "1"))
    assert not verify("antares", "24", SALT, "")


def test_salts_are_fresh_128_bit_hex() -> None:
    salts = {new_salt() for _ in range(50)}
    assert len(salts) == 50
    assert all(re.fullmatch(r"[0-9a-f]{32}", salt) for salt in salts)
