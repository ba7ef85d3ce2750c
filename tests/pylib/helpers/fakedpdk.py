"""A fake DPDK telemetry v2 server for fault tests: a SOCK_SEQPACKET socket served by a
thread of the test process.

It speaks the protocol as DPDK 22.11 does (greeting on accept, one datagram per request and
per reply, {"/cmd": null} for an unknown command) with the replies recorded from DPDK 22.11
(tests/data/dpdk-22.11), or misbehaves in one of the ways of MODES. The test owns its
lifetime: stop() closes every connection and removes the socket; drop_clients() closes the
connections only (what a reconnect then finds is up to the test: the socket file removed,
its dir removed, its mode changed).
"""
import json
import os
import re
import selectors
import socket
import threading

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'data', 'dpdk-22.11')

MODES = {
    'mimic': 'answers like DPDK 22.11 with recorded replies',
    'no_greeting': 'accepts and never sends anything, not even the greeting',
    'mute': 'sends the greeting, then never answers a request',
    'garbage': 'answers every request with bytes that are not JSON',
    'garbage_greeting': 'greets with bytes that are not JSON',
    'close_after_greeting': 'closes each connection right after the greeting',
    'oversized': 'sends replies larger than the max_output_len it announced',
    'truncated': 'sends replies cut in the middle of their JSON',
    'negative': 'answers with negative counters',
    'non_numeric': 'answers with counters that are strings, floats and booleans',
    'deep': 'answers with JSON nested 4000 levels deep',
}

# Replies whose numbers the counter-mangling modes rewrite; the others ("/", the lists)
# stay valid so that the plugins go on to ask for the mangled ones.
NUMERIC = ('/ethdev/stats', '/ethdev/xstats', '/ethdev/link_status', '/ethdev/info',
           '/eal/heap_info', '/mempool/info', '/eal/memzone_list', '/eal/memzone_info')


def golden(name):
    with open(os.path.join(DATA, name), 'rb') as f:
        return f.read().strip()


def _mangle(value, how):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if how == 'negative':
            return -value - 1
        return [str(value), value + 0.5, True][value % 3]
    if isinstance(value, dict):
        return {k: _mangle(v, how) for k, v in value.items()}
    if isinstance(value, list):
        return [_mangle(v, how) for v in value]
    return value


class FakeDpdk:
    def __init__(self, path, mode='mimic', nports=1, pid=None, max_output_len=16384):
        assert mode in MODES, mode
        self.path = path
        self.mode = mode
        self.nports = nports
        self.pid = pid if pid is not None else os.getpid()
        self.max_output_len = max_output_len
        self.requests = []  # every request received, in order
        self.accepted = 0
        self._lock = threading.Lock()
        self._sel = selectors.DefaultSelector()
        self._listener = None
        self._clients = set()
        self._wake_r, self._wake_w = os.pipe()
        self._sel.register(self._wake_r, selectors.EVENT_READ, 'wake')
        self._todo = []
        self._stop = False
        self._thread = None

    # Lifetime ---------------------------------------------------------------------------

    def start(self):
        self.bind()
        self._thread = threading.Thread(target=self._run, name=f'fakedpdk-{self.mode}',
                                        daemon=True)
        self._thread.start()
        return self

    def bind(self, mode=0o777):
        """Listen at self.path (again), as a DPDK application does at start-up."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        s.bind(self.path)
        os.chmod(self.path, mode)
        s.listen(10)
        s.setblocking(False)
        self._call(lambda: self._set_listener(s))

    def unbind(self):
        """Stop listening and remove the socket file (connections stay open)."""
        self._call(self._close_listener)
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def drop_clients(self):
        """Close every connection, as an application that exits does."""
        self._call(self._close_clients)

    def stop(self):
        if self._thread is not None:
            self._call(self._close_clients)
            self._call(self._close_listener)
            self._stop = True
            os.write(self._wake_w, b'x')
            self._thread.join(10)
            self._thread = None
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def count(self, prefix):
        with self._lock:
            return sum(1 for r in self.requests if r.startswith(prefix))

    # The server thread ------------------------------------------------------------------

    def _call(self, fn):
        """Run fn in the server thread (or here, before it runs) and wait for it."""
        if self._thread is None or not self._thread.is_alive():
            fn()
            return
        done = threading.Event()
        with self._lock:
            self._todo.append((fn, done))
        os.write(self._wake_w, b'x')
        assert done.wait(10), 'fake DPDK server thread does not answer'

    def _set_listener(self, s):
        self._close_listener()
        self._listener = s
        self._sel.register(s, selectors.EVENT_READ, 'listen')

    def _close_listener(self):
        if self._listener is not None:
            self._sel.unregister(self._listener)
            self._listener.close()
            self._listener = None

    def _close_clients(self):
        for c in list(self._clients):
            self._close(c)

    def _close(self, c):
        if c in self._clients:
            self._clients.discard(c)
            self._sel.unregister(c)
            c.close()

    def _run(self):
        while not self._stop:
            for key, _ in self._sel.select(1.0):
                if key.data == 'wake':
                    os.read(self._wake_r, 4096)
                    with self._lock:
                        todo, self._todo = self._todo, []
                    for fn, done in todo:
                        try:
                            fn()
                        finally:
                            done.set()
                elif key.data == 'listen':
                    self._accept()
                else:
                    self._request(key.fileobj)
        for c in list(self._clients):
            self._close(c)
        self._sel.close()

    def _accept(self):
        if self._listener is None:
            return
        try:
            c, _ = self._listener.accept()
        except (BlockingIOError, OSError):
            return
        self.accepted += 1
        c.setblocking(False)
        self._clients.add(c)
        self._sel.register(c, selectors.EVENT_READ, 'client')
        if self.mode == 'no_greeting':
            return
        if self.mode == 'garbage_greeting':
            self._send(c, b'\x00\x01garbage, not a greeting')
            return
        self._send(c, json.dumps({'version': 'DPDK 22.11.11', 'pid': self.pid,
                                  'max_output_len': self.max_output_len},
                                 separators=(',', ':')).encode())
        if self.mode == 'close_after_greeting':
            self._close(c)

    def _send(self, c, data):
        try:
            c.send(data)
        except OSError:
            self._close(c)

    def _request(self, c):
        try:
            data = c.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b''
        if not data:
            self._close(c)
            return
        req = data.decode(errors='replace')
        with self._lock:
            self.requests.append(req)
        reply = self.reply(req)
        if reply is not None:
            self._send(c, reply)

    # Replies ----------------------------------------------------------------------------

    def recorded(self, req):
        """The reply DPDK 22.11 gives (recorded), for a server with self.nports ports."""
        cmd, _, param = req.partition(',')
        if cmd == '/':
            return golden('root.json')
        if cmd == '/ethdev/list':
            return json.dumps({cmd: list(range(self.nports))}, separators=(',', ':')).encode()
        port_cmds = {'/ethdev/stats': 'ethdev_stats-0.json',
                     '/ethdev/xstats': 'ethdev_xstats-0.json',
                     '/ethdev/link_status': 'ethdev_link_status-0.json',
                     '/ethdev/info': 'ethdev_info-0.json'}
        if cmd in port_cmds and param.isdigit() and int(param) < self.nports:
            r = golden(port_cmds[cmd])
            if cmd == '/ethdev/info':
                r = r.replace(b'"port_id":0,', f'"port_id":{int(param)},'.encode())
                r = r.replace(b'"name":"net_null0"', f'"name":"net_null{int(param)}"'.encode())
            return r
        if cmd == '/eal/heap_list':
            return golden('eal_heap_list.json')
        if cmd == '/eal/heap_info' and param == '0':
            return golden('eal_heap_info-0.json')
        if cmd == '/mempool/list':
            return golden('mempool_list.json')
        if cmd == '/mempool/info' and param == 'mb_pool_0':
            return golden('mempool_info-mb_pool_0.json')
        if cmd == '/eal/memzone_list':
            return golden('eal_memzone_list.json')
        if cmd == '/eal/memzone_info' and param in {'0', '1', '2', '3', '4', '5'}:
            # lib/eal/common/eal_common_memory.c handle_eal_memzone_info_request, in the
            # shape testpmd 22.11 answers (docs of tests/data/dpdk-newer: the same in 25.11).
            return json.dumps({cmd: {
                'Zone': int(param), 'Name': f'mz{param}', 'Length': 1000 + int(param),
                'Address': '0x119d43a40', 'Socket': 0, 'Flags': 0, 'Hugepage_size': 4096,
                'Hugepage_base': '0x119d43000', 'Hugepage_used': 1}},
                separators=(',', ':')).encode()
        return json.dumps({cmd: None}, separators=(',', ':')).encode()

    def reply(self, req):
        """The datagram to send for req, or None for no answer."""
        cmd = req.partition(',')[0]
        if not re.fullmatch(r'/[A-Za-z0-9_/]*', cmd):
            return json.dumps({cmd: None}).encode()
        m = self.mode
        if m == 'mute':
            return None
        if m == 'garbage':
            return b'\xff\xfeNOT JSON }{ ' + req.encode()
        r = self.recorded(req)
        if m == 'oversized':
            # Valid JSON, padded past what the greeting announced.
            return r[:-1] + b' ' * (self.max_output_len + 100) + b'}'
        if m == 'truncated':
            return r[:max(len(cmd) + 6, len(r) // 2)]
        if m in ('negative', 'non_numeric') and cmd in NUMERIC:
            return json.dumps(_mangle(json.loads(r), m), separators=(',', ':')).encode()
        if m == 'deep' and cmd in NUMERIC:
            return ('{"%s":' % cmd + '[' * 4000 + '0' + ']' * 4000 + '}').encode()
        return r
