"""The reference terminal client (to come after the race server). It knows no rules."""
