"""What the terminal client remembers between runs: the player's name and, per server,
the resume token (which *is* the player there, so the file is private to the user); and
the daily challenges' commitments it has seen, so that the deal revealed after the day can
be checked against the commitment published before it, not one sent along with the deal.

Kept as JSON in the user's config directory (``platformdirs``), or in the directory
given with ``--config-dir`` or ``SOLITAIRE_RACE_CONFIG_DIR``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

FILE_NAME = "client.json"
ENV_DIR = "SOLITAIRE_RACE_CONFIG_DIR"

#: Daily commitments kept (the oldest are forgotten first): a few days of every game and server.
KEPT_COMMITMENTS = 64


def config_dir(override: str | Path | None = None) -> Path:
    if override is not None:
        return Path(override)
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    return Path(platformdirs.user_config_dir("solitaire-race", appauthor=False))


@dataclass
class Settings:
    """The name (None until asked), the resume token for each server URL, and the daily
    commitments seen (by :func:`commitment_key`)."""

    directory: Path
    name: str | None = None
    tokens: dict[str, str] = field(default_factory=dict)
    commitments: dict[str, str] = field(default_factory=dict)

    def seen_commitment(self, key: str, commitment: str) -> str:
        """The commitment first seen under ``key``, remembering ``commitment`` if none was
        (the caller saves). A server that published another one for the same day is caught
        by comparing the two."""
        first = self.commitments.setdefault(key, commitment)
        while len(self.commitments) > KEPT_COMMITMENTS:
            del self.commitments[next(iter(self.commitments))]
        return first

    @classmethod
    def load(cls, directory: Path) -> Settings:
        """The saved settings, or empty ones if there are none or they cannot be read."""
        try:
            data = json.loads((directory / FILE_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(directory)
        if not isinstance(data, dict):
            return cls(directory)
        name = data.get("name")
        return cls(
            directory,
            name if isinstance(name, str) and name.strip() else None,
            _strings(data.get("tokens")),
            _strings(data.get("commitments")),
        )

    def save(self) -> None:
        """Write atomically, readable by the user only (the tokens are credentials)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / FILE_NAME
        temporary = path.with_suffix(".tmp")
        text = json.dumps({"name": self.name, "tokens": self.tokens, "commitments": self.commitments}, indent=2)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)


def commitment_key(url: str, variant: str, date: str) -> str:
    """Where :attr:`Settings.commitments` keeps the commitment of a server's daily deal."""
    return f"{url} {variant} {date}"


def _strings(value: object) -> dict[str, str]:
    """The str-to-str entries of ``value`` if it is a dict (a hand-edited file may hold anything)."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
