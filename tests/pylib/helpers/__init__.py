"""Helpers shared by the Python test suites and scripts: real DPDK processes, collectd and
Prometheus daemons, the telemetry socket, waiting, and the PromQL/docs parsers of the
monitoring checks.

The package dir tests/pylib is on the path in one way: meson sets PYTHONPATH for every test
and benchmark that runs Python; tests/pytest.ini sets it for pytest run by hand; scripts run
directly (tests/bench/*, scripts/demo.py, tests/grafana/lint_dashboards.py) insert it into
sys.path in one line. Nothing imports another suite's folder.
"""
