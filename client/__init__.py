"""The reference client of the Solitaire Race protocol. It knows no rules.

- :mod:`client.connection`: the client library (:class:`~client.connection.RaceClient`).
- :mod:`client.tui`: the terminal UI (``python -m client``).
- :mod:`client.commands` and :mod:`client.bot`: the script commands and the bot.
- :mod:`client.board`, :mod:`client.cursor`, :mod:`client.cards`, :mod:`client.replay`,
  :mod:`client.describe`: drawing boards, keyboard selection, card notation, replays and
  text, as pure functions.
"""
