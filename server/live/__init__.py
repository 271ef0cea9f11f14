"""Live rooms: running a room (lock, decide, persist, apply, ack, send), its audience, timers, the registry."""
