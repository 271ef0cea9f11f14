"""Pending websocket writes, one list an event loop: two servers on two loops in one process
(in threads, as the tests run two nodes) never drop each other's queued writes."""

from __future__ import annotations

import asyncio
import threading

from server.connections.link import _flushes


def test_servers_on_two_loops_in_one_process_never_drop_each_others_queued_writes() -> None:
    """Two event loops in two threads (as the tests run two nodes): a write queued on one is
    still written when the other queues its own in between."""
    flushed: list[str] = []

    class Sink:
        def __init__(self, name: str) -> None:
            self.name = name

        def flush(self) -> None:
            flushed.append(self.name)

    first, second = asyncio.new_event_loop(), asyncio.new_event_loop()
    try:

        async def queue(name: str) -> None:
            _flushes.add(Sink(name))  # type: ignore[arg-type]  # only flush() is called

        async def queue_first_then_the_other_loop() -> None:
            await queue("first")  # its write waits for this loop's next turn...
            other = threading.Thread(target=second.run_until_complete, args=(queue("second"),))
            other.start()
            other.join()  # ... which comes after the other loop queued and wrote its own

        first.run_until_complete(queue_first_then_the_other_loop())
    finally:
        first.close()
        second.close()
    assert sorted(flushed) == ["first", "second"]
