"""Send raw Ethernet frames on one interface and collect them on another (AF_PACKET).

Run inside the network namespace that holds both interfaces, e.g.
    ip netns exec NS /usr/bin/python3 rawframes.py --tx dtA --rx dtB --count 200 \\
        --src 02:00:00:00:aa:01 --dst 02:00:00:00:bb:02

Frames carry a private EtherType and a payload of MAGIC + run id + sequence number, so that
kernel noise (IPv6 ND, ...) and frames of other runs are ignored. The receiver is bound
before the first frame is sent and has a large forced buffer. Prints one JSON object:
{"sent": N, "received": M, "seqs": sorted unique seqs, "macs": [[dst, src, count], ...]}.
"""
import argparse
import json
import os
import select
import socket
import struct
import time

ETH_P_ALL = 0x0003
SO_RCVBUFFORCE = 33
MAGIC = b'DTELFWD0'


def mac_bytes(text):
    return bytes(int(x, 16) for x in text.split(':'))


def mac_text(raw):
    return ':'.join(f'{b:02x}' for b in raw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tx', required=True)
    ap.add_argument('--rx', required=True)
    ap.add_argument('--count', type=int, default=100)
    ap.add_argument('--src', required=True)
    ap.add_argument('--dst', required=True)
    ap.add_argument('--ethertype', type=lambda s: int(s, 0), default=0x88b5)
    ap.add_argument('--timeout', type=float, default=10.0)
    args = ap.parse_args()

    run_id = os.urandom(4)
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(args.ethertype))
    rx.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
    rx.bind((args.rx, args.ethertype))
    rx.setblocking(False)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((args.tx, 0))

    header = mac_bytes(args.dst) + mac_bytes(args.src) + struct.pack('!H', args.ethertype)
    for seq in range(args.count):
        payload = MAGIC + run_id + struct.pack('!I', seq)
        tx.send((header + payload).ljust(60, b'\0'))

    seqs = set()
    macs = {}
    received = 0
    deadline = time.monotonic() + args.timeout
    while len(seqs) < args.count:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if not select.select([rx], [], [], left)[0]:
            continue
        while True:
            try:
                frame, addr = rx.recvfrom(2048)
            except BlockingIOError:
                break
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            body = frame[14:]
            if not body.startswith(MAGIC) or body[8:12] != run_id:
                continue
            received += 1
            seqs.add(struct.unpack('!I', body[12:16])[0])
            key = (mac_text(frame[0:6]), mac_text(frame[6:12]))
            macs[key] = macs.get(key, 0) + 1
    print(json.dumps({'sent': args.count, 'received': received, 'seqs': sorted(seqs),
                      'macs': [[d, s, n] for (d, s), n in sorted(macs.items())]}))


if __name__ == '__main__':
    main()
