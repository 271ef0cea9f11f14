"""The terminal UI (Textual): screens for the home menu, rooms, races, spectating,
results and replays. It renders what the server sends and sends intents; every
network call runs in a worker, so the UI never waits on the server."""
