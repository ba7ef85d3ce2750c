"""The short soak (helpers/soak.py; the 10-minute one is tests/bench/soak): a real collectd
with dpdktel_stats and dpdktel_events (PollInterval 0.02, Timeout 0.2, NotRespondingPolls 3)
on four real DPDK applications, one of whose telemetry threads shares its CPU with a
busy-polling lcore, while a CPU hog keeps both cores busy for 45 s and two applications are
stopped (SIGSTOP) for 3 s each in turn.

Load alone must raise no alarm: no gone/back/not-responding notification for an application
outside its own stop (a "does not answer" log line for one slow request is by design; the
bench counts them). And load must not hide a real hang: each 3 s stop is reported exactly
once as not responding and once as answering again, never as gone (its process was alive
all along)."""
from helpers import soak

DURATION_S = 45
PERIOD_S = 20  # stops at 10 s (shared) and 30 s (pmd)


def test_soak_under_cpu_hog(build_dir, source_dir):
    r = soak.run(build_dir, source_dir, DURATION_S, PERIOD_S)
    apps = soak.summarize(r)
    why = soak.explain(r, apps)
    # The setup is what it says: shared's telemetry listener is on the busy lcore's CPU.
    aff = r['shared_affinity']
    assert aff['telemetry-v2'] == aff['rte-worker-1'] == [1], aff
    assert [s['app'] for s in r['stops']] == ['shared', 'pmd'], r['stops']
    for name, a in apps.items():
        assert a['requests'][('dpdktel_events', 'sent')] > 1000, (name, a['requests'])
        assert not a['false'], f'false alarms for {name}:\n{why}'
    for s in r['stops']:
        assert s['reported'], f'stop of {s["app"]} not reported as one hang:\n{why}'
