"""Solitaire Race server: rules engine (:mod:`server.games`), and later the solver, rooms and network."""
