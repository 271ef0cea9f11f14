"""The websocket edge: connections, limits, backpressure and the typed dispatcher."""
