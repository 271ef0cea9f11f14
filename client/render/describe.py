"""Rooms, racers and events as short text for people: times, progress bars, the racers'
panel and clock of the race screen, and the one-line event descriptions of
``python -m client watch --plain``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.text import Text

from protocol.messages import (
    BoardChanged,
    Clock,
    DailyTag,
    Progress,
    ProgressChanged,
    RaceOver,
    Racer,
    RacerConnection,
    RacerFinished,
    RacerJoined,
    RacerLeft,
    RacerReady,
    RacerResigned,
    Rematched,
    Result,
    RoomEvent,
    RoomView,
    SpectatorsChanged,
    StateChanged,
)

CARDS = 52


#: A name that says "bot" as a word ("Bot (medium)", not "Robot Rob").
SAYS_BOT = re.compile(r"\bbot\b", re.IGNORECASE)


def shown_name(who: Racer | Result) -> str:
    """A racer's name as shown: marked ``(ghost)`` when the seat is a ghost (a recorded run),
    ``(bot)`` when the server says the racer is a bot and its name does not say so already
    ("Bot (medium)", not "Bot (medium) (bot)")."""
    if who.ghost:
        return f"{who.name} (ghost)"
    return f"{who.name} (bot)" if who.bot and not SAYS_BOT.search(who.name) else who.name


def precise_duration(ms: int | float | None) -> str:
    """``m:ss.cc`` (hundredths; hours add to the minutes: ``0:43.89``, ``72:05.10``) for a
    duration in milliseconds; ``-`` for None. The one format of every race time the client
    shows: clocks, results, racers, leaderboards and statistics."""
    if ms is None:
        return "-"
    hundredths = max(0, int(ms)) // 10
    seconds, hundredths = divmod(hundredths, 100)
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}:{seconds:02}.{hundredths:02}"


#: A race time, as everywhere: ``m:ss.cc`` (the same function; the older name).
duration = precise_duration


def time_left(ms: float) -> str:
    """What remains of a day or a time limit: ``7 h 05 min``, ``12 min 30 s``, ``45 s``."""
    seconds = max(0, int(ms // 1000))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02} min"
    return f"{minutes} min {seconds:02} s" if minutes else f"{seconds} s"


def rating_text(rating: float, change: float | None = None) -> str:
    """A rating rounded to a whole number, with the change of the race: ``1523 (+23)``."""
    text = f"{round(rating)}"
    if change is not None:
        rounded = round(change)
        text += f" ({rounded:+d})" if rounded else " (±0)"
    return text


def count(number: int, noun: str) -> str:
    """``1 move``, ``2 moves``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def bar(done: int, total: int = CARDS, width: int = 20) -> str:
    """A text progress bar: ``█████░░░░░``."""
    filled = 0 if total <= 0 else round(width * min(done, total) / total)
    return "█" * filled + "░" * (width - filled)


def racer_status(racer: Racer) -> str:
    """What a racer is doing, in a few words."""
    if racer.finished_ms is not None:
        return f"finished in {duration(racer.finished_ms)}"
    if racer.resigned:
        return "resigned" if racer.resigned == "resigned" else f"out ({racer.resigned})"
    if not racer.connected and not racer.ghost:
        return "disconnected"
    return ""


def progress_text(progress: Progress) -> str:
    return f"{progress.home}/{CARDS} home, {count(progress.moves, 'move')}"


def elapsed_ms(clock: Clock, now_ms: float) -> float | None:
    """Race time on ``clock`` at ``now_ms`` (server time): None before the start; frozen at the end."""
    if clock.started is None:
        return None
    end = clock.finished if clock.finished is not None else now_ms
    return max(0.0, end - clock.started)


def results_lines(results: list[Result]) -> list[str]:
    lines = []
    for result in results:
        how = f"finished in {duration(result.time_ms)}" if result.finished else f"{result.home}/{CARDS} home"
        rated = "" if result.rating is None else f", rating {rating_text(result.rating, result.rating_change)}"
        lines.append(f"  {result.place}. {shown_name(result)}: {how}, {count(result.moves, 'move')}{rated}")
    return lines


def summary_line(view: RoomView) -> str:
    racers = ", ".join(f"{r.name} ({progress_text(r.progress)})" for r in view.racers) or "no racers"
    return f"room {view.code} {view.variant} race {view.race} {view.state}: {racers}; {view.spectators} watching"


def event_line(view: RoomView, names: dict[int, str], event: RoomEvent) -> str | None:
    """One line for ``event`` (None for events not worth a line). ``names`` maps seats to
    names (kept by the caller, since a racer who left is gone from ``view``)."""

    def who(seat: int) -> str:
        return names.get(seat, f"seat {seat}")

    if isinstance(event, (BoardChanged, ProgressChanged)):
        return f"{who(event.seat)}: {progress_text(event.progress)}"
    if isinstance(event, RacerJoined):
        return f"{shown_name(event.racer)} joined (seat {event.racer.seat})"
    if isinstance(event, RacerLeft):
        return f"{who(event.seat)} left"
    if isinstance(event, RacerReady):
        return f"{who(event.seat)} is {'ready' if event.ready else 'not ready'}"
    if isinstance(event, RacerConnection):
        return f"{who(event.seat)} {'reconnected' if event.connected else 'disconnected'}"
    if isinstance(event, SpectatorsChanged):
        return f"{event.count} watching"
    if isinstance(event, StateChanged):
        text = f"state {event.state} (race {event.race})"
        if event.state == "countdown" and event.clock.countdown_ends is not None:
            text += f", starts in {duration(event.clock.countdown_ends - event.clock.now)}"
        return text
    if isinstance(event, RacerFinished):
        return f"{who(event.seat)} finished in {duration(event.time_ms)} with {count(event.moves, 'move')}"
    if isinstance(event, RacerResigned):
        return f"{who(event.seat)} resigned ({event.reason})"
    if isinstance(event, RaceOver):
        deal = f"  deal {event.reveal.deal}" if event.reveal is not None else "  deal revealed when the day ends"
        return "\n".join(["race over:", *results_lines(event.results), deal])
    if isinstance(event, Rematched):
        return f"rematch: race {event.race}"
    return None


def variant_title(view: RoomView) -> str:
    return view.variant.capitalize()


def daily_label(tag: DailyTag) -> str:
    """``Daily — ranked`` or ``Daily — practice``: what a daily-challenge attempt counts for."""
    return f"Daily — {'ranked' if tag.ranked else 'practice'}"


def options_text(view: RoomView) -> str:
    options = view.options
    parts = ["practice" if options.max_racers == 1 else f"{options.max_racers} seats"]
    if options.deal is not None:
        parts.append(f"deal {options.deal}")
    parts.append("public" if options.public else "private")
    if view.variant == "antares":
        parts.append(f"autoplay {options.autoplay}")
    parts.append("hints" if options.hints else "no hints")
    parts.append("undo" if options.undo else "no undo")
    if options.time_limit:
        parts.append(f"{options.time_limit // 60} min limit")
    return " · ".join(parts)


def waiting_text(view: RoomView, me: int | None, creator: bool) -> str:
    """The room before its race (Rich markup): its code and options, who is ready (``me``:
    the player's seat), and what the keys do (``creator``: the player created the room)."""
    lines = [
        f"[b]Room {view.code}[/b]: give this code to the racers you invite.",
        options_text(view),
        "",
    ]
    for racer in view.racers:
        # A ghost is always ready (a copy reset by a rematch may not say so).
        mark = "[green]✓ ready[/green]" if racer.ready or racer.ghost else "[dim]· not ready[/dim]"
        if not racer.connected and not racer.ghost:
            mark += " [red](disconnected)[/red]"
        you = " (you)" if racer.seat == me else ""
        lines.append(f"  {shown_name(racer)}{you}  {mark}")
    free = view.options.max_racers - len(view.racers)
    if free > 0:
        lines.append(f"  [dim]{count(free, 'seat')} free[/dim]")
    lines.append("")
    lines.append("r: ready / not ready · q: leave")
    if creator:
        lines.append("s: start now, without waiting for every seat (you created the room)")
    lines.append("The race starts when every seat is taken and everyone is ready.")
    return "\n".join(lines)


def out_text(name: str, reason: str) -> str:
    """Another racer stopped racing (``reason`` as the server's ``resigned`` event gives it)."""
    if reason == "resigned":
        return f"{name} resigned."
    if reason == "left":
        return f"{name} left the race."
    if reason == "stopped":
        return f"{name} stopped: its recorded run ends there."
    return f"{name} is out of the race ({reason})."


def racer_lines(racers: Sequence[Racer], me: int | None, started: int | None, shown: int | None = None) -> Text:
    """Every racer: name, a bar of cards home, moves and what they are doing. ``shown``
    (a spectator's screen): the racer whose board is on screen, marked ``▶``."""
    text = Text()
    for racer in racers:
        progress = racer.progress
        name = shown_name(racer) + (" (you)" if racer.seat == me else "")
        if shown is not None:
            name = ("▶ " if racer.seat == shown else "  ") + name
        style = "bold" if racer.seat in (me, shown) else ""
        text.append(f"{name[:18]:<18}", style)
        text.append(f" {progress.home:>2}/{CARDS}\n")
        text.append(bar(progress.home, width=24), "green" if progress.won else "cyan")
        ready = racer.ready or racer.ghost
        status = racer_status(racer) or ("racing" if started is not None else ("ready" if ready else "not ready"))
        text.append(f"\n{count(progress.moves, 'move')} · {status}\n", "dim" if racer.resigned else "")
    return text


def clock_text(elapsed: float | None, ends_in: float | None, daily: bool = False) -> str:
    """The race clock, and under it the time left when the race has a limit (a daily
    attempt's limit is the end of its day). Lines of at most 27 characters (the side panel)."""
    if elapsed is None:
        return ""
    text = f"⏱ {duration(elapsed)}"
    if ends_in is not None:
        text += f"\n{'day ends in' if daily else 'time left:'} {time_left(ends_in)}"
    return text
