"""The name and resume tokens the terminal client keeps between runs."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from client.lib.settings import Settings, config_dir


def test_the_name_and_tokens_come_back_and_the_file_is_private(tmp_path: Path) -> None:
    settings = Settings.load(tmp_path / "conf")
    assert settings.name is None
    settings.name = "Ann"
    settings.tokens["ws://127.0.0.1:8765"] = "abc.def"
    settings.save()
    again = Settings.load(tmp_path / "conf")
    assert (again.name, again.tokens) == ("Ann", {"ws://127.0.0.1:8765": "abc.def"})
    mode = (tmp_path / "conf" / "client.json").stat().st_mode
    assert stat.S_IMODE(mode) == 0o600


def test_an_unreadable_file_means_starting_afresh(tmp_path: Path) -> None:
    (tmp_path / "client.json").write_text("{not json")
    assert Settings.load(tmp_path).name is None
    (tmp_path / "client.json").write_text('{"name": 3, "tokens": []}')
    assert Settings.load(tmp_path) == Settings(tmp_path)


def test_the_directory_can_be_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOLITAIRE_RACE_CONFIG_DIR", str(tmp_path))
    assert config_dir() == tmp_path
    assert config_dir(tmp_path / "x") == tmp_path / "x"


def test_settings_of_two_clients_sharing_a_folder_are_merged(tmp_path: Path) -> None:
    first, second = Settings.load(tmp_path), Settings.load(tmp_path)
    first.name = "Ann"
    first.tokens["ws://one"] = "token-1"
    first.save()
    second.tokens["ws://two"] = "token-2"
    second.save()  # read-modify-write: the first client's login stays
    assert Settings.load(tmp_path).tokens == {"ws://one": "token-1", "ws://two": "token-2"}
    assert Settings.load(tmp_path).name == "Ann"
    first.tokens.pop("ws://one")
    first.save()
    assert Settings.load(tmp_path).tokens == {"ws://two": "token-2"}
