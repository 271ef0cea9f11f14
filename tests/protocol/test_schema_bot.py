"""A bot written against protocol/schema.json alone, in JavaScript (tests/schema_bot/bot.mjs),
races on a real server: hello, a one-racer room, legal moves played until the race ends.

Its packages (@msgpack/msgpack, and ws where node has no WebSocket of its own) are installed
with ``npm ci`` from the lockfile beside it, into a copy of the folder made for the test, so
runs at the same time never share a node_modules. Without node or npm, or when the install
fails (no registry and nothing cached), the test is skipped.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from importlib import metadata
from pathlib import Path

import pytest

from protocol.messages import PROTOCOL_VERSION
from protocol.schema import SCHEMA_FILE
from protocol.version import DISTRIBUTION
from tests.end_to_end.conftest import RunningServer

BOT = Path(__file__).resolve().parents[1] / "schema_bot"
FILES = ("package.json", "package-lock.json", "bot.mjs")
MOVES = 12
INSTALL_SECONDS = 240
RUN_SECONDS = 120

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="node or npm missing"),
]


async def run(*command: str, cwd: Path, timeout: float) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *command, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def installed(tmp_path: Path) -> Path:
    folder = tmp_path / "schema_bot"
    folder.mkdir()
    for name in FILES:
        shutil.copy2(BOT / name, folder / name)
    npm = ("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline")
    try:
        code, _, err = await run(*npm, cwd=folder, timeout=INSTALL_SECONDS)
    except TimeoutError:
        pytest.skip(f"npm ci took over {INSTALL_SECONDS} s")
    if code != 0:
        pytest.skip(f"npm ci failed ({code}): {err.strip()[-400:]}")
    return folder


async def test_the_schema_bot_races_to_the_end(server: RunningServer, tmp_path: Path) -> None:
    folder = await installed(tmp_path)
    code, out, err = await run(
        "node", "bot.mjs", server.url, str(SCHEMA_FILE), str(MOVES), cwd=folder, timeout=RUN_SECONDS
    )
    assert code == 0, f"the bot failed ({code}):\n{err}\n{out}"
    seen = json.loads(out.strip().splitlines()[-1])
    print(out)  # shown with -s, and on failure
    assert seen["protocol"] == PROTOCOL_VERSION
    assert seen["server_version"] == metadata.version(DISTRIBUTION)
    assert seen["race_over"] is True
    assert 1 <= len(seen["moves"]) <= MOVES
    [result] = seen["results"]
    assert result["place"] == 1
    assert result["bot"] is True  # the bot said so in hello
    assert seen["frames"] >= 6  # welcome, joined, snapshot, acks, updates: every one validated
