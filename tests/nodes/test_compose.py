"""The deployment files (docker-compose.yml, Dockerfile), checked as far as this machine can:
it has Docker's client but no engine, so nothing here starts a container.

- The compose file is a valid Compose Specification file: parsed by ``compose-spec`` (the
  Rust ``compose_spec`` crate's validating parser) after Compose's own ``${NAME:-default}``
  substitution, with no variable set.
- Every setting it gives the servers is one the server takes, with a valid value, and the files
  and volumes it names exist.
- The image's build stage works: the wheel is built (``pip wheel``, as the Dockerfile runs it)
  from exactly the files its ``COPY`` lines send, less what ``.dockerignore`` leaves out, and it
  carries the Scorpion search's compiled C core and the web client's files.
- The balancer's config (server/deploy/haproxy.cfg) passes ``haproxy -c`` on compose's branch
  (replicas found by Docker's DNS, with the environment compose gives it and a certificate
  made by server/deploy/self-signed.sh), skipped without ``haproxy``; it finds its
  certificates where compose mounts them, and the replicas' port is the same in it, in
  compose and in Prometheus' scrape config.

What runs in the containers is tested as processes elsewhere: three nodes behind the shipped
HAProxy config in ``test_deployment.py``, the servers themselves in ``test_service.py``.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from compose_spec import PyCompose

from server.config import parse_args

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DEPLOY = ROOT / "server" / "deploy"
HAPROXY = DEPLOY / "haproxy.cfg"


def substituted(text: str, environ: dict[str, str] | None = None) -> str:
    """``text`` with Compose's ``${NAME:-default}`` and ``${NAME}`` replaced from ``environ``,
    innermost first (a default may hold another)."""
    environ = environ or {}

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(3)
        return environ.get(name) or (default if default is not None else "")

    while True:
        replaced = re.sub(r"\$\{(\w+)(:-([^${}]*))?\}", value, text)
        if replaced == text:
            return text
        text = replaced


def compose(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """The compose file as Compose reads it (ValueError: it is not a valid one)."""
    parsed: dict[str, Any] = PyCompose.from_yaml(substituted(COMPOSE.read_text(), environ)).to_dict()
    return parsed


def test_the_compose_file_is_valid_compose() -> None:
    services = compose()["services"]
    assert {"redis", "server", "balancer", "certs"} <= set(services)
    assert services["server"]["deploy"]["replicas"] == 3
    assert services["server"]["depends_on"]["redis"]["condition"] == "service_healthy"
    # Behind the balancer: the servers publish no port of their own.
    assert "ports" not in services["server"]
    assert services["balancer"]["ports"] == ["8765:8765", "8443:8443"]
    # The balancer starts once the certificate is there, at the address the servers trust.
    assert services["balancer"]["depends_on"]["certs"]["condition"] == "service_completed_successfully"
    address = services["balancer"]["networks"]["internal"]["ipv4_address"]
    assert services["server"]["environment"]["TRUSTED_PROXIES"] == address


def test_the_parser_refuses_what_compose_would() -> None:
    """The check has teeth: a misspelt key, a wrong type or an unknown condition fails."""
    text = substituted(COMPOSE.read_text())
    for broken in (
        text.replace("stop_grace_period:", "stop_grace_perod:"),
        text.replace("replicas: 3", "replicas: three"),
        text.replace("condition: service_healthy", "condition: healthy"),
    ):
        with pytest.raises(ValueError, match="services"):
            PyCompose.from_yaml(broken)


def test_its_settings_are_the_servers_and_valid() -> None:
    """Each variable the servers get is a setting (a typo would be ignored by the server and
    silently run the default), and together they parse: the replicas would start."""
    environment = {name: str(value) for name, value in compose()["services"]["server"]["environment"].items()}
    config = parse_args([], environment)
    for name in environment:
        assert hasattr(config, name.lower()), f"{name} is not a server setting"
    assert config.host == "0.0.0.0"
    assert config.peer_port == 8766
    assert config.redis_url is not None
    # Valkey asks for the password compose gives it.
    password = compose()["services"]["redis"]["environment"]["REDIS_PASSWORD"]
    assert config.redis_url.startswith(f"redis://:{password}@redis:6379")
    assert password in compose()["services"]["redis"]["command"]
    # A cluster instead, as the comment beside REDIS_URL says.
    cluster = compose({"REDIS_URL": "redis+cluster://redis-1:6379"})["services"]["server"]["environment"]
    assert parse_args([], {"REDIS_URL": cluster["REDIS_URL"]}).redis_url == "redis+cluster://redis-1:6379"


def test_the_files_and_volumes_it_names_exist() -> None:
    parsed = compose()
    services = parsed["services"]
    declared = set(parsed.get("volumes") or {})
    for service in services.values():
        for volume in service.get("volumes", []):
            source = str(volume).split(":")[0]
            if source.startswith("."):
                assert (ROOT / source).is_file(), source
            else:
                assert source in declared, f"volume {source} is not declared"
    assert services["server"]["build"] == "." or services["server"]["build"]["context"] == "."
    assert DOCKERFILE.is_file()


def mounts(service: dict[str, Any]) -> dict[str, str]:
    """Where each of a service's volumes is mounted in its container: target -> source."""
    pairs = [str(volume).split(":")[:2] for volume in service.get("volumes", [])]
    return {target: source for source, target in pairs}


def haproxy_default(variable: str) -> str:
    """The default haproxy.cfg gives ``variable`` (``"${NAME-default}"``), used when compose sets none."""
    defaults: set[str] = set(re.findall(rf"\$\{{{variable}-([^}}]*)\}}", HAPROXY.read_text()))
    (default,) = defaults  # one default, wherever the variable is used
    return default


def test_the_balancer_config_checks_on_composes_branch(tmp_path: Path) -> None:
    """``haproxy -c`` as the balancer container would run it: compose sets no ``SR_NODE1``, so
    the replicas come from the ``server-template`` found through ``resolvers docker``; the
    certificate folder holds what the certs service makes. (Here HAProxy is Debian's, not the
    image's; Docker's DNS is absent, so the check only warns that ``server`` does not resolve.)"""
    executable = shutil.which("haproxy")
    if executable is None or shutil.which("openssl") is None:
        pytest.skip("no haproxy or openssl on PATH (apt-get install haproxy openssl)")
    balancer = compose()["services"]["balancer"]
    given = {str(name): str(value) for name, value in (balancer.get("environment") or {}).items()}
    assert not [name for name in given if name.startswith(("SR_NODE", "SR_SOURCE"))], given
    certs = tmp_path / "certs"
    subprocess.run(["sh", str(DEPLOY / "self-signed.sh"), str(certs)], check=True, capture_output=True, timeout=60)
    environ = {"PATH": os.environ.get("PATH", ""), **given, "SR_CERTS": f"{certs}/"}

    def check(config: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([executable, "-c", "-f", str(config)], capture_output=True, text=True, env=environ)

    checked = check(HAPROXY)
    output = checked.stdout + checked.stderr
    assert checked.returncode == 0, output
    # The template's eight replicas were made (--scale up to 8), and nothing else was warned of.
    assert "'server replicas/server8'" in output
    warnings = [line for line in output.splitlines() if "[WARNING]" in line]
    assert all("could not resolve address 'server'" in line for line in warnings), output
    # The check has teeth on that branch: a resolvers section it does not have fails it.
    broken = tmp_path / "broken.cfg"
    broken.write_text(HAPROXY.read_text().replace("resolvers docker init-addr", "resolvers dokcer init-addr"))
    assert check(broken).returncode != 0


def test_the_balancer_finds_its_config_and_certificates_where_compose_mounts_them() -> None:
    services = compose()["services"]
    balancer, certs = mounts(services["balancer"]), mounts(services["certs"])
    assert balancer["/usr/local/etc/haproxy/haproxy.cfg"] == "./server/deploy/haproxy.cfg"  # the image's default
    # SR_CERTS is unset in compose: its default is the certificate volume's mount...
    assert balancer[haproxy_default("SR_CERTS").rstrip("/")] == "certs"
    # ... which the certs service fills, at the folder it gives the script.
    _, script, folder, *_ = services["certs"]["entrypoint"]
    assert certs[script] == "./server/deploy/self-signed.sh"
    assert certs[folder] == "certs"


def test_the_replicas_port_is_the_same_for_the_balancer_compose_and_prometheus() -> None:
    services = compose()["services"]
    server = services["server"]
    port = int(server["environment"]["PORT"])
    template = re.search(r"^\s*server-template\s+\S+\s+\d+\s+([\w.-]+):(\d+)\s", HAPROXY.read_text(), re.M)
    assert template is not None
    assert (template[1], int(template[2])) == ("server", port)  # compose's service name, its port
    assert "server" in services
    assert server["expose"] in ([port], [str(port)])
    assert f":{port}/healthz" in " ".join(server["healthcheck"]["test"])
    prometheus = yaml.safe_load((DEPLOY / "monitoring" / "prometheus.yml").read_text())
    (job,) = prometheus["scrape_configs"]
    (discovery,) = job["dns_sd_configs"]
    assert (discovery["names"], discovery["port"]) == (["server"], port)
    # The balancer listens, by default, on the container ports compose publishes.
    published = [str(mapping).rsplit(":", 1)[1] for mapping in services["balancer"]["ports"]]
    assert published == [haproxy_default("SR_PLAIN_PORT"), haproxy_default("SR_TLS_PORT")]


def _build_stage_copies() -> list[str]:
    """The paths the Dockerfile's build stage copies from the context."""
    sources: list[str] = []
    for line in DOCKERFILE.read_text().split("\nFROM ")[1].splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(word.startswith("--from") for word in words):
            sources += words[1:-1]
    return sources


def _ignored(relative: str, patterns: list[str]) -> bool:
    """Whether ``.dockerignore``'s ``patterns`` leave ``relative`` out of the build context
    (the forms it uses: a name or glob matching the path or any of its parts)."""
    parts = Path(relative).parts
    return any(
        fnmatch.fnmatch(relative, glob) or any(fnmatch.fnmatch(part, glob) for part in parts)
        for glob in (pattern.removeprefix("**/") for pattern in patterns)
    )


@pytest.mark.slow
def test_the_image_build_stage_makes_a_wheel_with_the_compiled_core(tmp_path: Path) -> None:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler (the image's build stage has one; apt-get install gcc)")
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    context = tmp_path / "context"
    sources = _build_stage_copies()
    assert {"pyproject.toml", "setup.py", "server", "protocol", "client"} <= set(sources)
    for source in sources:
        path = ROOT / source
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for file in files:
            relative = str(file.relative_to(ROOT))
            if not _ignored(relative, patterns):
                (context / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(file, context / relative)
    wheels = tmp_path / "wheels"
    environ = {key: value for key, value in os.environ.items() if not key.startswith("SOLITAIRE_")}
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(wheels), str(context)],
        capture_output=True, text=True, env=environ, timeout=600,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,) = wheels.glob("solitaire_race-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(re.fullmatch(r"server/solver/_scorpion_core\..*\.so", name) for name in names)
    # mypyc's build of the Python search is opt-in (SOLITAIRE_MYPYC=1, setup.py): the server
    # searches in the C core.
    assert not any(re.fullmatch(r"server/solver/scorpion_search\..*\.so", name) for name in names)
    assert "server/solver/compiled_sources.txt" in names
    assert "client/web/index.html" in names
    # Installed from the wheel alone (as the image's second stage does), the search runs in the C core.
    unpacked = tmp_path / "installed"
    zipfile.ZipFile(wheel).extractall(unpacked)
    probe = "import server, server.solver.compiled as c; print(server.__file__, c.native_core() is not None)"
    check = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True, text=True, cwd=tmp_path, env={**environ, "PYTHONPATH": str(unpacked)}, timeout=60,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr
    where, compiled = check.stdout.split()
    assert where.startswith(str(unpacked))
    assert compiled == "True"
