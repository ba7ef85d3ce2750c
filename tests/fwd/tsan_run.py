#!/usr/bin/python3
"""dpdktel-fwd under ThreadSanitizer: run the forwarder of a -Db_sanitize=thread build,
query every /fwd/... command from several telemetry clients at once while the lcores
forward and the main lcore checks health and links, stop it with SIGTERM, and fail on any
TSan report (TSAN_OPTIONS log_path: one file per report set).

Usage: tsan_run.py --fwd BUILD/fwd/dpdktel-fwd [--seconds S]
Registered by tests/fwd/meson.build only in a TSan build (suite fwd).

DPDK itself is not instrumented: TSan sees our accesses, and the synchronisation of
pthread_create, pipes, and the C11 atomics we use, but not DPDK's own spinlocks. The
forwarder is built so that every cross-thread edge goes through something TSan can see
(fwd.h, telemetry.c), so a report here is a real race in our code.
"""
import argparse
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

CMDS = ('/fwd/info', '/fwd/lcores', '/fwd/lcore,1', '/fwd/lcore,2', '/fwd/ports',
        '/fwd/port,0', '/fwd/port,1', '/fwd/metrics', '/fwd/metrics,0')


def query(path, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    try:
        s.connect(path)
        s.recv(1024)  # greeting
        s.send(cmd.encode())
        return json.loads(s.recv(65536))[cmd.split(',')[0]]
    finally:
        s.close()


def wait_ready(proc, path, deadline):
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            if query(path, '/fwd/info') is not None:
                return True
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--fwd', required=True)
    ap.add_argument('--seconds', type=float, default=3.0)
    args = ap.parse_args()

    prefix = f'dttsan{os.getpid()}'
    sock = f'/var/run/dpdk/{prefix}/dpdk_telemetry.v2'
    logs = tempfile.mkdtemp(prefix='fwd-tsan-')
    env = dict(os.environ, TSAN_OPTIONS=f'log_path={logs}/tsan:halt_on_error=0')
    # Two forwarding lcores sharing CPU 1 (this machine has two cores).
    argv = [args.fwd, '--lcores=0@0,1@1,2@1', '--no-huge', '-m', '1024', '--no-pci',
            '--vdev=net_null0', '--vdev=net_null1', f'--file-prefix={prefix}', '--',
            '--idle-sleep-us', '1000', '--stats-period', '1']
    out = open(os.path.join(logs, 'fwd.log'), 'w')
    proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    failed = []
    try:
        if not wait_ready(proc, sock, time.monotonic() + 60):
            failed.append('dpdktel-fwd did not answer /fwd/info within 60 s')
        else:
            end = time.monotonic() + args.seconds
            counts = []

            def client():
                n = 0
                while time.monotonic() < end:
                    for c in CMDS:
                        query(sock, c)
                        n += 1
                counts.append(n)

            threads = [threading.Thread(target=client) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(args.seconds + 30)
            print(f'{sum(counts)} queries from {len(threads)} clients')
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        out.close()
        shutil.rmtree(f'/var/run/dpdk/{prefix}', ignore_errors=True)
    if rc != 0:
        failed.append(f'dpdktel-fwd exited {rc}')
    for path in sorted(glob.glob(os.path.join(logs, 'tsan*'))):
        with open(path, errors='replace') as f:
            failed.append(f'{path}:\n{f.read()}')
    if failed:
        with open(os.path.join(logs, 'fwd.log'), errors='replace') as f:
            print(f.read())
        print('\n'.join(failed))
        return 1
    shutil.rmtree(logs, ignore_errors=True)
    print('no ThreadSanitizer report')
    return 0


if __name__ == '__main__':
    sys.exit(main())
