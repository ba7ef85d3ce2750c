"""Pieces of the whole pipeline shared by scripts/demo.py and test_pipeline_e2e.py."""
import socket
import threading


class Traffic:
    """`per_tick` frames every 5 ms into a tap interface (about 200 x per_tick a second):
    the forwarder sends them out of the other port, so rates, queues and busy cycles move.
    Sends fail while the link is down, which the scenarios do on purpose."""

    FRAME = bytes.fromhex('020000000002' '020000000001' '88b5') + b'DTELTRAF' * 8

    def __init__(self, iface, per_tick=1):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.s.bind((iface, 0))
        self.per_tick = per_tick
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.wait(0.005):
            for _ in range(self.per_tick):
                try:
                    self.s.send(self.FRAME)
                except OSError:
                    break

    def close(self):
        self.stop.set()
        self.thread.join(5)
        self.s.close()


def collectd_config(instance, socket_path, wp_port):
    """Both plugins on one application (per-queue counters, 20 ms polls) and
    write_prometheus on loopback port wp_port."""
    block = f'  <Instance "{instance}">\n    SocketPath "{socket_path}"\n  </Instance>\n'
    return (f'LoadPlugin dpdktel_stats\n<Plugin dpdktel_stats>\n  PerQueue true\n{block}'
            f'</Plugin>\n'
            f'LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n  PollInterval 0.02\n{block}'
            f'</Plugin>\n'
            f'LoadPlugin write_prometheus\n<Plugin write_prometheus>\n  Host "127.0.0.1"\n'
            f'  Port "{wp_port}"\n</Plugin>\n')
