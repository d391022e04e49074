#!/usr/bin/env python3
"""TLS end to end through ninf-relay, and on ninfd's control connection to
it (issue 43: one test per hop records its bytes): a real ninf-relay with a
certificate of the site CA, a real `ninfd --reverse` with one for its relay
name and tls_ca, and real echo calls from the C client with NINF_TLS_CA,
through recording forwarders in front of the relay, one for the client and
one for ninfd. Recorded:
  client-relay   the client's RELAY_OPEN (the one frame the relay reads),
                 then TLS records only: no array, no further frame, no key;
  ninfd-relay    the control connection is TLS from its first byte: no frame
                 header, no relay name, no key; each dial-back carries its
                 key handshake and RELAY_DATA, then TLS records only.
Then the refusals, each naming what to set: a ninfd without tls_ca at the
TLS relay and a ninfd with tls_ca at a plaintext relay both exit 2 at their
start; a RELAY_OPEN inside TLS is refused (the bridge moves raw bytes).
Runs without root.

    relay_tls.py NINF_RELAY NINFD RELAY_CLIENT REGISTRY SITE_CA_SH
"""
import os
import signal
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time

from relay_run import Run
from relay_wire import field, frame, recv_frame

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


MAGIC = b"NINF\x01\x01"
FRAME_AUTH, FRAME_CHALLENGE, FRAME_PROOF, FRAME_ERROR = 13, 14, 15, 6
FRAME_RELAY_DATA, FRAME_RELAY_OPEN = 42, 43


def frame_types(data):
    """The types of the frame headers found in `data`, in order."""
    out, i = [], data.find(MAGIC)
    while i >= 0:
        out.append(struct.unpack("<H", data[i + 6:i + 8])[0])
        i = data.find(MAGIC, i + 1)
    return out


def ninfd_args(relay_port, *extra):
    return [NINFD, "--reverse", "--relay", f"127.0.0.1:{relay_port}", "--relay-name", NAME,
            "--tls-cert", RUN.path("server.pem"), "--tls-key", RUN.path("server.key"),
            "--registry", REGISTRY, "--unix-socket", "", "--port", "0", "--log-level", "debug",
            *extra]


def check_server_hop(recorder, key):
    """ninfd's connections to the relay: the control connection first (TLS
    from its first byte), then one dial-back per call."""
    control_up, control_down = (bytes(b) for b in recorder.connections[0])
    if not control_up.startswith(b"\x16\x03"):
        fail(f"the control connection does not open with a TLS record: {control_up[:16]!r}")
    for what, data in (("up", control_up), ("down", control_down)):
        for secret, name in ((MAGIC, "a frame header"), (NAME.encode(), "the relay name"),
                             (key.encode(), "the key")):
            if secret in data:
                fail(f"the control connection ({what}) carries {name} in clear")
    dials = recorder.connections[1:]
    if not dials:
        fail("no dial-back went through the recorder")
    pattern = struct.pack("<4d", 1000.0, 1001.0, 1002.0, 1003.0)
    for i, (u, d) in enumerate(dials):
        u, d = bytes(u), bytes(d)
        if frame_types(u) != [FRAME_AUTH, FRAME_PROOF, FRAME_RELAY_DATA]:
            fail(f"dial-back {i} up: frames {frame_types(u)}, not the key handshake and "
                 f"RELAY_DATA alone")
        if frame_types(d) != [FRAME_CHALLENGE]:
            fail(f"dial-back {i} down: frames {frame_types(d)}, not the challenge alone")
        if pattern in u or pattern in d or key.encode() in u or key.encode() in d:
            fail(f"dial-back {i}: an array or the key in clear")
    return len(control_up) + len(control_down), len(dials)


def check_refusals(tls_port, plain_port, key_file):
    """Each mismatch stops ninfd at its start, saying what to set; a
    RELAY_OPEN inside TLS is refused."""
    for label, port, extra, words in (
            ("no tls_ca at a TLS relay", tls_port, [], "set tls_ca in ninfd's settings"),
            ("tls_ca at a plaintext relay", plain_port, ["--tls-ca", RUN.path("ca.pem")],
             "give ninf-relay tls_cert and tls_key")):
        log = f"refused-{port}-{len(extra)}.log"
        proc = RUN.start(ninfd_args(port, "--key-file", key_file, *extra), log)
        try:
            status = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            fail(f"{label}: ninfd kept running")
        text = RUN.log_text(log)
        if status != 2 or words not in text:
            fail(f"{label}: exit status {status}, log: {text[-500:]!r}")
        print(f"ok {label}: exit 2, '{words}'")
    ctx = ssl.create_default_context(cafile=RUN.path("ca.pem"))
    with socket.create_connection(("127.0.0.1", tls_port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            s.sendall(frame(FRAME_RELAY_OPEN, field(1, NAME.encode())))
            kind, body = recv_frame(s)
            if kind != FRAME_ERROR or b"comes in plaintext" not in body:
                fail(f"a RELAY_OPEN inside TLS: frame {kind} {body!r}")
    print("ok a RELAY_OPEN inside TLS is refused")


def check_tls_reload(relay_proc, port):
    """SIGHUP reads the TLS files again; a broken certificate keeps the
    context in use: logged once as failed, never as applied, and the relay
    still answers TLS with the certificate it had."""
    with open(RUN.path("relay.pem"), "rb") as f:
        good = f.read()
    with open(RUN.path("relay.pem"), "w") as f:
        f.write("not a certificate\n")
    try:
        relay_proc.send_signal(signal.SIGHUP)
        if not RUN.wait_log("relay.log", "event=reload_failed settings=tls", 10):
            fail("a broken certificate on SIGHUP was not reported")
        if not RUN.wait_log("relay.log", "event=settings_reloaded", 10):
            fail("the reload did not finish")
        if any("applied=" in l and "tls_cert" in l.split("applied=")[1]
               for l in RUN.log_text("relay.log").splitlines()
               if "event=settings_reloaded" in l):
            fail("a failed TLS reload was logged as applied")
        ctx = ssl.create_default_context(cafile=RUN.path("ca.pem"))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            # Verified for 127.0.0.1 by the site CA: the certificate it had.
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                if not s.getpeercert():
                    fail("after the failed reload the relay shows no certificate")
    finally:
        with open(RUN.path("relay.pem"), "wb") as f:
            f.write(good)
    print("ok a broken certificate on SIGHUP keeps the one in use, and says so once")


def main():
    key = "relay-tls-test-key-" + os.urandom(8).hex()
    key_file = RUN.key_file("key", key)
    for args in (["ca"], ["server", "server", NAME], ["server", "relay", "127.0.0.1"]):
        subprocess.run(["bash", SITE_CA, RUN.work, *args], check=True, capture_output=True)
    port = RUN.start_relay(RELAY, "--key-file", key_file, "--tls-cert", RUN.path("relay.pem"),
                           "--tls-key", RUN.path("relay.key"))
    server_recorder = Recorder(port)
    RUN.start(ninfd_args(server_recorder.port, "--key-file", key_file, "--tls-ca",
                         RUN.path("ca.pem")), "ninfd.log")
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
    control_bytes, dials = check_server_hop(server_recorder, key)
    print(f"ok ninfd-relay hop: the control connection is TLS throughout ({control_bytes} "
          f"bytes), {dials} dial-backs carry only their key handshake and RELAY_DATA in clear")
    check_tls_reload(RUN.procs[0], port)
    plain = Run("ninf-relay-plain-")
    try:
        plain_port = plain.start_relay(RELAY, "--key-file", key_file)
        check_refusals(port, plain_port, key_file)
    finally:
        plain.close()


try:
    main()
finally:
    RUN.close()
