#!/usr/bin/env python3
"""A hostile relay against ninfd's relay link (server/relay_link.cc).

    relay_link_hostile.py NINFD

Plays ninf-relay on a free loopback port for a real `ninfd --reverse`: each
time ninfd connects and registers, it answers with a forged or oversized
FRAME_RELAY_ACK (or a frame that is no ack at all), before or after a good
registration. Each case must end that session with a log line naming the
cause (event=relay_state state=lost ... error="..."), and ninfd must stay up
and come back: the last case registers properly. Runs without root. Prints
one line per case; exits 1 on the first that fails.
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

from relay_wire import frame, recv_frame

NINFD = sys.argv[1]

FRAME_RELAY_REGISTER, FRAME_RELAY_DIAL, FRAME_RELAY_ACK = 40, 41, 44
HEADER_LIMIT = 1 << 20  # protocol/frame.h kMaxHeaderLength


def ack(keepalive_ms):
    """RelayAck{keepalive_ms = 1 (varint)}."""
    out, v = bytearray([1 << 3 | 0]), keepalive_ms
    while True:
        byte = v & 0x7F
        v >>= 7
        out.append(byte | (0x80 if v else 0))
        if not v:
            return frame(FRAME_RELAY_ACK, bytes(out))


def read_register(conn):
    """One FRAME_RELAY_REGISTER from ninfd (a registration or a keep-alive)."""
    kind, _ = recv_frame(conn, 10)
    if kind != FRAME_RELAY_REGISTER:
        raise ValueError(f"expected RELAY_REGISTER from ninfd, got frame type {kind}")


# (name, registered first, what the relay sends, what ninfd's log must say)
CASES = [
    ("ack_header_over_limit", False, frame(FRAME_RELAY_ACK, header_length=HEADER_LIMIT + 1),
     f"frame header of {HEADER_LIMIT + 1} bytes is over the limit"),
    ("ack_with_payload", False, frame(FRAME_RELAY_ACK, b"\x08\x64", payload_length=1 << 40),
     f"frame payload of {1 << 40} bytes is over the limit of 0"),
    ("ack_forged_body", False, frame(FRAME_RELAY_ACK, b"\xff\xff\xff\xff"),
     "malformed RELAY_ACK header"),
    ("dial_instead_of_ack", False, frame(FRAME_RELAY_DIAL, b""),
     "expected RELAY_ACK, peer sent RELAY_DIAL"),
    ("unknown_frame_type", False, frame(999, b""), "unknown frame type 999"),
    # No relay asks for more than a third of its longest idle timeout (24 h);
    # this period did not fit the session's poll timeout (a 1 ms busy loop).
    ("ack_keepalive_over_limit", False, ack(0xFFFFFFFF),
     "the relay's keepalive_ms 4294967295 is over the limit of 28800000"),
    ("keepalive_ack_over_limit", True, frame(FRAME_RELAY_ACK, header_length=0xFFFFFFFF),
     "frame header of 4294967295 bytes is over the limit"),
    ("keepalive_ack_forged_body", True, frame(FRAME_RELAY_ACK, b"\x08"),
     "malformed RELAY_ACK header"),
]


def log_has(path, text, start):
    with open(path, errors="replace") as f:
        f.seek(start)
        return [line for line in f if text in line]


def wait_log(path, text, start, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        lines = log_has(path, text, start)
        if lines:
            return lines
        time.sleep(0.05)
    return []


def fail(why, log):
    print(f"relay_link_hostile: FAIL: {why}")
    with open(log, errors="replace") as f:
        sys.stdout.write("".join(f.readlines()[-20:]))
    sys.exit(1)


def run_case(listener, proc, log, case):
    name, registered, reply, text = case
    start = os.path.getsize(log)
    listener.settimeout(15)  # ninfd's back-off reaches 5 s
    conn, _ = listener.accept()
    conn.settimeout(10)
    with conn:
        read_register(conn)
        if registered:
            conn.sendall(ack(100))
            if not wait_log(log, "state=registered", start, 5):
                fail(f"{name}: ninfd did not register", log)
            read_register(conn)  # a keep-alive: the session's loop runs
        conn.sendall(reply)
        lost = wait_log(log, "event=relay_state state=lost", start, 5)
    if not lost:
        fail(f"{name}: ninfd did not end the session", log)
    if text not in lost[0]:
        fail(f"{name}: expected {text!r} in {lost[0].strip()!r}", log)
    if proc.poll() is not None:
        fail(f"{name}: ninfd exited with status {proc.returncode}", log)
    print(f"ok {name}: {lost[0].split('error=', 1)[-1].split(' retry_ms=')[0]}")


def main():
    work = tempfile.mkdtemp(prefix="ninf-relay-link-")
    log = os.path.join(work, "ninfd.log")
    registry = os.path.join(work, "registry")
    os.mkdir(registry)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [NINFD, "--reverse", "--relay", f"127.0.0.1:{port}", "--relay-name", "hostile",
             "--registry", registry, "--unix-socket", "", "--log-level", "debug"],
            stdout=out, stderr=out)
    try:
        for case in CASES:
            run_case(listener, proc, log, case)
        # After all of them, a relay that behaves is registered with again,
        # at the longest keep-alive period a relay asks for.
        start = os.path.getsize(log)
        conn, _ = listener.accept()
        with conn:
            read_register(conn)
            conn.sendall(ack(28800000))
            if not wait_log(log, "state=registered", start, 5):
                fail("ninfd did not register with a relay that behaves", log)
            if not log_has(log, "keepalive_ms=28800000", start):
                fail("ninfd did not take the longest keep-alive period", log)
        print("ok recovered: registered again")
    finally:
        proc.terminate()
        try:
            status = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            fail("ninfd did not stop on SIGTERM", log)
    if status != 0:
        fail(f"ninfd exited with status {status} on SIGTERM", log)
    subprocess.run(["rm", "-rf", work], check=False)


if __name__ == "__main__":
    main()
