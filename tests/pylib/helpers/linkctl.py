"""Set interfaces up or down on command, and say exactly when (run inside a netns).

    ip netns exec NS /usr/bin/python3 linkctl.py

reads lines "down IFACE" or "up IFACE" on stdin and answers each with "ok T" where T is
time.monotonic() (CLOCK_MONOTONIC, the same clock in every process) taken just before the
SIOCSIFFLAGS ioctl. A test can then measure how long others take to notice, without the
cost of starting `ip` in the measurement.
"""
import fcntl
import os
import socket
import struct
import subprocess
import sys
import time

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


def set_up(sock, iface, up):
    req = struct.pack('16sH14x', iface.encode(), 0)
    flags = struct.unpack('16sH14x', fcntl.ioctl(sock, SIOCGIFFLAGS, req))[1]
    flags = (flags | IFF_UP) if up else (flags & ~IFF_UP)
    t = time.monotonic()
    fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack('16sH14x', iface.encode(), flags))
    return t


class Client:
    """Runs this script (inside netns `ns` if given) and asks it to change links:
    set(iface, 'down'|'up') returns the CLOCK_MONOTONIC time just before the ioctl."""

    def __init__(self, ns=None, python='/usr/bin/python3'):
        argv = [python, os.path.abspath(__file__)]
        if ns:
            argv = ['ip', 'netns', 'exec', ns] + argv
        self.proc = subprocess.Popen(argv, text=True, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        if self.proc.stdout.readline().strip() != 'ready':
            raise RuntimeError('linkctl did not start')

    def set(self, iface, state):
        self.proc.stdin.write(f'{state} {iface}\n')
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().split()
        if not answer or answer[0] != 'ok':
            raise RuntimeError(f'linkctl: {answer}')
        return float(answer[1])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    print('ready', flush=True)
    for line in sys.stdin:
        what, iface = line.split()
        t = set_up(sock, iface, what == 'up')
        print(f'ok {t!r}', flush=True)


if __name__ == '__main__':
    main()
