"""The monitoring kit (server/deploy/monitoring/): Prometheus' scrape config and alert rules,
Grafana's provisioning and dashboard, checked against what the servers export.

- Every metric an alert or a panel queries is one ``server/ops/metrics.py`` exports, under the
  name Prometheus stores it by (``_total``, ``_bucket``, ``_count``...); every label a query
  matches is one of that metric's, and every value it matches against one the server uses.
- Every alert has a ``for``, a severity and a summary; every panel queries the provisioned
  datasource; the scrape job finds the replicas on the port they serve.
- Where ``promtool`` is installed (Debian: ``apt-get install prometheus``): the config and the
  rules pass ``promtool check``, and each alert fires, or keeps quiet, on made-up series as
  its thresholds say (``promtool test rules``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from compose_spec import PyCompose
from prometheus_client.metrics import MetricWrapperBase

from protocol.errors import ErrorCode
from protocol.messages import ClientMessage
from server.ops import metrics
from server.ops.hot_metrics import HotCounter, HotHistogram

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "server" / "deploy" / "monitoring"
PROMETHEUS = MONITORING / "prometheus.yml"
ALERTS = MONITORING / "alerts.yml"
DATASOURCES = MONITORING / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
DASHBOARD_PROVIDERS = MONITORING / "grafana" / "provisioning" / "dashboards" / "solitaire.yml"
DASHBOARD = MONITORING / "grafana" / "dashboards" / "solitaire-race.json"

JOB = "solitaire"


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


# What the servers export, and what the files ask for.


def _metric_labels() -> dict[str, tuple[str, ...]]:
    """The label names of each metric declared in server/ops/metrics.py (their families have
    no sample to tell them until a first child is made)."""
    labels = {
        value._name: tuple(value._labelnames)
        for value in vars(metrics).values()
        if isinstance(value, MetricWrapperBase)
    }
    for value in vars(metrics).values():
        if isinstance(value, (HotCounter, HotHistogram)):
            labels[value.name] = value.label_names
    return labels


#: The series a metric family of each type exposes (prometheus_client's text format).
_SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "summary": ("", "_count", "_sum", "_created"),
}
_TARGET_LABELS = frozenset({"job", "instance"})
#: The series Prometheus makes for every target itself.
_PROMETHEUS_SERIES = ("up", "scrape_duration_seconds", "scrape_samples_scraped", "scrape_series_added")


def _derived(name: str, kind: str) -> set[str]:
    return {name + suffix for suffix in _SUFFIXES[kind]}


def exported() -> dict[str, frozenset[str]]:
    """Every series name the servers' ``/metrics`` has or will have once counted, with the
    label names it can be matched on, and the series Prometheus adds for each target."""
    labels = _metric_labels()
    series: dict[str, frozenset[str]] = dict.fromkeys(_PROMETHEUS_SERIES, _TARGET_LABELS)
    for family in metrics.REGISTRY.collect():
        names = {sample.name for sample in family.samples} or _derived(family.name, family.type)
        known = set(labels.get(family.name, ())) | {key for sample in family.samples for key in sample.labels}
        for name in names:
            series[name] = frozenset(known | _TARGET_LABELS | ({"le"} if name.endswith("_bucket") else set()))
    return series


def known_values() -> dict[tuple[str, str], frozenset[str]]:
    """The values the server gives a label of a series, for the labels the files match on a
    value (any other is refused until it is added here)."""
    rooms = {
        sample.labels["state"]
        for family in metrics.REGISTRY.collect()
        if family.name == "solitaire_rooms"
        for sample in family.samples
    }
    # server/net/request_metrics.py: the wire type of the request (``none``: a frame refused
    # before any request was read), and ``ok`` or the error code answered.
    requests = {"none", *(str(kind.__struct_config__.tag) for kind in typing.get_args(ClientMessage))}
    return {
        ("solitaire_requests_total", "outcome"): frozenset({"ok", *(code.value for code in ErrorCode)}),
        ("solitaire_requests_total", "type"): frozenset(requests),
        # server/net/forwarding.py and server/cluster/leases.py.
        ("solitaire_forwarded_requests_sent_total", "outcome"): frozenset({"ok", "moved", "timeout"}),
        ("solitaire_rooms_taken_over_total", "how"): frozenset({"dead", "expired"}),
        ("solitaire_rooms", "state"): frozenset(rooms),
    }


_SELECTOR = re.compile(r"([A-Za-z_:][\w:]*)?\s*\{([^}]*)\}")
_MATCHER = re.compile(r'\s*([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_RANGE = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_VARIABLE = re.compile(r"\$(?:\{\w+\}|\w+)")
_NAME = re.compile(r"(?<![\w:.$])([A-Za-z_:][\w:]*)(?![\w:])(?!\s*\()")
_KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "inf", "nan"})


def problems(expr: str, job: str = JOB) -> list[str]:
    """What is wrong with the PromQL ``expr`` against the servers' metrics: a metric they do
    not export, a label it has not, a value the server never gives that label."""
    series = exported()
    values = known_values()
    found: list[str] = []
    for selector in _SELECTOR.finditer(expr):
        name, body = selector[1], selector[2]
        if name is None:
            found.append(f"a selector without a metric name: {selector[0]}")
            continue
        matchers = list(_MATCHER.finditer(body))
        if "".join(matcher[0] for matcher in matchers).strip() != body.strip():
            found.append(f"cannot read the matchers of {selector[0]}")
        for matcher in matchers:
            label, operator, value = matcher[1], matcher[2], matcher[3]
            if name in series and label not in series[name]:
                found.append(f"{name} has no label {label}")
            if "$" in value or operator.startswith("!"):
                continue
            allowed = frozenset({job}) if label == "job" else values.get((name, label))
            if allowed is None:
                found.append(f"no known values for {name}{{{label}}}: add them to known_values()")
                continue
            wanted = value.split("|") if operator == "=~" else [value]
            found += [f"{name}{{{label}}} is never {one!r}" for one in wanted if one not in allowed]
    bare = _VARIABLE.sub(" ", _GROUPING.sub(" ", _RANGE.sub(" ", _SELECTOR.sub(r"\1 ", expr))))
    for name in _NAME.findall(bare):
        if name not in _KEYWORDS and name not in series:
            found.append(f"{name} is not exported by the servers")
    return found


def alert_rules() -> list[dict[str, Any]]:
    return [rule for group in load(ALERTS)["groups"] for rule in group["rules"]]


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, those in rows included."""
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels", [])


def dashboard_queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in panels(dashboard) for target in panel.get("targets", [])]


# The tests.


def test_the_exported_names_are_prometheus_client_s() -> None:
    """The suffixes :func:`exported` gives a family with no sample yet are the ones
    prometheus_client writes for a family of that type that has samples."""
    checked = 0
    for family in metrics.REGISTRY.collect():
        if family.name.startswith("solitaire_") and family.samples:
            assert {sample.name for sample in family.samples} == _derived(family.name, family.type)
            checked += 1
    assert checked >= 10
    series = exported()
    assert {"solitaire_requests_total", "solitaire_rooms_taken_over_total", "solitaire_move_ack_seconds_bucket"} <= set(
        series
    )
    assert series["solitaire_requests_total"] == {"type", "outcome", "job", "instance"}
    assert "le" in series["solitaire_redis_command_seconds_bucket"]


def test_the_checks_have_teeth() -> None:
    assert (
        problems('histogram_quantile(0.99, sum by (le) (rate(solitaire_move_ack_seconds_bucket{job="x"}[5m])))', "x")
        == []
    )
    assert (
        problems('(up{job="x"} unless up{job="x"} offset 5m) or increase(solitaire_rooms_fenced_total[$__range])', "x")
        == []
    )
    for wrong in (
        "rate(solitaire_move_ack_second_bucket[5m])",  # a misspelt metric
        "rate(solitaire_requests[5m])",  # a counter without its _total
        "solitaire_move_ack_seconds",  # a histogram without a suffix
        'solitaire_closes_total{reasn="slow"}',  # a misspelt label
        'solitaire_requests_total{outcome="storage-unavailble"}',  # a value the server never gives
        'solitaire_requests_total{type=~"move|moves"}',
        'up{job="solitair"}',
        'solitaire_closes_total{reason="slow"}',  # a value nobody listed
    ):
        assert problems(wrong), wrong


def test_the_scrape_job_finds_the_replicas_on_their_port() -> None:
    config = load(PROMETHEUS)
    (job,) = config["scrape_configs"]
    assert job["job_name"] == JOB
    assert job.get("metrics_path", "/metrics") == "/metrics"
    (discovery,) = job["dns_sd_configs"]
    assert discovery["names"] == ["server"]
    assert discovery["type"] == "A"
    # The servers' port in docker-compose.yml (or, once they serve /metrics on a port of their
    # own, that one), written once in the file.
    text = (ROOT / "docker-compose.yml").read_text()
    substituted = 1
    while substituted:  # Compose's ${NAME:-default} with nothing set, innermost first
        text, substituted = re.subn(r"\$\{\w+(?::-([^${}]*))?\}", lambda match: match[1] or "", text)
    compose: dict[str, Any] = PyCompose.from_yaml(text).to_dict()
    server = compose["services"]["server"]
    assert discovery["port"] == int(server["environment"]["PORT"])
    assert PROMETHEUS.read_text().count(str(discovery["port"])) == 1
    assert [(MONITORING / path).resolve() for path in config["rule_files"]] == [ALERTS.resolve()]


def test_every_alert_has_a_for_a_severity_and_a_summary() -> None:
    rules = alert_rules()
    names = [rule["alert"] for rule in rules]
    assert len(names) == len(set(names))
    assert {
        "SolitaireNodeDown",
        "SolitaireNodeNotReady",
        "SolitaireStorageErrors",
        "SolitaireMoveAckSlow",
        "SolitaireRoomsFenced",
    } <= set(names)
    for rule in rules:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
        assert re.fullmatch(r"(?:[0-9]+[smhd])+", rule["for"]), rule["alert"]
        assert rule["labels"]["severity"] in ("warning", "critical"), rule["alert"]
        assert rule["annotations"]["summary"].strip(), rule["alert"]
        assert rule["annotations"]["description"].strip(), rule["alert"]


def test_every_alert_queries_what_the_servers_export() -> None:
    for rule in alert_rules():
        assert problems(rule["expr"]) == [], rule["alert"]


def test_every_panel_queries_what_the_servers_export() -> None:
    queries = dashboard_queries()
    assert queries
    for expr in queries:
        assert problems(expr) == [], expr
    # The panels the issue asks for: nodes and their readiness, connections, rooms, moves and
    # their latency, forwarding, fencing and takeovers, storage errors, rate-limited frames and closes.
    used = {name for expr in queries for name in _NAME.findall(_SELECTOR.sub(r"\1 ", expr))}
    assert {
        "up",
        "solitaire_nodes_alive",
        "solitaire_ready",
        "solitaire_connections",
        "solitaire_rooms",
        "solitaire_requests_total",
        "solitaire_move_ack_seconds_bucket",
        "solitaire_forwarded_requests_sent_total",
        "solitaire_rooms_fenced_total",
        "solitaire_room_leases_lost_total",
        "solitaire_rooms_taken_over_total",
        "solitaire_rate_limited_total",
        "solitaire_closes_total",
    } <= used


def test_the_dashboard_uses_the_provisioned_datasource() -> None:
    (datasource,) = load(DATASOURCES)["datasources"]
    assert datasource["type"] == "prometheus"
    assert datasource["url"] == "http://prometheus:9090"
    (provider,) = load(DASHBOARD_PROVIDERS)["providers"]
    assert provider["type"] == "file"
    assert provider["options"]["path"].startswith("/")
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"]
    assert dashboard["title"]
    assert isinstance(dashboard["schemaVersion"], int)
    expected = {"type": "prometheus", "uid": datasource["uid"]}
    ids = [panel["id"] for panel in panels(dashboard)]
    assert len(ids) == len(set(ids))
    taken: set[tuple[int, int]] = set()
    for panel in panels(dashboard):
        assert panel["datasource"] == expected, panel["title"]
        refs = [target["refId"] for target in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == expected, panel["title"]
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        cells = {(grid["x"] + x, grid["y"] + y) for x in range(grid["w"]) for y in range(grid["h"])}
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells


# promtool.

needs_promtool = pytest.mark.skipif(
    shutil.which("promtool") is None, reason="promtool is not installed (Debian: apt-get install prometheus)"
)


def promtool(*args: str | Path) -> None:
    run = subprocess.run(["promtool", *map(str, args)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


@needs_promtool
def test_promtool_checks_the_config_and_the_rules() -> None:
    promtool("check", "config", PROMETHEUS)
    promtool("check", "rules", ALERTS)


def _series(name: str, values: str, **labels: str) -> dict[str, str]:
    matchers = ", ".join(f'{label}="{value}"' for label, value in {"job": JOB, **labels}.items())
    return {"series": f"{name}{{{matchers}}}", "values": values}


def _histogram(name: str, instance: str, per_step: dict[str, int]) -> list[dict[str, str]]:
    """A histogram's bucket and count series, with ``per_step[le]`` more in each bucket at each step."""
    series = [_series(f"{name}_bucket", f"0+{count}x60", instance=instance, le=le) for le, count in per_step.items()]
    return [*series, _series(f"{name}_count", f"0+{per_step['+Inf']}x60", instance=instance)]


def _alerts(time: str, name: str, *firing: dict[str, str]) -> dict[str, Any]:
    """The alert ``name`` at ``time`` fires with exactly the labels of ``firing`` (none: it is quiet)."""
    return {"eval_time": time, "alertname": name, "exp_alerts": [{"exp_labels": labels} for labels in firing]}


def _firing(severity: str, **labels: str) -> dict[str, str]:
    return {"severity": severity, "job": JOB, **labels}


_ACK = "solitaire_move_ack_seconds"
_STORAGE = "solitaire_requests_total"
#: Made-up series (one sample every 15 s), and what each alert does with them.
ALERT_CASES: list[dict[str, Any]] = [
    {  # a replica stops answering at 30 s: down after a minute of it, the other one is fine
        "input_series": [_series("up", "1 1 0x10", instance="a:1"), _series("up", "1x12", instance="b:1")],
        "alert_rule_test": [
            _alerts("1m", "SolitaireNodeDown"),
            _alerts("2m", "SolitaireNodeDown", _firing("warning", instance="a:1")),
            _alerts("2m", "SolitaireNoNodes"),
        ],
    },
    {  # a turns not ready at 30 s for good; b for 30 s only (a drain, a restart)
        "input_series": [
            _series("solitaire_ready", "1 1 0x10", instance="a:1"),
            _series("solitaire_ready", "1x3 0x2 1x8", instance="b:1"),
        ],
        "alert_rule_test": [
            _alerts("1m", "SolitaireNodeNotReady"),
            _alerts("2m", "SolitaireNodeNotReady", _firing("warning", instance="a:1")),
        ],
    },
    {
        "input_series": [_series("up", "0x10", instance="a:1")],
        # absent() of an expression keeps no label of it
        "alert_rule_test": [_alerts("2m", "SolitaireNoNodes", {"severity": "critical"})],
    },
    {  # errors from 2m on, one every 15 s on a, a single one on b
        "input_series": [
            _series(_STORAGE, "_x8 1+1x40", instance="a:1", type="move", outcome="storage-unavailable"),
            _series(_STORAGE, "_x8 1x40", instance="b:1", type="move", outcome="storage-unavailable"),
            _series(_STORAGE, "0+100x48", instance="b:1", type="move", outcome="ok"),
        ],
        "alert_rule_test": [
            _alerts("3m", "SolitaireStorageErrors"),
            _alerts("6m", "SolitaireStorageErrors", _firing("critical", instance="a:1")),
            _alerts("10m", "SolitaireStorageErrors", _firing("critical", instance="a:1")),
        ],
    },
    {  # 4 moves a second: 7% over 10 ms on a, all over 100 ms on c, all under 5 ms on d;
        # on b all over 10 ms but one move every 15 s, too few to tell
        "input_series": [
            *_histogram(_ACK, "a:1", {"0.005": 50, "0.01": 56, "0.025": 60, "0.1": 60, "0.25": 60, "+Inf": 60}),
            *_histogram(_ACK, "b:1", {"0.005": 0, "0.01": 0, "0.025": 1, "0.1": 1, "0.25": 1, "+Inf": 1}),
            *_histogram(_ACK, "c:1", {"0.005": 0, "0.01": 0, "0.025": 0, "0.1": 0, "0.25": 60, "+Inf": 60}),
            *_histogram(_ACK, "d:1", {"0.005": 60, "0.01": 60, "0.025": 60, "0.1": 60, "0.25": 60, "+Inf": 60}),
        ],
        "alert_rule_test": [
            _alerts("8m", "SolitaireMoveAckSlow"),
            _alerts("7m", "SolitaireMoveAckVerySlow", _firing("critical", instance="c:1")),
            _alerts(
                "12m", "SolitaireMoveAckSlow", _firing("warning", instance="a:1"), _firing("warning", instance="c:1")
            ),
            _alerts("12m", "SolitaireMoveAckVerySlow", _firing("critical", instance="c:1")),
        ],
    },
    {  # a room fenced on a and two leases lost on e at 75 s; nothing on b
        "input_series": [
            _series("solitaire_rooms_fenced_total", "0x4 1x60", instance="a:1"),
            _series("solitaire_room_leases_lost_total", "0x64", instance="a:1"),
            _series("solitaire_rooms_fenced_total", "0x64", instance="b:1"),
            _series("solitaire_room_leases_lost_total", "0x64", instance="b:1"),
            _series("solitaire_rooms_fenced_total", "0x64", instance="e:1"),
            _series("solitaire_room_leases_lost_total", "0x4 2x60", instance="e:1"),
        ],
        "alert_rule_test": [
            _alerts("1m", "SolitaireRoomsFenced"),
            _alerts(
                "2m", "SolitaireRoomsFenced", _firing("warning", instance="a:1"), _firing("warning", instance="e:1")
            ),
            _alerts("12m", "SolitaireRoomsFenced"),
        ],
    },
    {  # three rooms of a dead node taken over at 5m (the series' first sample); expired leases do not count
        "input_series": [
            _series("solitaire_rooms_taken_over_total", "_x20 3x40", instance="a:1", how="dead"),
            _series("solitaire_rooms_taken_over_total", "_x4 5x60", instance="b:1", how="expired"),
        ],
        "alert_rule_test": [
            _alerts("3m", "SolitaireNodeDiedHoldingRooms"),
            _alerts("5m", "SolitaireNodeDiedHoldingRooms", _firing("warning")),
            _alerts("16m", "SolitaireNodeDiedHoldingRooms"),
        ],
    },
]


@needs_promtool
def test_each_alert_fires_as_its_thresholds_say(tmp_path: Path) -> None:
    rules = load(ALERTS)
    for group in rules["groups"]:
        for rule in group["rules"]:
            del rule["annotations"]  # promtool compares them too: their wording is not tested here
    # JSON is YAML: promtool reads both files.
    (tmp_path / "alerts.json").write_text(json.dumps(rules))
    cases = [{"interval": "15s", **case} for case in ALERT_CASES]
    tests = {"rule_files": ["alerts.json"], "evaluation_interval": "15s", "tests": cases}
    (tmp_path / "tests.json").write_text(json.dumps(tests))
    tested = {test["alertname"] for case in ALERT_CASES for test in case["alert_rule_test"]}
    assert tested == {rule["alert"] for rule in alert_rules()}
    promtool("test", "rules", tmp_path / "tests.json")
