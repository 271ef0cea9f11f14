"""What the terminal client remembers between runs: the player's name and, per server,
the resume token (which *is* the player there, so the file is private to the user).

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


def config_dir(override: str | Path | None = None) -> Path:
    if override is not None:
        return Path(override)
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    return Path(platformdirs.user_config_dir("solitaire-race", appauthor=False))


@dataclass
class Settings:
    """The name (None until asked) and the resume token for each server URL."""

    directory: Path
    name: str | None = None
    tokens: dict[str, str] = field(default_factory=dict)

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
        tokens = data.get("tokens")
        return cls(
            directory,
            name if isinstance(name, str) and name.strip() else None,
            {k: v for k, v in tokens.items() if isinstance(k, str) and isinstance(v, str)}
            if isinstance(tokens, dict)
            else {},
        )

    def save(self) -> None:
        """Write atomically, readable by the user only (the tokens are credentials)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / FILE_NAME
        temporary = path.with_suffix(".tmp")
        text = json.dumps({"name": self.name, "tokens": self.tokens}, indent=2)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
