"""The wire error codes: one enum, and PROTOCOL.md documents exactly that set."""

from __future__ import annotations

import re
from pathlib import Path

from protocol.errors import CloseCode, ErrorCode

PROTOCOL_MD = Path(__file__).resolve().parents[2] / "protocol" / "PROTOCOL.md"


def documented_codes() -> list[str]:
    text = PROTOCOL_MD.read_text()
    table = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z-]+)` \|", table, re.M)


def test_protocol_md_documents_exactly_the_error_codes_the_server_sends() -> None:
    documented = documented_codes()
    assert len(documented) == len(set(documented)), "a code is documented twice"
    assert set(documented) == {code.value for code in ErrorCode}


def test_every_close_code_the_server_uses_is_documented() -> None:
    transport = PROTOCOL_MD.read_text().split("\n## Transport\n", 1)[1].split("\n## ", 1)[0]
    for code in CloseCode:
        assert f"| {code.value} " in transport, code
