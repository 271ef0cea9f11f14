"""Rooms: the sans-I/O room model, its lifecycle table, records and results."""
