"""Competition without I/O: the daily deal and its dates, Glicko-2 ratings and the quick-match line."""
