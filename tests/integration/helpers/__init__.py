"""Helpers for the integration suite: real DPDK processes, the telemetry socket, waiting."""
