"""Set interfaces up or down on command, and say exactly when (run inside a netns).

    ip netns exec NS /usr/bin/python3 linkctl.py

reads lines "down IFACE" or "up IFACE" on stdin and answers each with "ok T" where T is
time.monotonic() (CLOCK_MONOTONIC, the same clock in every process) taken just before the
SIOCSIFFLAGS ioctl. A test can then measure how long others take to notice, without the
cost of starting `ip` in the measurement.
"""
import fcntl
import socket
import struct
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


def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    print('ready', flush=True)
    for line in sys.stdin:
        what, iface = line.split()
        t = set_up(sock, iface, what == 'up')
        print(f'ok {t!r}', flush=True)


if __name__ == '__main__':
    main()
