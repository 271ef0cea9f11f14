"""Server settings, each declared once: its flag, environment variable, default, check and help.

Every field of :class:`Config` is a setting. ``--help`` lists them with their defaults; a flag
wins over its environment variable (the field name in upper case: ``--solver-workers`` and
``SOLVER_WORKERS``), which wins over the default. A value that is not valid stops start-up with
:class:`SettingError`, one line naming the setting.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

_LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")


class SettingError(ValueError):
    """A setting with a value that cannot be used; the message names it and says why."""


@dataclass(frozen=True, slots=True)
class _Spec:
    help: str
    parse: Callable[[str], Any]
    check: Callable[[Any], str | None]  # the problem with a parsed value, or None


def _setting(
    default: Any,
    help: str,
    parse: Callable[[str], Any] = str,
    minimum: float | None = None,
    choices: tuple[str, ...] | None = None,
    maximum: float | None = None,
) -> Any:
    def check(value: Any) -> str | None:
        bounded = value is not None and (minimum is not None or maximum is not None)
        if bounded and value != value:  # NaN: every comparison with it is false
            return "must be a number"
        if minimum is not None and value is not None and value < minimum:
            return f"must be at least {_bound(minimum)}"
        if maximum is not None and value is not None and value > maximum:
            return f"must be at most {_bound(maximum)}"
        if choices is not None and value not in choices:
            return f"must be one of {', '.join(choices)}"
        return None

    return field(default=default, metadata={"spec": _Spec(help, parse, check)})


def _bound(number: float) -> str:
    """A bound as a setting's message gives it: ``65535``, ``1000000000``, ``0.1``."""
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


#: The largest port number (TCP).
_PORT_MAX: Final = 65535
#: Upper bounds, far past any sensible value but short of where a value stops working (Redis
#: expiry times, Lua's exact integers) or does harm (processes started): a typo, a value in
#: the wrong unit or ``inf`` is one line at start-up instead of a failure later.
_COUNT_MAX: Final = 1_000_000_000
_RATE_MAX: Final = 1_000_000.0
_PROCESSES_MAX: Final = 256
_HOUR: Final = 3600
_DAY: Final = 24 * _HOUR
_YEAR: Final = 365 * _DAY


def _flag(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "on", "true", "yes"):
        return True
    if lowered in ("0", "off", "false", "no", ""):
        return False
    raise ValueError(f"{text!r} is not on or off")


def _redis_url(text: str) -> str | None:
    if not text:
        return None
    if not text.startswith(("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")):
        raise ValueError("a Redis URL starts with redis://, rediss://, unix:// or redis+cluster://")
    return text


def _short_name(what: str) -> Callable[[str], str | None]:
    """A parser of a name of letters, digits and dashes, 64 at most (empty: None)."""

    def parse(text: str) -> str | None:
        if not text:
            return None
        if not text.isascii() or not text.replace("-", "").isalnum():
            raise ValueError(f"{what} has only letters, digits and dashes")
        if len(text) > 64:
            raise ValueError(f"{what} has at most 64 characters")
        return text

    return parse


_node_id = _short_name("a node id")


def _origins(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _hosts(text: str) -> tuple[str, ...]:
    return tuple(part.lower() for part in _origins(text))


def _path(text: str) -> Path | None:
    return Path(text) if text else None


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _networks(text: str) -> tuple[Network, ...]:
    """Comma-separated addresses or CIDR blocks (``10.0.0.0/8, 192.0.2.7``)."""
    try:
        return tuple(ipaddress.ip_network(part.strip(), strict=False) for part in text.split(",") if part.strip())
    except ValueError as error:
        raise ValueError(f"not an address or CIDR block: {error}") from None


@dataclass(frozen=True, slots=True)
class Config:
    host: str = _setting("127.0.0.1", "the one address to listen on (a name: its first address; empty: 0.0.0.0)")
    port: int = _setting(8765, "port to listen on (0: any free port)", int, minimum=0, maximum=_PORT_MAX)
    peer_port: int = _setting(
        0,
        "port other server processes of the service link to directly, on PEER_HOST (0: any free port)",
        int,
        minimum=0,
        maximum=_PORT_MAX,
    )
    peer_host: str = _setting(
        "", "address the peer port listens on: an internal network's (default: ADVERTISE_HOST, else HOST)"
    )
    advertise_host: str = _setting(
        "", "the host other server processes reach this one at (default: HOST, or this machine's address)"
    )
    redis_url: str | None = _setting(
        None,
        "Redis to use (redis://, rediss://, unix://, redis+cluster://); without it the server runs its own",
        _redis_url,
    )
    data_dir: Path = _setting(Path("data"), "where the embedded Redis keeps its data", Path)
    log_level: str = _setting("INFO", "log level", str.upper, choices=_LOG_LEVELS)
    log_format: str = _setting("text", "text, or json (one JSON object a line)", str.lower, choices=("text", "json"))
    compression: bool = _setting(False, "permessage-deflate (costs CPU and memory for small frames)", _flag)
    event_loop: str = _setting(
        "asyncio",
        "asyncio, or uvloop (the optional extra: pip install 'solitaire-race[uvloop]'; "
        "without the per-address opening line and connection cap, and PROXY headers)",
        str.lower,
        choices=("asyncio", "uvloop"),
    )
    grace: float = _setting(60.0, "seconds a dropped racer keeps the seat", float, minimum=1, maximum=_DAY)
    countdown: float = _setting(
        3.0, "seconds from all ready (or the creator's start) to the race", float, minimum=0, maximum=60
    )
    quick_match_wait: float = _setting(
        3.0, "seconds a quick-match race waits for a third and fourth player", float, minimum=0, maximum=60
    )
    finished_ttl: int = _setting(
        7 * 24 * 3600, "seconds finished rooms and their logs are kept", int, minimum=60, maximum=_YEAR
    )
    # At most the edge's HARD_FRAME_LIMIT (server/net/edge.py): larger frames close the connection unread.
    max_frame: int = _setting(
        16 * 1024, "largest frame answered (larger: frame-too-large)", int, minimum=256, maximum=256 * 1024
    )
    rate: float = _setting(50.0, "requests a second per connection, on average", float, minimum=1, maximum=_RATE_MAX)
    burst: float = _setting(100.0, "requests per connection in a burst", float, minimum=1, maximum=_RATE_MAX)
    offence_limit: int = _setting(
        200, "offences within the offence window before a 1008 close", int, minimum=1, maximum=_COUNT_MAX
    )
    offence_window: float = _setting(10.0, "seconds of the offence window", float, minimum=1, maximum=_HOUR)
    max_connections_per_player: int = _setting(
        5, "connections one player may have open", int, minimum=1, maximum=_COUNT_MAX
    )
    max_rooms_per_player: int = _setting(
        5, "unfinished rooms one player may race in", int, minimum=1, maximum=_COUNT_MAX
    )
    write_buffer_cap: int = _setting(
        1024 * 1024,
        "bytes a connection may leave unread before it is closed (4008)",
        int,
        minimum=4096,
        maximum=1 << 30,
    )
    rooms_per_hour: int = _setting(120, "rooms one player may create in an hour", int, minimum=1, maximum=_COUNT_MAX)
    max_connections: int = _setting(
        20_000, "connections the server accepts (capped by descriptors)", int, minimum=1, maximum=_COUNT_MAX
    )
    key_prefix: str = _setting("sr:", "prefix of every Redis key (several servers can share a Redis)")
    solver_workers: int = _setting(
        1, "solver processes; 0 turns daily challenges and winnable deals off", int, minimum=0, maximum=_PROCESSES_MAX
    )
    hint_workers: int = _setting(
        1,
        "processes that search winning lines for hints; 0: hints from the engine alone",
        int,
        minimum=0,
        maximum=_PROCESSES_MAX,
    )
    solver_budget: float = _setting(
        10.0, "seconds the solver may spend certifying one deal", float, minimum=0.1, maximum=_HOUR
    )
    pool_size: int = _setting(20, "certified winnable deals kept ready per game", int, minimum=1, maximum=100_000)
    drain: float = _setting(
        0.0, "seconds between turning not ready (SIGTERM) and shutting down", float, minimum=0, maximum=_HOUR
    )
    allowed_origins: tuple[str, ...] = _setting(
        (), "browser origins besides the page's own allowed to open websockets (comma-separated; * any)", _origins
    )
    allowed_hosts: tuple[str, ...] = _setting(
        (),
        "host names the web page and websockets answer to (the Host header, comma-separated; none: any); "
        "guards against DNS rebinding",
        _hosts,
    )
    plain_passwords: bool = _setting(
        False, "accept passwords over plain ws:// from other hosts (put TLS in front instead)", _flag
    )
    trusted_proxies: tuple[Network, ...] = _setting(
        (),
        "balancers (addresses or CIDR blocks, comma-separated) whose connections start with a PROXY v2 "
        "header naming the client's address and TLS; only these are believed",
        _networks,
    )
    tls_cert: Path | None = _setting(
        None, "PEM certificate chain: serve wss:// and https:// directly (without a TLS balancer)", _path
    )
    tls_key: Path | None = _setting(None, "PEM private key of TLS_CERT (default: in TLS_CERT's file)", _path)
    max_connections_per_address: int = _setting(
        256, "connections one client address may hold open or waiting to open", int, minimum=1, maximum=_COUNT_MAX
    )
    hello_timeout: float = _setting(
        10.0, "seconds a new connection has to send its hello", float, minimum=0.1, maximum=600
    )
    public_rooms_per_address: int = _setting(
        10,
        "unfinished public rooms created from one client address (the lobby's share)",
        int,
        minimum=1,
        maximum=_COUNT_MAX,
    )
    login_attempts: int = _setting(
        5,
        "failed logins for a name from one address (or one known device) before tries wait",
        int,
        minimum=1,
        maximum=_COUNT_MAX,
    )
    name_attempts: int = _setting(
        20,
        "failed logins for a name from devices it does not know before their tries wait",
        int,
        minimum=1,
        maximum=_COUNT_MAX,
    )
    address_attempts: int = _setting(
        30, "failed logins from one address before its tries must wait", int, minimum=1, maximum=_COUNT_MAX
    )
    login_failure_delay: float = _setting(
        1.0,
        "seconds a failed login (or password check) holds its connection before the refusal",
        float,
        minimum=0,
        maximum=60,
    )
    login_wait: float = _setting(
        30.0,
        "seconds the first wait past a login limit lasts; each further failure doubles it",
        float,
        minimum=0.01,
        maximum=_DAY,
    )
    attempt_window: int = _setting(
        900,
        "the longest wait, in seconds; failures are forgotten this long after the wait ends",
        int,
        minimum=1,
        maximum=7 * _DAY,
    )
    token_lifetime: int = _setting(
        30 * 24 * 3600,
        "seconds a resume token resumes its player unused (resuming renews it)",
        int,
        minimum=1,
        maximum=10 * _YEAR,
    )
    accounts_per_address: int = _setting(
        5, "new accounts one address may register in an hour", int, minimum=1, maximum=_COUNT_MAX
    )
    identities_per_address: int = _setting(
        300, "new guest players one address may start in an hour", int, minimum=1, maximum=_COUNT_MAX
    )
    node_ttl: float = _setting(
        5.0, "seconds a node's heartbeat and room leases live unrenewed (a dead node's rooms move after it)", float,
        minimum=0.5, maximum=600,
    )  # fmt: skip
    node_id: str | None = _setting(
        None,
        "a fixed node id for a single server on an outside Redis: restarted, it takes its rooms back at once "
        "(never give two running processes the same one)",
        _node_id,
    )
    route: str | None = _setting(
        None,
        "this process's name at the balancer (the server's name in haproxy.cfg): a client served here "
        "through another process is told its room's home, to reconnect with ?home=NAME (empty: none)",
        _short_name("a route"),
    )
    nodes: int = _setting(
        1,
        "run this many server processes on ports PORT, PORT+1, ... sharing one embedded Redis",
        int,
        minimum=1,
        maximum=100,
    )

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            problem = _spec(item).check(getattr(self, item.name))
            if problem is not None:
                raise SettingError(
                    f"--{_dashed(item.name)} ({item.name.upper()}) {problem}, not {getattr(self, item.name)!r}"
                )
        if self.trusted_proxies and self.event_loop == "uvloop":
            raise SettingError(
                "--trusted-proxies (TRUSTED_PROXIES) needs --event-loop asyncio: uvloop cannot read PROXY headers"
            )
        if self.route is not None and self.nodes > 1:
            raise SettingError("--route (ROUTE) names one process: with --nodes every process would have that name")
        if self.tls_key is not None and self.tls_cert is None:
            raise SettingError("--tls-key (TLS_KEY) needs --tls-cert (TLS_CERT)")
        if self.port + self.nodes - 1 > _PORT_MAX:
            raise SettingError(
                f"--nodes (NODES) {self.nodes} from --port (PORT) {self.port} needs ports past {_PORT_MAX}"
            )


def _spec(item: dataclasses.Field[Any]) -> _Spec:
    spec = item.metadata["spec"]
    assert isinstance(spec, _Spec)
    return spec


def _dashed(name: str) -> str:
    return name.replace("_", "-")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise SettingError(message)


def parse_args(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """A :class:`Config` from ``argv`` and ``environ`` (``os.environ`` by default); raises
    :class:`SettingError` for a value that cannot be used."""
    env = os.environ if environ is None else environ
    parser = _Parser(
        prog="solitaire-race-server",  # the installed command (also python -m server)
        description="The Solitaire Race server. Each flag has an environment variable; flags win.",
    )
    values: dict[str, Any] = {}
    for item in dataclasses.fields(Config):
        spec, variable = _spec(item), item.name.upper()
        flag = f"--{_dashed(item.name)}"
        default = item.default
        if variable in env:
            try:
                default = spec.parse(env[variable])
            except ValueError as error:
                raise SettingError(f"{variable}={env[variable]!r} is not a valid {flag}: {error}") from None
        shown = _default_text(default)
        text = f"{spec.help} ({variable})" + ("" if shown is None else f" (default: {shown})")
        text = text.replace("%", "%%")  # argparse formats help with %: a value may hold one
        if spec.parse is _flag:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=text)
        else:
            parser.add_argument(flag, type=_typed(spec.parse, flag), default=default, help=text)
    arguments = vars(parser.parse_args(argv))
    for item in dataclasses.fields(Config):
        values[item.name] = arguments[item.name]
    return Config(**values)


def _default_text(value: Any) -> str | None:
    """A default as ``--help`` shows it: ``on``/``off``, a list comma-separated; None when
    there is nothing to show (no value, an empty one: the help says what happens then)."""
    if value is None or value in ("", ()):
        return None
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ", ".join(str(part) for part in value)
    return str(value)


def _typed(parse: Callable[[str], Any], flag: str) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a valid value for {flag}") from None

    return convert
