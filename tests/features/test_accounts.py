"""Accounts' log lines: registrations and logins are a client's to repeat at will, so a flood of
them writes a few lines (the rest of accounts is tested end to end in tests/end_to_end/test_accounts.py)."""

from __future__ import annotations

import logging

import pytest

from protocol.messages import AccountInfo, Login, Register
from server.features import accounts
from server.ops.log_limits import LogLimiter
from tests.end_to_end.conftest import RunningServer

pytestmark = pytest.mark.asyncio

PASSWORD = "correct horse battery"


@pytest.mark.slow  # 30 argon2 checks
async def test_a_flood_of_logins_writes_a_few_lines(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A limiter of this test's own (another test's lines in this process hold back none of
    # these) on a clock that stands still: the flood takes as long as a loaded machine makes it.
    monkeypatch.setattr(accounts, "_log", LogLimiter(accounts.logger, clock=lambda: 0.0))
    caplog.set_level(logging.INFO, logger="server.accounts")
    client = await server.raw("Ann")
    info = await client.request(lambda i: Register(id=i, name="Ann", password=PASSWORD))
    assert isinstance(info, AccountInfo)
    for _ in range(30):
        reply = await client.request(lambda i: Login(id=i, name="Ann", password=PASSWORD))
        assert isinstance(reply, AccountInfo), reply
    lines = [r for r in caplog.records if r.name == "server.accounts"]
    registered = [r for r in lines if r.getMessage() == f"player {info.player} registered as Ann"]
    logged_in = [r for r in lines if "logged in" in r.getMessage()]
    assert len(registered) == 1  # a kind of its own: not held back by the logins, nor they by it
    assert len(logged_in) == 1
    assert logged_in[0].levelno == logging.INFO
    assert logged_in[0].getMessage() == f"account {info.player} logged in"
    assert len(lines) == len(registered) + len(logged_in)
