#!/usr/bin/env python3
"""Hostile peers against a running ninf-relay (tests/relay/relay_netns.sh).

    relay_hostile.py HOST PORT CLIENT_KEY_FILE

Each case connects afresh, misbehaves, and checks that the relay answers
with a FRAME_ERROR naming the cause (or, for a peer that sends nothing or
half a frame, closes the connection within its request timeout). Prints one
line per case; exits 1 on the first case that fails.
"""
import hashlib
import os
import socket
import struct
import sys
import time

from relay_wire import field, frame

HOST, PORT, CLIENT_KEY = sys.argv[1], int(sys.argv[2]), sys.argv[3]

FRAME_ERROR, FRAME_AUTH = 6, 13
FRAME_RELAY_REGISTER, FRAME_RELAY_DATA, FRAME_RELAY_OPEN = 40, 42, 43


def connect():
    s = socket.create_connection((HOST, PORT), timeout=5)
    return s


def read_reply(s, seconds=5.0):
    """The relay's answer: ('error', text), ('closed', None) or ('frame', type)."""
    s.settimeout(seconds)
    data = b""
    try:
        while len(data) < 24:
            chunk = s.recv(24 - len(data))
            if not chunk:
                return ("closed", None)
            data += chunk
    except ConnectionResetError:
        return ("closed", None)
    kind, length = struct.unpack("<H", data[6:8])[0], struct.unpack("<I", data[8:12])[0]
    body = b""
    while len(body) < length:
        chunk = s.recv(length - len(body))
        if not chunk:
            break
        body += chunk
    if kind == FRAME_ERROR:  # Error{code = 1 (varint), message = 2}: the message
        at = body.find(b"\x12")
        return ("error", body[at + 2:].decode("utf-8", "replace") if at >= 0 else "")
    return ("frame", kind)


def expect_error(name, payload, text):
    s = connect()
    s.sendall(payload)
    kind, what = read_reply(s)
    s.close()
    if kind != "error" or text not in what:
        print(f"FAIL {name}: expected an error with {text!r}, got {kind} {what!r}")
        sys.exit(1)
    print(f"ok {name}: {what.strip()!r}")


def expect_closed(name, payload, within):
    s = connect()
    s.sendall(payload)
    start = time.monotonic()
    s.settimeout(within + 2)
    try:
        while True:
            if not s.recv(4096):
                break
    except (ConnectionResetError, socket.timeout) as e:
        if isinstance(e, socket.timeout):
            print(f"FAIL {name}: still open after {within + 2} s")
            sys.exit(1)
    took = time.monotonic() - start
    s.close()
    if took > within:
        print(f"FAIL {name}: closed after {took:.1f} s, more than {within} s")
        sys.exit(1)
    print(f"ok {name}: closed after {took:.1f} s")


def key_id(path):
    secret = open(path).read().strip().encode()
    return hashlib.sha256(b"ninf-auth-v1 key id\0" + secret).digest()[:8]


expect_error("garbage", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "magic")
expect_error("unknown server", frame(FRAME_RELAY_OPEN, field(1, b"nobody")),
             "no server named 'nobody' is registered")
expect_error("bad server name", frame(FRAME_RELAY_OPEN, field(1, b"bad name!")), "server name")
expect_error("oversized header", frame(FRAME_RELAY_OPEN, header_length=1 << 20), "")
# A dial-back proves the registering server's key before its token counts
# (tests/relay/relay_identity.py has the token of a real dial).
expect_error("bogus dial token", frame(FRAME_RELAY_DATA, field(1, os.urandom(32))),
             "this relay requires authentication")
# Told to the ninfd that registers, naming ninfd's own setting (issue 31),
# not the client's "give the client the server's key".
expect_error("register without a key", frame(FRAME_RELAY_REGISTER, field(1, b"site-b")),
             "this relay requires authentication: ninfd proves itself with the first key of "
             "its own key_file")
expect_error("register with a client's key",
             frame(FRAME_AUTH, field(1, key_id(CLIENT_KEY)) + field(2, os.urandom(32))),
             "authentication failed")
expect_closed("silent client", b"", within=4)
expect_closed("half a frame", frame(FRAME_RELAY_OPEN, field(1, b"site-b"))[:10], within=4)
