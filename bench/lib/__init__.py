"""The benches' library: what the entry points (``python -m bench.X``, one module each at the
top of ``bench/``) share. The bots of the load generator and their worker processes, servers
and node fleets to start and measure (CPU, wake-ups, Redis commands), the deployment behind
HAProxy, light spectators, synthetic players, reports and figures. Nothing here runs on its
own or imports an entry point (``tests/bench/test_layout.py``)."""
