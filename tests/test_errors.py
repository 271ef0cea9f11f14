"""The server's exception tree (``server/errors.py``): refusals on one branch, storage failures
on the other as siblings, each class documented where the tree is drawn and saying when it is
raised; account refusals are no room errors."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import server.errors
from protocol.errors import ErrorCode
from server.errors import AccountError, Refused, StorageError
from server.rooms.errors import CommandRefused, RoomError
from server.storage.connection import StoreUnavailable
from server.storage.rooms import Fenced, VersionConflict

ROOT = Path(__file__).resolve().parent.parent
TREE = (Refused, RoomError, CommandRefused, AccountError, StorageError, StoreUnavailable, VersionConflict, Fenced)
#: Codes only the account and session rules answer with.
ACCOUNT_CODES = {
    ErrorCode.WEAK_PASSWORD,
    ErrorCode.NAME_TAKEN,
    ErrorCode.LOGIN_FAILED,
    ErrorCode.TOO_MANY_ATTEMPTS,
    ErrorCode.ALREADY_ACCOUNT,
    ErrorCode.ACCOUNT_REQUIRED,
    ErrorCode.BANNED,
    ErrorCode.INSECURE_TRANSPORT,
    ErrorCode.INVALID_TOKEN,
}


def test_refusals_are_one_branch_each_with_its_code() -> None:
    assert issubclass(CommandRefused, RoomError)
    for kind in (RoomError, AccountError):
        assert issubclass(kind, Refused)
    assert not issubclass(AccountError, RoomError)
    error = AccountError(ErrorCode.BANNED, "banned")
    assert (error.code, str(error), error.rule) == (ErrorCode.BANNED, "banned", None)
    illegal = RoomError(ErrorCode.ILLEGAL_MOVE, "no", "build-in-suit")
    assert (illegal.code, illegal.rule) == (ErrorCode.ILLEGAL_MOVE, "build-in-suit")


def test_the_storage_failures_are_siblings_not_kinds_of_an_outage() -> None:
    for kind in (StoreUnavailable, VersionConflict, Fenced):
        assert issubclass(kind, StorageError)
    assert not issubclass(VersionConflict, StoreUnavailable)  # Redis answered: resynchronise
    assert not issubclass(Fenced, StoreUnavailable)
    assert not issubclass(StoreUnavailable, (VersionConflict, Fenced))
    assert not issubclass(StorageError, Refused)
    assert not issubclass(Refused, StorageError)


@pytest.mark.parametrize("kind", TREE, ids=lambda kind: kind.__name__)
def test_each_class_is_drawn_in_the_tree_and_says_when_it_is_raised(kind: type[Exception]) -> None:
    drawn = server.errors.__doc__ or ""
    assert kind.__name__ in drawn
    assert kind.__module__ in drawn
    assert "raised" in (inspect.getdoc(kind) or "").lower()


def _refusals(path: Path) -> list[tuple[str, ErrorCode, int]]:
    """(class, code, line) of each refusal built in ``path`` with a literal ``ErrorCode.X``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            code = node.args[0]
            if (
                isinstance(code, ast.Attribute)
                and isinstance(code.value, ast.Name)
                and code.value.id == "ErrorCode"
                and code.attr in ErrorCode.__members__
            ):
                found.append((node.func.id, ErrorCode[code.attr], node.lineno))
    return found


def test_account_and_session_refusals_are_account_errors() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} {kind}({code})"
        for path in sorted((ROOT / "server").rglob("*.py"))
        for kind, code, line in _refusals(path)
        if kind in {"RoomError", "CommandRefused"} and code in ACCOUNT_CODES
    ]
    assert wrong == []
    accounts = ROOT / "server" / "features" / "accounts.py"
    assert {kind for kind, _, _ in _refusals(accounts)} == {"AccountError"}
