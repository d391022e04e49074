#!/usr/bin/env python3
"""Every complete frame a hostile client sends to ninfd gets an answer.

Starts a real ninfd (no warm executables, so that its descriptors have a
fixed baseline) and sends it, one connection each, a few hundred complete
frames built to be wrong: every frame type (requests and the ones only a
daemon or an executable sends), odd header flags, empty, random and almost
right protobuf headers, CALLs of real functions followed by no arguments,
by garbage or by the wrong frame. Each connection must read a complete
frame back (FRAME_ERROR, or the request's own reply) before the daemon
closes it, within the request timeout and a margin: never a silent close,
never a hang. Afterwards ninfd is alive, serves a good request, has no
zombie children, and its open descriptors are back where they started.
The same against a daemon with a key file, where most frames arrive before
authentication, and with warm executables (each holds a few descriptors of
its own while it waits, and nothing more stays).

    frames_answered_test.py NINFD
"""
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

REQUEST_TIMEOUT = 2  # seconds: a CALL whose arguments never begin is answered after this
# It tells "answered" from "never answered": room for a cold executable's
# start under the sanitizers on a loaded machine besides the timeout.
ANSWER_WITHIN = REQUEST_TIMEOUT + 15
CONNECTIONS = 300
FUNCTIONS = [b"null", b"echo", b"dgesv", b"ep", b"nope", b""]


def frame(ftype, body=b"", flags=1, payload=b"", payload_length=None):
    length = len(payload) if payload_length is None else payload_length
    return (b"NINF" + bytes([1, flags]) + struct.pack("<HIIQ", ftype, len(body), 0, length) +
            body + payload)


def field_bytes(number, value):  # a length-delimited protobuf field
    return bytes([number << 3 | 2, len(value)]) + value


def field_varint(number, value):
    out = bytes([number << 3])
    while True:
        byte = value & 0x7F
        value >>= 7
        out += bytes([byte | (0x80 if value else 0)])
        if not value:
            return out


def hostile_inputs(rng):
    """(description, bytes) pairs: complete frames a careless or hostile peer sends."""
    flags = [0, 1, 2, 3, 0x80, 0xFE, 0xFF]
    for _ in range(CONNECTIONS):
        kind = rng.randrange(8)
        f = rng.choice(flags)
        if kind == 0:  # any frame type, random header
            t = rng.randrange(1, 33)
            body = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 3, 8, 40])))
            yield f"type {t} random header flags {f:#x}", frame(t, body, f)
        elif kind == 1:  # almost right headers of the requests
            t = rng.choice([1, 7, 9, 13, 15, 26, 27, 29])
            body = field_bytes(1, rng.choice(FUNCTIONS)) + field_varint(2, rng.getrandbits(40))
            yield f"type {t} plausible header flags {f:#x}", frame(t, body, f)
        elif kind == 2:  # a CALL and garbage behind it
            body = field_bytes(1, rng.choice(FUNCTIONS)) + field_varint(2, 7)
            junk = bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 24, 100])))
            yield f"CALL + garbage flags {f:#x}", frame(3, body, f) + junk
        elif kind == 3:  # a CALL and the wrong frame behind it
            body = field_bytes(1, rng.choice(FUNCTIONS))
            t = rng.choice([1, 3, 5, 6, 11, 12, 13, 25, 32])
            yield f"CALL + type {t} flags {f:#x}", frame(3, body, f) + frame(t, b"", f)
        elif kind == 4:  # a CALL and an ARGS that lies about its payload
            body = field_bytes(1, rng.choice(FUNCTIONS))
            yield (f"CALL + short ARGS flags {f:#x}",
                   frame(3, body, f) + frame(4, b"", f, b"x" * 8, payload_length=8))
        elif kind == 5 and rng.random() < 0.2:  # a CALL and nothing: waits for the timeout
            body = field_bytes(1, rng.choice(FUNCTIONS[:2]))
            yield "CALL alone", frame(3, body, f)
        elif kind == 6:  # a probe whose payload is not all there is claimed
            yield (f"PROBE payload flags {f:#x}",
                   frame(16, b"", f, b"y" * rng.choice([0, 1, 16]), payload_length=16))
        else:  # AUTH and PROOF with odd contents
            t = rng.choice([13, 15])
            body = field_bytes(1, bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 8, 9]))))
            yield f"type {t} auth-like flags {f:#x}", frame(t, body, f)


def read_answer(sock):
    """The first complete frame other than a heartbeat: (type, bytes), or a failure text."""
    deadline = time.monotonic() + ANSWER_WITHIN
    data = b""
    while True:
        while len(data) >= 24:
            if data[:4] != b"NINF":
                return None, f"answer without the magic: {data[:24]!r}"
            ftype, hlen, _, plen = struct.unpack("<HIIQ", data[6:24])
            if len(data) < 24 + hlen + plen:
                break
            if ftype != 12:  # FRAME_HEARTBEAT is skipped, as clients do
                return ftype, data[24:24 + hlen]
            data = data[24 + hlen + plen:]
        left = deadline - time.monotonic()
        if left <= 0:
            return None, f"no answer within {ANSWER_WITHIN} s"
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return None, f"no answer within {ANSWER_WITHIN} s"
        except ConnectionResetError:
            return None, "reset without an answer"
        if not chunk:
            return None, f"closed without a complete answer ({len(data)} bytes)"
        data += chunk


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def zombies(pid):
    out = []
    for child in os.popen(f"ps -o pid=,stat= --ppid {pid}").read().split("\n"):
        parts = child.split()
        if len(parts) == 2 and parts[1].startswith("Z"):
            out.append(parts[0])
    return out


def children(pid):
    return [c for c in os.popen(f"ps -o pid= --ppid {pid}").read().split()]


def run(ninfd, extra, label, seed, warm=0):
    with tempfile.TemporaryDirectory() as tmp:
        ready = os.path.join(tmp, "ready")
        log = open(os.path.join(tmp, "log"), "w+")
        proc = subprocess.Popen(
            [ninfd, "--port", "0", "--ready-file", ready, "--unix-socket", "",
             "--warm-executables", str(warm), "--request-timeout-seconds", str(REQUEST_TIMEOUT),
             "--transfer-timeout-seconds", str(REQUEST_TIMEOUT)] + extra(tmp),
            stderr=log)
        try:
            deadline = time.monotonic() + 20
            while not (os.path.exists(ready) and open(ready).read().strip()):
                if time.monotonic() > deadline or proc.poll() is not None:
                    log.seek(0)
                    raise AssertionError(f"{label}: ninfd did not start: {log.read()}")
                time.sleep(0.05)
            port = int(open(ready).read())
            time.sleep(0.3)  # its start-up descriptors settle (calibration, registry)
            start_fds = open_fds(proc.pid)

            inputs = list(hostile_inputs(random.Random(seed)))
            failures = []
            lock = threading.Lock()

            def worker(items):
                for what, data in items:
                    with socket.create_connection(("127.0.0.1", port)) as s:
                        try:
                            s.sendall(data)
                        except (BrokenPipeError, ConnectionResetError):
                            pass  # the answer may already be on its way; read it
                        ftype, detail = read_answer(s)
                    if ftype is None:
                        with lock:
                            failures.append(f"{what}: {detail}")

            threads = [threading.Thread(target=worker, args=(inputs[i::8],)) for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

            if proc.poll() is not None:
                raise AssertionError(f"{label}: ninfd exited with {proc.returncode}")
            if failures:
                log.seek(0)
                tail = log.read()[-3000:]
                raise AssertionError(f"{label}: {len(failures)} of {len(inputs)} frames got no "
                                     "answer:\n  " + "\n  ".join(failures[:20]) + "\n" + tail)

            # A good request is served, and nothing is left behind.
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(frame(9))  # FRAME_LIST (refused before authentication: an answer too)
                ftype, _ = read_answer(s)
                assert ftype in (10, 6), f"{label}: LIST answered with type {ftype}"
            # Each warm executable kept (one per function called, at most)
            # holds its own few descriptors (pidfd, control socket, stderr
            # pipe); nothing else may stay.
            def allowed():
                return start_fds + 3 * len(children(proc.pid)) if warm else start_fds

            deadline = time.monotonic() + 10
            while open_fds(proc.pid) > allowed() and time.monotonic() < deadline:
                time.sleep(0.2)
            now_fds = open_fds(proc.pid)
            assert now_fds <= allowed(), (
                f"{label}: ninfd holds {now_fds} descriptors, {start_fds} before the attack "
                f"and {len(children(proc.pid))} warm executables")
            if warm:
                assert len(children(proc.pid)) <= warm * len(FUNCTIONS), children(proc.pid)
            assert not zombies(proc.pid), f"{label}: zombie children {zombies(proc.pid)}"
            print(f"{label}: {len(inputs)} hostile frames, every one answered; "
                  f"descriptors {start_fds} -> {now_fds}")
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def with_key(tmp):
    key = os.path.join(tmp, "key")
    with open(key, "w") as f:
        f.write(os.urandom(32).hex() + "\n")
    os.chmod(key, 0o600)
    return ["--key-file", key]


def main():
    ninfd = sys.argv[1]
    run(ninfd, lambda tmp: [], "without keys", 1)
    run(ninfd, with_key, "with a key file", 2)
    run(ninfd, lambda tmp: [], "with warm executables", 3, warm=1)
    print("ok")


if __name__ == "__main__":
    main()
