"""What the terminal client remembers between runs: the player's name and, per server,
the resume token (which *is* the player there, so the file is private to the user); and
the commitments it has seen before their deal was revealed (a daily challenge's, a challenge's,
a bracket round's), so that the deal revealed later can be checked against the commitment
published before it, not one sent along with the deal.

Kept as JSON in the user's config directory (``platformdirs``), or in the directory
given with ``--config-dir`` or ``SOLITAIRE_RACE_CONFIG_DIR``. Several clients may share
that directory (one per server, or two windows): :meth:`Settings.save` writes under a
lock and merges, so each keeps the others' logins.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

try:
    import fcntl
except ImportError:  # not on Windows: there, concurrent saves are not serialised
    fcntl = None  # type: ignore[assignment]

FILE_NAME = "client.json"
LOCK_NAME = "client.lock"
ENV_DIR = "SOLITAIRE_RACE_CONFIG_DIR"

#: Commitments kept (the oldest are forgotten first): a few days of every game's daily challenge
#: and a full inbox of challenges on a few servers, with the brackets' rounds.
KEPT_COMMITMENTS = 256


def config_dir(override: str | Path | None = None) -> Path:
    if override is not None:
        return Path(override)
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    return Path(platformdirs.user_config_dir("solitaire-race", appauthor=False))


@dataclass
class Settings:
    """The name (None until asked), the resume token for each server URL, and the commitments
    seen (by :func:`commitment_key`, :func:`challenge_key` and :func:`round_key`)."""

    directory: Path
    name: str | None = None
    tokens: dict[str, str] = field(default_factory=dict)
    commitments: dict[str, str] = field(default_factory=dict)
    #: The name and tokens as last read or written (nothing, for settings made rather than
    #: loaded), to tell this client's changes from other clients' when saving.
    _base_name: str | None = field(default=None, compare=False, repr=False)
    _base_tokens: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

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
        settings = cls(
            directory,
            name if isinstance(name, str) and name.strip() else None,
            _strings(data.get("tokens")),
            _strings(data.get("commitments")),
        )
        settings._base_name, settings._base_tokens = settings.name, dict(settings.tokens)
        return settings

    def save(self) -> None:
        """Merge this client's changes into the file and write it atomically, readable by
        the user only (the tokens are credentials). Under a lock, the file is read again
        and only what this client changed since it last read or wrote is applied: the
        tokens it set or dropped, its name if it changed it; every commitment seen by anyone
        is kept (the first one seen of a day, a challenge or a round wins). Afterwards this object holds
        the merged settings."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / FILE_NAME
        with self._lock():
            disk = Settings.load(self.directory)
            tokens = dict(disk.tokens)
            for url in self._base_tokens.keys() | self.tokens.keys():
                mine = self.tokens.get(url)
                if mine == self._base_tokens.get(url):
                    continue
                if mine is None:
                    tokens.pop(url, None)
                else:
                    tokens[url] = mine
            name = self.name if self.name != self._base_name else disk.name
            commitments = {**self.commitments, **disk.commitments}
            while len(commitments) > KEPT_COMMITMENTS:
                del commitments[next(iter(commitments))]
            text = json.dumps({"name": name, "tokens": tokens, "commitments": commitments}, indent=2)
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(text)
            os.replace(temporary, path)
        self.name, self.tokens, self.commitments = name, tokens, commitments
        self._base_name, self._base_tokens = name, dict(tokens)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        """Hold the directory's lock file (one saver at a time, across processes)."""
        descriptor = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # closing releases the lock


def commitment_key(url: str, variant: str, date: str) -> str:
    """Where :attr:`Settings.commitments` keeps the commitment of a server's daily deal."""
    return f"{url} {variant} {date}"


def challenge_key(url: str, challenge: str) -> str:
    """Where :attr:`Settings.commitments` keeps the commitment of a server's challenge's deal."""
    return f"{url} challenge {challenge}"


def round_key(url: str, bracket: str, number: int) -> str:
    """Where :attr:`Settings.commitments` keeps the commitment of round ``number`` of a bracket."""
    return f"{url} bracket {bracket} round {number}"


def _strings(value: object) -> dict[str, str]:
    """The str-to-str entries of ``value`` if it is a dict (a hand-edited file may hold anything)."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
