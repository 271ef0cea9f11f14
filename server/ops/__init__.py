"""The operator's surface: Prometheus metrics, readiness and draining, log set-up."""
