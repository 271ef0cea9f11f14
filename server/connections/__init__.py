"""One connected client as the rest of the server sees it: identity, followed rooms, rate limits, bounded sending."""
