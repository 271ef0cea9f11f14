"""Certified deals ready before anyone asks: the daily deals and the winnable-deal pool (solver in worker processes)."""
