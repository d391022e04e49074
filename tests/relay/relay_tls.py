#!/usr/bin/env python3
"""TLS end to end through ninf-relay (issue 43: one test per hop records its
bytes): a real ninf-relay, a real `ninfd --reverse` with a certificate of
the site CA for its relay name, and real echo calls from the C client with
NINF_TLS_CA, through a recording forwarder in front of the relay. The
client-relay hop must carry the client's RELAY_OPEN (the one frame the relay
reads) and after it TLS records only: no array pattern, no further frame
header, no key. Runs without root.

    relay_tls.py NINF_RELAY NINFD RELAY_CLIENT REGISTRY SITE_CA_SH
"""
import os
import socket
import struct
import subprocess
import sys
import threading
import time

from relay_run import Run

RELAY, NINFD, CLIENT, REGISTRY, SITE_CA = sys.argv[1:6]
RUN = Run("ninf-relay-tls-")
fail = RUN.fail
NAME = "site-tls"  # the relay name, and the DNS name of ninfd's certificate


class Recorder:
    """A TCP forwarder on 127.0.0.1 that keeps the bytes of each connection,
    each direction apart: connections[i] = (to the relay, to the client)."""

    def __init__(self, target_port):
        self.target = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            relay = socket.create_connection(("127.0.0.1", self.target))
            up, down = bytearray(), bytearray()
            self.connections.append((up, down))
            for src, dst, buf in ((client, relay, up), (relay, client, down)):
                threading.Thread(target=self.pump, args=(src, dst, buf), daemon=True).start()

    @staticmethod
    def pump(src, dst, buf):
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                buf.extend(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass


def main():
    key = "relay-tls-test-key-" + os.urandom(8).hex()
    key_file = RUN.key_file("key", key)
    for args in (["ca"], ["server", "server", NAME]):
        subprocess.run(["bash", SITE_CA, RUN.work, *args], check=True, capture_output=True)
    port = RUN.start_relay(RELAY, "--key-file", key_file)
    RUN.start([NINFD, "--reverse", "--relay", f"127.0.0.1:{port}", "--relay-name", NAME,
               "--key-file", key_file, "--tls-cert", RUN.path("server.pem"), "--tls-key",
               RUN.path("server.key"), "--registry", REGISTRY, "--unix-socket", "", "--port",
               "0", "--log-level", "debug"], "ninfd.log")
    if not RUN.wait_log("relay.log", f"event=server_registered name={NAME}", 10):
        fail("ninfd did not register")
    recorder = Recorder(port)
    env = dict(os.environ, NINF_SERVER=f"{NAME}@127.0.0.1:{recorder.port}",
               NINF_TRANSPORT="tcp", NINF_KEY_FILE=key_file,
               NINF_TLS_CA=RUN.path("ca.pem"))
    n = 1 << 16
    for count in (0, n):
        out = subprocess.run([CLIENT, str(count)], env=env, capture_output=True, text=True,
                             timeout=60)
        if out.stdout.strip() != "ok":
            fail(f"a call of {count} through the relay over TLS: {out.stdout} {out.stderr}")
    time.sleep(0.2)
    up = b"".join(bytes(u) for u, _ in recorder.connections)
    down = b"".join(bytes(d) for _, d in recorder.connections)
    if len(up) < n * 8 or len(down) < n * 8:
        fail(f"the recorder saw {len(up)} bytes up and {len(down)} down, less than the arrays")
    # The arrays: relay_client sends a[i] = i and gets it back.
    pattern = struct.pack("<4d", 1000.0, 1001.0, 1002.0, 1003.0)
    for what, data in (("client to relay", up), ("relay to client", down)):
        if pattern in data:
            fail(f"the array pattern crossed the {what} hop in clear")
        if key.encode() in data:
            fail(f"the key crossed the {what} hop")
    # Each connection begins with the one plaintext frame the relay reads
    # (RELAY_OPEN, type 43); no other frame header (magic and version) is
    # anywhere in either direction.
    magic = b"NINF\x01\x01"
    for i, (u, d) in enumerate(recorder.connections):
        u, d = bytes(u), bytes(d)
        if not u.startswith(magic) or struct.unpack("<H", u[6:8])[0] != 43:
            fail(f"connection {i} does not open with RELAY_OPEN: {u[:24]!r}")
        if u.find(magic, 1) >= 0 or magic in d:
            fail(f"connection {i}: a frame header in clear after its RELAY_OPEN")
    print(f"ok relay_tls: 2 calls over {len(recorder.connections)} connections, {len(up)} bytes "
          f"up and {len(down)} down through the relay, only each RELAY_OPEN in clear")


try:
    main()
finally:
    RUN.close()
