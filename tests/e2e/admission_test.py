#!/usr/bin/env python3
"""Admission after arrival (docs/server.md, "Admission after arrival"), black box.

Starts a real ninfd and speaks the wire protocol on raw sockets, so that a
client can send its arguments as slowly as a WAN link would:

1. slow_does_not_block: with --slots 1, a call of `echo` whose arguments
   stop short of their end (the rest waits for a signal) does not delay a
   small call that arrives complete: the small call's result comes back
   while the slow call is still arriving. The slow client sends its last
   piece only once the small call is done (or after WAIT seconds), so
   under the old order (--admission start: the slow call takes the only
   slot at its first byte) the small call cannot finish: the check fails
   instead of measuring a time.
2. bounded: 64 slow clients at once under arrival_limit / arrival_bytes:
   the calls and bytes ninfd's --status shows as held stay within the
   bounds at every sample, calls beyond them wait before their hand-off
   (arrival_waiting > 0 seen), all 64 results are right, and afterwards
   ninfd has no more executables than its pool keeps, no zombies, and its
   descriptors back.

    admission_test.py NINFD [--admission start | --old-code]
        (check 1 alone, expected to fail: under the old order, or against a
        ninfd from before admission after arrival, which has no such setting)
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

WAIT = 10  # seconds the slow client waits for the small call before giving up
FRAME_CALL, FRAME_ARGS, FRAME_RESULT, FRAME_ERROR, FRAME_HEARTBEAT = 3, 4, 5, 6, 12


def frame(ftype, body=b"", payload_length=0):
    return b"NINF" + bytes([1, 1]) + struct.pack("<HIIQ", ftype, len(body), 0,
                                                  payload_length) + body


def varint(value):
    out = b""
    while True:
        byte = value & 0x7F
        value >>= 7
        out += bytes([byte | (0x80 if value else 0)])
        if not value:
            return out


def call_frame(name, call_id):
    # CallRequest: name = 1, call_id = 2, heartbeat_ms = 4 (heartbeats while it waits)
    body = (bytes([0x0A]) + varint(len(name)) + name + bytes([0x10]) + varint(call_id) +
            bytes([0x20]) + varint(200))
    return frame(FRAME_CALL, body)


def echo_args(n):
    """The ARGS frame header of echo(IN long n, INOUT double a[n]) and its payload."""
    value = bytes([0x08]) + varint(2 * n)  # Value.i, sint64 (zigzag)
    body = bytes([0x0A]) + varint(len(value)) + value  # Args.scalars
    payload = struct.pack(f"<{n}d", *[float(i % 977) + 0.5 for i in range(n)])
    return frame(FRAME_ARGS, body, len(payload)), payload


def read_result(sock, timeout):
    """The RESULT's payload, or raises with what came instead."""
    deadline = time.monotonic() + timeout
    data = b""
    while True:
        while len(data) >= 24:
            assert data[:4] == b"NINF", f"answer without the magic: {data[:24]!r}"
            ftype, hlen, _, plen = struct.unpack("<HIIQ", data[6:24])
            if len(data) < 24 + hlen + plen:
                break
            if ftype == FRAME_RESULT:
                return data[24 + hlen:24 + hlen + plen]
            if ftype != FRAME_HEARTBEAT:
                raise AssertionError(f"frame type {ftype} instead of a result: "
                                     f"{data[24:24 + hlen]!r}")
            data = data[24 + hlen + plen:]
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no result within {timeout} s")
        sock.settimeout(left)
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise AssertionError(f"closed without a result ({len(data)} bytes)")
        data += chunk


class Ninfd:
    def __init__(self, ninfd, tmp, args):
        self.ninfd = ninfd
        ready = os.path.join(tmp, "ready")
        self.log = open(os.path.join(tmp, "log"), "w+")
        self.proc = subprocess.Popen(
            [ninfd, "--port", "0", "--ready-file", ready, "--unix-socket", ""] + args,
            stderr=self.log)
        deadline = time.monotonic() + 20
        while not (os.path.exists(ready) and open(ready).read().strip()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"ninfd did not start: {self.tail()}")
            time.sleep(0.05)
        self.port = int(open(ready).read())

    def tail(self):
        self.log.seek(0)
        return self.log.read()[-4000:]

    def status(self):
        out = subprocess.run([self.ninfd, "--status", "--server", f"127.0.0.1:{self.port}"],
                             capture_output=True, text=True, timeout=10).stdout
        return dict(line.split(":", 1) for line in out.splitlines() if ":" in line)

    def connect(self):
        return socket.create_connection(("127.0.0.1", self.port))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def expected(n):
    return struct.pack(f"<{n}d", *[float(i % 977) + 0.5 for i in range(n)])


def slow_does_not_block(ninfd, admission):
    with tempfile.TemporaryDirectory() as tmp:
        d = Ninfd(ninfd, tmp,
                  ["--slots", "1"] + (["--admission", admission] if admission else []))
        try:
            small_done = threading.Event()
            outcome = {}

            def slow():
                n = 1 << 18  # 2 MiB: more than the socket buffers take at once
                header, payload = echo_args(n)
                with d.connect() as s:
                    s.sendall(call_frame(b"echo", 1) + header)
                    s.sendall(payload[:len(payload) // 2])
                    outcome["slow_started"] = True
                    # The rest comes only once the small call is done.
                    outcome["small_first"] = small_done.wait(WAIT)
                    s.sendall(payload[len(payload) // 2:])
                    outcome["slow_ok"] = read_result(s, 30) == payload

            t = threading.Thread(target=slow)
            t.start()
            time.sleep(0.5)  # the slow call is arriving (or holds the slot)
            with d.connect() as s:
                header, payload = echo_args(16)
                s.sendall(call_frame(b"echo", 2) + header + payload)
                try:
                    ok = read_result(s, WAIT + 5) == expected(16)
                finally:
                    small_done.set()
            t.join()
            assert ok, "the small call's result is wrong"
            assert outcome.get("small_first"), (
                f"admission = {admission or 'old code'}: the small call did not finish while the slow "
                f"call's arguments were arriving (waited {WAIT} s)\n{d.tail()}")
            assert outcome.get("slow_ok"), "the slow call's result is wrong"
            print(f"slow_does_not_block (admission = {admission}): the small call finished "
                  "while the slow one was arriving")
        finally:
            d.stop()


def children(pid):
    return os.popen(f"ps -o pid= --ppid {pid}").read().split()


def zombies(pid):
    out = []
    for child in os.popen(f"ps -o pid=,stat= --ppid {pid}").read().split("\n"):
        parts = child.split()
        if len(parts) == 2 and parts[1].startswith("Z"):
            out.append(parts[0])
    return out


def bounded(ninfd):
    clients, n = 64, 1 << 16  # 512 KiB of arguments each
    limit_calls, limit_bytes = 16, 4 << 20  # room for 7 such calls by their bytes
    with tempfile.TemporaryDirectory() as tmp:
        d = Ninfd(ninfd, tmp, ["--slots", "2", "--arrival-limit", str(limit_calls),
                               "--arrival-bytes", str(limit_bytes),
                               "--client-arrival-limit", "0",
                               "--client-arrival-bytes", str(limit_bytes)])
        try:
            # One call first, so that the pool's executable is there when
            # the descriptors are counted.
            with d.connect() as s:
                header, payload = echo_args(16)
                s.sendall(call_frame(b"echo", 1) + header + payload)
                assert read_result(s, 10) == expected(16)
            time.sleep(0.5)
            start_fds = len(os.listdir(f"/proc/{d.proc.pid}/fd"))
            start_children = len(children(d.proc.pid))

            results, failures, samples = [], [], []
            lock = threading.Lock()
            done = threading.Event()

            def client(i):
                try:
                    header, payload = echo_args(n)
                    with d.connect() as s:
                        s.sendall(call_frame(b"echo", 100 + i) + header)
                        piece = len(payload) // 4
                        for k in range(4):  # a slow link: four pieces, 0.1 s apart
                            s.sendall(payload[k * piece:(k + 1) * piece])
                            time.sleep(0.1)
                        ok = read_result(s, 60) == payload
                    with lock:
                        results.append(ok)
                except Exception as e:  # noqa: BLE001 (reported below)
                    with lock:
                        failures.append(f"client {i}: {e}")

            def sampler():
                while not done.is_set():
                    st = d.status()
                    if st:
                        samples.append(st)
                    time.sleep(0.05)

            sample_thread = threading.Thread(target=sampler)
            sample_thread.start()
            threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            done.set()
            sample_thread.join()

            assert not failures, "\n".join(failures[:10]) + "\n" + d.tail()
            assert len(results) == clients and all(results), (
                f"{results.count(False)} wrong results of {len(results)}")
            held = [int(s["arrival_held_bytes"]) for s in samples]
            held_calls = [int(s["arrival_held"]) for s in samples]
            waiting = [int(s["arrival_waiting"]) for s in samples]
            assert samples, "no --status sample"
            # A call that gave its slot back while its result goes out
            # (release_slot = "computed") counts again over the bound: at most
            # `slots` such calls.
            slots, call_bytes = 2, 24 + 64 + 8 * n
            assert max(held) <= limit_bytes + slots * call_bytes, (
                f"arrival_held_bytes {max(held)} > {limit_bytes} + {slots} calls")
            assert max(held_calls) <= limit_calls + slots, f"arrival_held {max(held_calls)}"
            assert max(waiting) > 0, (
                f"no call waited before its hand-off in {len(samples)} samples "
                f"(held at most {max(held)} bytes)")
            assert max(held) > 0, "no call was seen arriving"
            # Nothing left: executables back to what the pool keeps, the
            # descriptors with them, no zombies.
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                kids = children(d.proc.pid)
                fds = len(os.listdir(f"/proc/{d.proc.pid}/fd"))
                if len(kids) <= max(start_children, 2) and fds <= start_fds + 3 * (
                        len(kids) - start_children):
                    break
                time.sleep(0.2)
            kids = children(d.proc.pid)
            fds = len(os.listdir(f"/proc/{d.proc.pid}/fd"))
            assert len(kids) <= max(start_children, 2), f"executables left: {kids}"
            assert fds <= start_fds + 3 * max(0, len(kids) - start_children), (
                f"ninfd holds {fds} descriptors, {start_fds} before")
            assert not zombies(d.proc.pid), zombies(d.proc.pid)
            # ninfd books a call when its executable reports, after the
            # client has its result: wait for the books to close.
            def settled(st):
                return (st["completed"] == str(clients + 1) and st["running"] == "0"
                        and st["arrival_held"] == "0" and st["arriving"] == "0")
            deadline = time.monotonic() + 10
            while not settled(st := d.status()) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert st["arrival_held"] == "0" and st["arrival_waiting"] == "0", st
            # The slots' account is whole again (release_slot = "computed"
            # gives them back before the result is out, once).
            assert st["running"] == "0" and st["threads_held"] == "0", st
            assert st["queued"] == "0" and st["held"] == "0" and st["arriving"] == "0", st
            assert st["completed"] == str(clients + 1), st["completed"]
            print(f"bounded: {clients} slow clients, all right; held at most {max(held)} bytes "
                  f"(bound {limit_bytes}) and {max(held_calls)} calls (bound {limit_calls}), "
                  f"up to {max(waiting)} waiting before their hand-off, {len(samples)} samples")
        finally:
            d.stop()


def main():
    ninfd = sys.argv[1]
    if sys.argv[2:] == ["--admission", "start"]:
        slow_does_not_block(ninfd, "start")  # expected to fail: the old order
        return
    if sys.argv[2:] == ["--old-code"]:
        slow_does_not_block(ninfd, None)  # expected to fail: the old code
        return
    slow_does_not_block(ninfd, "arrival")
    bounded(ninfd)


if __name__ == "__main__":
    main()
