"""A minimal DPDK telemetry v2 client for tests: one SOCK_SEQPACKET connection."""
import json
import socket


class Client:
    def __init__(self, path, timeout=2.0):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        greeting = self.sock.recv(4096)
        if not greeting:
            raise ConnectionResetError(f'{path}: closed before the greeting')
        self.greeting = json.loads(greeting)
        self.bufsize = int(self.greeting['max_output_len']) + 1

    def raw(self, cmd):
        self.sock.send(cmd.encode())
        return self.sock.recv(self.bufsize)

    def query(self, cmd):
        """The value of the reply {"<cmd>": value}."""
        reply = json.loads(self.raw(cmd))
        return reply[cmd.split(',', 1)[0]]

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def query(path, cmd, timeout=2.0):
    with Client(path, timeout) as c:
        return c.query(cmd)
