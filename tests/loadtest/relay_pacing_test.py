#!/usr/bin/env python3
"""ninf-linkdelay --rate: each direction is one link of that rate, which the
connections share fairly. Sixteen connections send as fast as they can
through a relay paced at 16 Mbit/s (then sixteen receive as fast as a server
sends): the link carries its rate, no connection gets much more than another,
and none waits long for its turn (tc's tail-drop queue let one of sixteen
stall for a minute, and its call was lost). On loopback, real processes.

    relay_pacing_test.py NINF_LINKDELAY
"""
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

RATE_BYTES = 2_000_000  # 16mbit
FLOWS = 16
SECONDS = 5.0
CHUNK = 16 << 10


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Meter:
    """Per connection: (time, bytes) of each read."""

    def __init__(self):
        self.lock = threading.Lock()
        self.events = {}

    def add(self, key, n):
        now = time.monotonic()
        with self.lock:
            self.events.setdefault(key, []).append((now, n))

    def span(self, start, end):
        """{connection: [(time, bytes)]} of the reads between start and end."""
        with self.lock:
            return {k: [(t, n) for t, n in v if start <= t <= end] for k, v in self.events.items()}


def drain(sock, meter, key, until):
    sock.settimeout(0.2)
    while time.monotonic() < until:
        try:
            data = sock.recv(1 << 16)
        except socket.timeout:
            continue
        except OSError:
            return
        if not data:
            return
        meter.add(key, len(data))


def blast(sock, until):
    block = b"x" * CHUNK
    sock.settimeout(0.5)
    while time.monotonic() < until:
        try:
            sock.send(block)
        except socket.timeout:
            continue
        except OSError:
            return


def run(relay_port, target, upload):
    """FLOWS connections through the relay; with `upload` the clients send and
    the target receives, otherwise the target sends. Returns the meter of the
    receiving side's reads over the measured span, and its start."""
    meter = Meter()
    accepted = []
    stop = time.monotonic() + 1.0 + SECONDS + 1.0
    start_measure = time.monotonic() + 1.0  # the first second fills the queues
    clients = []
    for _ in range(FLOWS):
        c = socket.create_connection(("127.0.0.1", relay_port))
        s, _ = target.accept()
        clients.append(c)
        accepted.append(s)
    threads = []
    for i, (c, s) in enumerate(zip(clients, accepted)):
        sender, receiver = (c, s) if upload else (s, c)
        threads.append(threading.Thread(target=blast, args=(sender, stop), daemon=True))
        threads.append(threading.Thread(target=drain, args=(receiver, meter, i, stop), daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=SECONDS + 10)
    for sock in clients + accepted:
        sock.close()
    return meter.span(start_measure, start_measure + SECONDS), start_measure


def check(name, reads, start):
    """What failed of the link's rate, its fairness and the waits for a turn."""
    end = start + SECONDS
    per = [sum(n for _, n in reads.get(k, [])) for k in range(FLOWS)]
    rate = sum(per) / SECONDS
    gaps = []
    for key in range(FLOWS):
        times = [start] + [t for t, _ in reads.get(key, [])] + [end]
        gaps.append(max(b - a for a, b in zip(times, times[1:])))
    ratio = max(per) / max(1, min(per))
    print(f"{name}: {rate / 1e6:.2f} MB/s over {SECONDS:.0f} s; bytes per connection "
          f"{min(per)}-{max(per)} (max/min {ratio:.2f}); longest wait for a turn {max(gaps):.2f} s")
    failures = []
    if not 0.8 * RATE_BYTES <= rate <= 1.1 * RATE_BYTES:
        failures.append(f"{name}: the link carried {rate / 1e6:.2f} MB/s, not about "
                        f"{RATE_BYTES / 1e6:.1f}")
    if ratio > 1.5:
        failures.append(f"{name}: one connection got {ratio:.2f}x another's bytes")
    if max(gaps) > 1.5:
        failures.append(f"{name}: a connection waited {max(gaps):.2f} s for its turn "
                        f"(sixteen turns of 64 KiB take 0.5 s)")
    return failures


def main():
    linkdelay = sys.argv[1]
    target = socket.socket()
    target.bind(("127.0.0.1", 0))
    target.listen(64)
    relay_port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        ready = os.path.join(tmp, "ready")
        relay = subprocess.Popen([linkdelay, "--listen", f"127.0.0.1:{relay_port}", "--to",
                                  f"127.0.0.1:{target.getsockname()[1]}", "--delay-ms", "5",
                                  "--rate", "16mbit", "--ready-file", ready])
        try:
            for _ in range(200):
                if os.path.exists(ready):
                    break
                time.sleep(0.02)
            else:
                sys.exit("ninf-linkdelay did not start")
            failures = []
            for name, upload in (("toward the target", True), ("toward the clients", False)):
                reads, start = run(relay_port, target, upload)
                failures += check(name, reads, start)
            bad = subprocess.run([linkdelay, "--listen", "127.0.0.1:1", "--to", "127.0.0.1:2",
                                  "--rate", "fast"], capture_output=True, text=True)
            if bad.returncode != 2 or "is not a rate like 20mbit" not in bad.stderr:
                failures.append(f"--rate fast: exit {bad.returncode}, {bad.stderr!r}")
        finally:
            relay.terminate()
            relay.wait(timeout=10)
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
