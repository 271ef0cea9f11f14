"""Rate-limited logging: one line per kind per interval, a few a second over all kinds,
the held-back lines counted on the next line of their kind, bounded memory."""

from __future__ import annotations

import logging

import pytest

from server.ops.log_limits import LimitedRecords, LogLimiter


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def logger(caplog: pytest.LogCaptureFixture) -> logging.Logger:
    caplog.set_level(logging.DEBUG, logger="test.log_limits")
    return logging.getLogger("test.log_limits")


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records]


def test_one_line_per_kind_per_interval_then_the_count_held_back(
    logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    limiter = LogLimiter(logger, interval=10.0, clock=clock)
    assert limiter.log(logging.WARNING, "a", "failed %s", 1)
    for _ in range(50):
        clock.now += 0.1
        assert not limiter.log(logging.WARNING, "a", "failed %s", 2)
    clock.now += 5.0
    assert limiter.log(logging.WARNING, "a", "failed %s", 3)
    assert messages(caplog) == ["failed 1", "failed 3 (50 more like it held back)"]


def test_kinds_are_limited_separately_within_an_overall_budget(
    logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    limiter = LogLimiter(logger, interval=10.0, rate=1.0, burst=3.0, clock=clock)
    written = [limiter.log(logging.ERROR, f"kind {n}", "kind %d", n) for n in range(10)]
    assert written == [True] * 3 + [False] * 7
    clock.now += 2.0  # two more lines' worth of budget
    written = [limiter.log(logging.ERROR, f"kind {n}", "kind %d", n) for n in range(3, 10)]
    assert written == [True] * 2 + [False] * 5
    assert messages(caplog)[-2:] == ["kind 3 (1 more like it held back)", "kind 4 (1 more like it held back)"]


def test_a_flood_writes_a_few_lines_a_second(logger: logging.Logger, caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    limiter = LogLimiter(logger, interval=10.0, rate=1.0, burst=5.0, clock=clock)
    for step in range(100_000):  # 100 s of 1,000 failures a second, of 500 kinds
        clock.now += 0.001
        limiter.log(logging.ERROR, f"kind {step % 500}", "failure")
    assert len(caplog.records) <= 5 + 100


def test_exception_logs_the_traceback(logger: logging.Logger, caplog: pytest.LogCaptureFixture) -> None:
    limiter = LogLimiter(logger, clock=Clock())
    for _ in range(3):
        try:
            raise KeyError("seat")
        except KeyError:
            limiter.exception("Move/KeyError", "error while handling %s", "PlayMove")
    assert len(caplog.records) == 1
    record = caplog.records[0]
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert record.exc_info[0] is KeyError


def test_lines_below_the_level_cost_nothing_and_are_not_counted(
    logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    logger.setLevel(logging.INFO)
    caplog.set_level(logging.INFO, logger="test.log_limits")
    limiter = LogLimiter(logger, clock=Clock())
    assert not limiter.log(logging.DEBUG, "bad-frame", "bad frame")
    assert limiter.log(logging.INFO, "bad-frame", "bad frame")
    assert messages(caplog) == ["bad frame"]


def test_memory_per_kind_is_bounded(logger: logging.Logger, caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    limiter = LogLimiter(logger, interval=10.0, rate=1000.0, burst=1000.0, max_kinds=8, clock=clock)
    for n in range(1000):
        limiter.log(logging.ERROR, f"kind {n}", "kind %d", n)
    assert len(limiter._kinds) <= 9
    assert messages(caplog)[:8] == [f"kind {n}" for n in range(8)]
    assert messages(caplog)[8:] == ["kind 8"]  # the rest share the "other" kind's budget
    clock.now += 11.0  # the old kinds are stale now: new ones get room again
    assert limiter.log(logging.ERROR, "fresh", "fresh")


def test_a_librarys_records_are_limited_per_kind_and_the_servers_pass(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    handler = logging.Handler()
    passed: list[str] = []
    handler.emit = lambda record: passed.append(record.getMessage())  # type: ignore[method-assign]
    handler.addFilter(LimitedRecords(LogLimiter(logging.getLogger("test.libraries"), clock=clock)))
    library, ours = logging.getLogger("websockets.server"), logging.getLogger("server.edge")
    for logger_ in (library, ours):
        logger_.addHandler(handler)
        logger_.propagate = False
    try:
        for _ in range(1000):
            try:
                raise AssertionError
            except AssertionError:
                library.exception("unexpected internal error")
        ours.warning("a line of our own")
        ours.warning("a line of our own")
        clock.now += 11
        try:
            raise AssertionError
        except AssertionError:
            library.exception("unexpected internal error")
    finally:
        for logger_ in (library, ours):
            logger_.removeHandler(handler)
            logger_.propagate = True
    assert passed == [
        "unexpected internal error",
        "a line of our own",
        "a line of our own",
        "unexpected internal error (999 more like it held back)",
    ]
