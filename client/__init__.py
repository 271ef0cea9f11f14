"""The reference client of the Solitaire Race protocol. It knows no rules.

- :mod:`client.lib`: the client library: the connection with its room mirrors
  (:class:`~client.lib.connection.RaceClient`), the saved settings, and the bots.
- :mod:`client.render`: boards, cards, keyboard selection, replays, rules, keys and
  standings as text, as pure functions.
- :mod:`client.tui`: the terminal UI (``python -m client``).
- :mod:`client.commands`: the script commands (``rooms``, ``watch --plain``, ``bot``, ...).
"""
