"""Resume tokens: a signed token proves its player, generation, device and expiry; tokens
signed before tokens expired still prove their player; any other string, however odd,
proves nobody and never raises."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.features.sessions import Token, new_device_id, new_player_id, sign, sign_legacy, verify, verify_token

SECRET = b"s" * 32


def test_a_signed_token_proves_its_player_generation_device_and_expiry() -> None:
    token = Token(new_player_id(), 3, new_device_id(), 1_900_000_000)
    text = sign(token, SECRET)
    assert text.startswith(f"{token.player}.")
    assert verify_token(text, SECRET) == token
    assert verify(text, SECRET) == token.player
    assert verify_token(text, b"another secret") is None
    guest = Token(token.player, 0, token.device, 1_900_000_000)
    assert verify_token(sign(guest, SECRET), SECRET) == guest


def test_changing_any_part_of_a_token_proves_nobody() -> None:
    token = Token("0123456789abcdef", 1, "00112233aabbccdd", 1_900_000_000)
    parts = sign(token, SECRET).split(".")
    for index, changed in enumerate(["0123456789abcdee", "2", "00112233aabbccde", "1900000001", "0" * 32]):
        forged = ".".join([*parts[:index], changed, *parts[index + 1 :]])
        assert verify_token(forged, SECRET) is None, index


def test_a_legacy_token_proves_its_player_with_no_expiry_and_a_device_of_its_own() -> None:
    player = new_player_id()
    guest, account = sign_legacy(player, SECRET), sign_legacy(player, SECRET, 2)
    proved = verify_token(guest, SECRET)
    assert proved is not None
    assert (proved.player, proved.generation, proved.expires) == (player, 0, None)
    assert proved.device == guest.rsplit(".", 1)[1][:16]  # revocable like any other token
    again = verify_token(account, SECRET)
    assert again is not None
    assert (again.player, again.generation, again.expires) == (player, 2, None)
    assert again.device != proved.device
    # A legacy signature never signs a new-style token, nor the other way round.
    assert verify_token(f"{player}.0.{proved.device}.1900000000.{guest.rsplit('.', 1)[1]}", SECRET) is None


def test_a_token_is_signed_only_with_an_expiry() -> None:
    with pytest.raises(ValueError):
        sign(Token("abc", 0, "00112233aabbccdd", None), SECRET)


@pytest.mark.parametrize(
    "token",
    [
        "\u0661\u0662\u0663.abc",  # Arabic-Indic digits: isalnum, not ASCII
        "\u00e9t\u00e9." + "0" * 32,
        "abc.\u0661\u0662",
        "abc.d\u00e9f",
        "\U0001f600.x",
        "",
        ".",
        "abc",
        "abc.",
        ".abc",
        "a" * 33 + ".x",
        "ab cd.ef",
        "\x00.\x00",
        "abc.0.0011223344556677.1900000000.",
        "abc.x.0011223344556677.1900000000." + "0" * 32,
        "abc.0.00112233.1900000000." + "0" * 32,
        "abc.0.0011223344556677.9999999999999." + "0" * 32,
        "abc.0.0011-22334455667.1900000000." + "0" * 32,
    ],
)
def test_garbage_tokens_prove_nobody(token: str) -> None:
    assert verify(token, SECRET) is None


@given(st.text(max_size=80))
def test_any_string_proves_nobody_without_raising(token: str) -> None:
    assert verify(token, SECRET) is None


@given(st.text(max_size=40))
def test_a_token_with_another_signature_or_anything_added_proves_nobody(text: str) -> None:
    token = sign(Token("0123456789abcdef", 0, "00112233aabbccdd", 1_900_000_000), SECRET)
    head, _, signature = token.rpartition(".")
    assert verify(f"{head}.{text}", SECRET) == ("0123456789abcdef" if text == signature else None)
    assert verify(token + text, SECRET) == ("0123456789abcdef" if not text else None)
    legacy = sign_legacy("0123456789abcdef", SECRET)
    assert verify(legacy + text, SECRET) == ("0123456789abcdef" if not text else None)
