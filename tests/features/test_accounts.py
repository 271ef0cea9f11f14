"""Accounts' log lines: registrations and logins are a client's to repeat at will, so a flood of
them writes a few lines, and a server hashes passwords at argon2's default cost (the rest of
accounts is tested end to end in tests/end_to_end/test_accounts.py)."""

from __future__ import annotations

import asyncio
import logging
import sys

import pytest
from argon2 import profiles

from protocol.messages import AccountInfo, Login, Register
from server.features import accounts
from server.ops.log_limits import LogLimiter
from tests.end_to_end.conftest import RunningServer

pytestmark = pytest.mark.asyncio

PASSWORD = "correct horse battery"


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


async def test_a_server_process_hashes_passwords_at_argon2s_default_cost() -> None:
    """The suite's own processes hash at argon2's cheapest (tests/conftest.py); a server's keep
    argon2-cffi's defaults, RFC 9106's low-memory profile."""
    script = (
        "import asyncio; from server.features.accounts import hash_password; print(asyncio.run(hash_password('pw')))"
    )
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE)
    stored, _ = await process.communicate()
    assert process.returncode == 0
    expected = profiles.RFC_9106_LOW_MEMORY
    assert stored.decode().startswith(
        f"$argon2id$v=19$m={expected.memory_cost},t={expected.time_cost},p={expected.parallelism}$"
    )
    assert await accounts.password_matches(stored.decode().strip(), "pw")  # whichever hasher checks it
