"""The README's main command, scripts/demo, run for a few seconds as a user would."""
import os
import re
import subprocess
import urllib.request


def test_demo_runs_the_pipeline_and_cleans_up(source_dir, build_dir):
    env = dict(os.environ, DTEL_BUILD_DIR=build_dir)
    p = subprocess.run([os.path.join(source_dir, 'scripts', 'demo'), '--for', '8'],
                       capture_output=True, text=True, timeout=240, env=env)
    out = p.stdout
    assert p.returncode == 0, out + p.stderr
    sock = re.search(r'telemetry socket (\S+)', out).group(1)
    prom = re.search(r'Prometheus with the dpdktel rules: (http://127\.0\.0\.1:\d+)', out).group(1)
    am = re.search(r'Alertmanager with grafana/alertmanager/alertmanager.yml: '
                   r'(http://127\.0\.0\.1:\d+)', out).group(1)
    assert re.search(r'metrics: http://127\.0\.0\.1:\d+/metrics', out)
    ports = re.findall(r'port (\d): link (up|DOWN) +rx +(\S+) pps', out)
    assert {p for p, _, _ in ports} == {'0', '1'}, out
    assert all(link == 'up' for _, link, _ in ports), out
    assert re.search(r'lcore 1: (RUNNING|IDLE)', out), out
    assert 'alerts firing: none' in out
    # Frames flow: some refresh saw packets coming in on port 0 (net_tap) or any port.
    assert any(r != '0' for _, _, r in ports), out
    assert 'delivered to' not in out  # nothing fires, nothing is delivered
    assert 'demo: stopped dpdktel-fwd, collectd, Prometheus and Alertmanager' in out
    # Everything it started is gone.
    assert not os.path.exists(sock)
    assert not os.path.exists(os.path.dirname(sock))
    for name, url in (('Prometheus', prom), ('Alertmanager', am)):
        try:
            urllib.request.urlopen(url, timeout=2)
            raise AssertionError(f'{name} still answers after the demo')
        except OSError:
            pass


def test_demo_scenario_prints_what_alertmanager_delivers(source_dir, build_dir):
    """--scenario takes port 1 down at +10 s: DpdkLinkDown fires 20 s later and the example
    routing pages it (group_wait 10 s) and mails it; the demo prints both deliveries."""
    env = dict(os.environ, DTEL_BUILD_DIR=build_dir)
    p = subprocess.run([os.path.join(source_dir, 'scripts', 'demo'), '--scenario', '--for', '50'],
                       capture_output=True, text=True, timeout=240, env=env)
    out = p.stdout
    assert p.returncode == 0, out + p.stderr
    # The device is net_tap1, or net_null1 where the demo runs without /dev/net/tun.
    device = 'net_tap1' if os.path.exists('/dev/net/tun') else 'net_null1'
    for receiver in ('dpdktel-pager', 'dpdktel-mail'):
        line = (f'delivered to {receiver}: FIRING DpdkLinkDown port=1: '
                f'Link down on port 1 ({device}) of demo on demo')
        assert out.count(line) == 1, out


def test_demo_ha_starts_the_pair_and_the_cluster(source_dir, build_dir):
    """--ha: two Prometheus servers and two Alertmanagers that have formed one cluster
    (the demo prints their URLs once it has settled), all gone afterwards."""
    env = dict(os.environ, DTEL_BUILD_DIR=build_dir)
    p = subprocess.run([os.path.join(source_dir, 'scripts', 'demo'), '--ha', '--for', '4'],
                       capture_output=True, text=True, timeout=240, env=env)
    out = p.stdout
    assert p.returncode == 0, out + p.stderr
    proms = re.findall(r'Prometheus ([AB]) of the pair \(prometheus-ha-[ab]\.yml\): '
                       r'(http://127\.0\.0\.1:\d+)', out)
    ams = re.findall(r'Alertmanager (mon-[ab]) of the cluster \(alertmanager\.yml, '
                     r'prometheus-alertmanager\.mon-[ab]\): (http://127\.0\.0\.1:\d+)', out)
    assert [n for n, _ in proms] == ['A', 'B'] and [n for n, _ in ams] == ['mon-a', 'mon-b'], out
    assert 'demo: the cluster has settled' in out
    assert re.search(r'port 1: link up', out), out
    assert 'demo: stopped dpdktel-fwd, collectd, Prometheus and Alertmanager' in out
    for name, url in proms + ams:
        try:
            urllib.request.urlopen(url, timeout=2)
            raise AssertionError(f'{name} still answers after the demo')
        except OSError:
            pass
