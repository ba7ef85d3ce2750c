"""The README's main command, scripts/demo, run for a few seconds as a user would."""
import os
import re
import subprocess


def test_demo_shows_ports_and_cleans_up(source_dir, build_dir):
    env = dict(os.environ, DTEL_BUILD_DIR=build_dir)
    p = subprocess.run([os.path.join(source_dir, 'scripts', 'demo'), '--for', '2'],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    prefix = re.search(r"file prefix '([^']+)'", p.stdout).group(1)
    lines = [l for l in p.stdout.splitlines() if ' port=' in l]
    assert len(lines) == 8, p.stdout  # 2 refreshes x 4 ports
    assert all(float(re.search(r'rx_pps=(\d+)', l).group(1)) > 0 for l in lines)
    assert 'demo: stopped dpdk-testpmd' in p.stdout
    assert not os.path.exists(f'/var/run/dpdk/{prefix}')
    assert subprocess.run(['pgrep', '-f', f'file-prefix={prefix}'],
                          capture_output=True).returncode == 1
