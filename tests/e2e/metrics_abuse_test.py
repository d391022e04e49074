#!/usr/bin/env python3
"""The metrics endpoint against hostile and careless peers (issue 28, H10).

1. Slow clients that send one header line at a time (16 of them, from
   another loopback address than the scraper's) do not block a scrape: each
   scrape is answered within a second or two while they trickle, and their
   address holds no more than its share of the endpoint (a fresh request
   from it is closed unanswered).
2. A second ninfd, and a ninf-meta, given a metrics port already in use fail
   to start with a message naming it (no SO_REUSEPORT: a scraper must never
   alternate between two daemons).

    metrics_abuse_test.py NINFD NINF_META
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from metrics_test import free_port, wait_for

SLOW_CLIENTS = 16
# The slow clients' address. A trickling client keeps its connection alive
# (libmicrohttpd's timeout is one of idleness), so what bounds them is the
# per-address cap (8, daemon/metrics_endpoint.h): an abuser fills its own
# address's share and no other. A scraper sharing the abuser's address would
# be refused with it (the endpoint replaces no connection), which is why the
# abuser here comes from 127.0.0.2 (Linux routes all of 127/8 to loopback)
# and the scraper from 127.0.0.1, as a remote abuser and a scraper would.
SLOW_ADDRESS = "127.0.0.2"


def scrape(port, timeout):
    """(status, seconds) of GET /metrics; status None when it failed."""
    start = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as r:
            r.read()
            return r.status, time.monotonic() - start
    except OSError:
        return None, time.monotonic() - start


def trickle(port, stop):
    """Slow clients: a request line, then one header line every 0.3 s;
    a client cut off connects again."""
    socks = []
    n = 0
    while not stop.is_set():
        while len(socks) < SLOW_CLIENTS:
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=2,
                                             source_address=(SLOW_ADDRESS, 0))
                s.sendall(b"GET /metrics HTTP/1.1\r\n")
                socks.append(s)
            except OSError:
                time.sleep(0.05)
        n += 1
        for s in list(socks):
            try:
                s.sendall(f"X-Slow-{n}: 1\r\n".encode())
            except OSError:
                socks.remove(s)
                s.close()
        time.sleep(0.3)
    for s in socks:
        s.close()


def refused_from_slow_address(port):
    """True when a whole request from SLOW_ADDRESS gets no response: its
    address has used up its connections."""
    with socket.create_connection(("127.0.0.1", port), timeout=3,
                                  source_address=(SLOW_ADDRESS, 0)) as s:
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            return s.recv(64) == b""
        except OSError:  # reset: closed unanswered too
            return True


def main():
    ninfd, ninf_meta = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="ninf-metrics-abuse-")
    procs = []
    try:
        port = free_port()
        ready = os.path.join(work, "ninfd.ready")
        procs.append(subprocess.Popen(
            [ninfd, "--port", "0", "--ready-file", ready, "--metrics", str(port)],
            stderr=open(os.path.join(work, "ninfd.log"), "w")))
        wait_for("ninfd", lambda: os.path.exists(ready) or None)
        status, _ = scrape(port, 5)
        assert status == 200, f"quiet scrape: {status}"

        stop = threading.Event()
        slow = threading.Thread(target=trickle, args=(port, stop), daemon=True)
        slow.start()
        time.sleep(1.5)  # the slow clients hold every connection they can
        worst = 0.0
        try:
            for i in range(5):
                status, seconds = scrape(port, 5)
                assert status == 200, f"scrape {i} under {SLOW_CLIENTS} slow clients: {status}"
                worst = max(worst, seconds)
                time.sleep(0.5)
            assert refused_from_slow_address(port), \
                f"{SLOW_ADDRESS} opened more than its share of connections"
        finally:
            stop.set()
            slow.join()
        assert worst < 3, f"a scrape under slow clients took {worst:.2f} s"

        # The port is taken: a second daemon must refuse to start.
        for program, name in ((ninfd, "ninfd"), (ninf_meta, "ninf-meta")):
            log = os.path.join(work, name + "-second.log")
            second = subprocess.run(
                [program, "--port", "0", "--metrics", str(port)],
                stderr=open(log, "w"), timeout=20)
            text = open(log).read()
            assert second.returncode != 0, f"a second {name} on metrics port {port} started"
            assert "metrics" in text and "in use" in text, text
        status, _ = scrape(port, 5)
        assert status == 200, f"scrape after the second daemons: {status}"
        print(f"metrics_abuse_test: worst scrape under {SLOW_CLIENTS} slow clients "
              f"{worst:.3f} s; second daemons refused the port")
        return 0
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
