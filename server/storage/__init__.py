"""Storage: every Redis key behind typed stores (the only package that imports redis), and the embedded Redis."""
