"""Request families: one module each (identity, rooms, quick match, daily, boards and statistics, replays)."""
