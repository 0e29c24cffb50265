"""Measurements of the system on this machine: the load test, cold starts, costs, the sampler (docs/performance.md)."""
