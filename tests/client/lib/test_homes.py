"""The address of a room's home: the service's own, with ``?home=`` for the balancer."""

from __future__ import annotations

from client.lib.homes import home_address


def test_the_home_is_a_query_parameter_of_the_same_address() -> None:
    assert home_address("wss://race.example:8443", "node2") == "wss://race.example:8443?home=node2"
    assert home_address("ws://127.0.0.1:8765/", "node1") == "ws://127.0.0.1:8765/?home=node1"


def test_a_home_replaces_the_last_one_and_keeps_the_other_parameters() -> None:
    assert home_address("ws://host/?home=node1&lang=fr", "node3") == "ws://host/?lang=fr&home=node3"
    assert home_address(home_address("ws://host", "node1"), "node1") == "ws://host?home=node1"
