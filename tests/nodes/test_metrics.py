"""Each node's /metrics shows the operator the multi-node parts: rooms owned, requests
forwarded both ways and their round trip, live nodes, rooms taken over and fenced."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.nodes.conftest import NODE_TTL, NodeProcess, Service, http_get
from tests.nodes.test_service import open_race, play_one, race_started, racing

pytestmark = pytest.mark.asyncio


async def metrics(node: NodeProcess) -> dict[str, float]:
    """The node's samples by name, labels folded in (``name{label="value"}``), parsed."""
    status, body = await http_get(node.port, "/metrics", node.host)
    assert status == 200
    samples = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            labels = ",".join(f'{key}="{value}"' for key, value in sorted(sample.labels.items()))
            samples[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return samples


async def until(node: NodeProcess, name: str, wanted: float, timeout: float = NODE_TTL * 4 + 10) -> dict[str, float]:
    """Wait until the node's sample ``name`` is ``wanted`` (gauges settle once per TTL)."""
    deadline = time.monotonic() + timeout
    while True:
        samples = await metrics(node)
        if samples.get(name) == wanted or time.monotonic() > deadline:
            assert samples.get(name) == wanted, (name, samples.get(name))
            return samples
        await asyncio.sleep(0.2)


async def test_forwarding_ownership_and_failover_are_counted(service: Service) -> None:
    a, b, c = await service.start(3)
    for node in (a, b, c):
        await until(node, "solitaire_nodes_alive", 3)
    ann = await service.connect(a, "Ann")
    bob = await service.connect(b, "Bob")
    code = await open_race(ann, bob)  # Bob's join and every request of his go to node A
    await race_started(code, ann, bob)
    await play_one(bob, code)

    owner, client_node, idle = await metrics(a), await metrics(b), await metrics(c)
    assert owner["solitaire_room_leases"] == 1
    assert client_node["solitaire_room_leases"] == idle["solitaire_room_leases"] == 0
    # join, ready, legal moves, move: each sent by B, served by A, timed on B.
    assert client_node['solitaire_forwarded_requests_sent_total{outcome="ok"}'] >= 4
    assert client_node["solitaire_forwarded_request_seconds_count"] >= 4
    assert client_node["solitaire_forwarded_request_seconds_sum"] > 0
    assert owner["solitaire_forwarded_requests_received_total"] >= 4
    assert owner.get('solitaire_forwarded_requests_sent_total{outcome="ok"}', 0) == 0
    assert client_node["solitaire_forwarded_requests_received_total"] == 0
    # Both ways on the direct link between the two nodes, none through Redis.
    for samples in (owner, client_node):
        assert samples['solitaire_node_batches_sent_total{road="direct"}'] >= 4
        assert samples.get('solitaire_node_batches_sent_total{road="redis"}', 0) == 0
    for samples in (owner, client_node, idle):
        assert not any(name.startswith("solitaire_rooms_taken_over_total") for name in samples)
        assert samples["solitaire_rooms_fenced_total"] == 0
        assert samples["solitaire_room_leases_lost_total"] == 0

    # The owner pauses past its lease: node B (Bob's next request) or C (its sweep for rooms
    # nobody runs) takes the room over; A, woken, finds itself fenced.
    a.signal(signal.SIGSTOP)
    try:
        await until(b, "solitaire_nodes_alive", 2)
        await bob.close()
        bob = await service.connect(b, "Bob", resume=bob.resume)
        await bob.wait_room(code, lambda m: racing(m, 1), timeout=NODE_TTL * 4 + 10)
        await play_one(bob, code)
        survivors = [await metrics(b), await metrics(c)]
        # Its lease had expired (A stopped renewing it) or A still held it and stopped beating.
        # A loaded machine can make the first taker miss a renewal and the other survivor take
        # the room again; it is counted each time, and one survivor runs it in the end.
        how = ('solitaire_rooms_taken_over_total{how="expired"}', 'solitaire_rooms_taken_over_total{how="dead"}')
        assert sum(samples.get(name, 0) for samples in survivors for name in how) >= 1
        assert sum(samples["solitaire_room_leases"] for samples in survivors) == 1
    finally:
        a.signal(signal.SIGCONT)
    await until(a, "solitaire_rooms_fenced_total", 1)
    woken = await until(a, "solitaire_room_leases", 0)
    assert woken["solitaire_room_leases_lost_total"] >= 1
    assert not any(name.startswith("solitaire_rooms_taken_over_total") for name in woken)
    await until(b, "solitaire_nodes_alive", 3)


async def test_a_node_that_cannot_be_reached_directly_is_sent_to_through_redis(service: Service) -> None:
    [reachable] = await service.start(1)
    # 192.0.2.1 is a documentation address: nothing answers there, as behind a firewall.
    [unreachable] = await service.start(1, "--advertise-host", "192.0.2.1")
    ann = await service.connect(unreachable, "Ann")
    bob = await service.connect(reachable, "Bob")
    code = await open_race(ann, bob)  # the room runs on the unreachable node; Bob's requests go there
    await race_started(code, ann, bob)
    await play_one(bob, code)
    await play_one(ann, code)

    to_unreachable, to_reachable = await metrics(reachable), await metrics(unreachable)
    assert to_unreachable['solitaire_node_batches_sent_total{road="redis"}'] >= 4
    assert to_unreachable.get('solitaire_node_batches_sent_total{road="direct"}', 0) == 0
    assert to_reachable['solitaire_node_batches_sent_total{road="direct"}'] >= 4
    assert to_reachable.get('solitaire_node_batches_sent_total{road="redis"}', 0) == 0
