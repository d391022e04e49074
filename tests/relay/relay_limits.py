#!/usr/bin/env python3
"""The relay's own bookkeeping against a keyless ninf-relay on loopback,
playing the reverse server by hand (tests/relay/relay_netns.sh).

    relay_limits.py PORT

The relay runs with max_servers 3, max_pending_dials 2 and
dial_timeout_seconds 1. Checked: a server that never dials back gets its
clients a timeout error, and its tokens expire; clients over
max_pending_dials and names over max_servers are refused naming the
setting; a dial-back with a good token is bridged (bytes both ways, a
half-close passed on) and the token is good once. Exits 1 on the first
failure.
"""
import os
import socket
import sys
import time

from relay_wire import field, frame, recv_exact, recv_frame

PORT = int(sys.argv[1])
FRAME_ERROR, FRAME_RELAY_ACK = 6, 44
FRAME_RELAY_REGISTER, FRAME_RELAY_DIAL, FRAME_RELAY_DATA, FRAME_RELAY_OPEN = 40, 41, 42, 43


def connect():
    return socket.create_connection(("127.0.0.1", PORT), timeout=5)


def message_of(body):
    at = body.find(b"\x12")
    return body[at + 2:].decode("utf-8", "replace") if at >= 0 else ""


def fail(what):
    print("FAIL " + what)
    sys.exit(1)


def expect_error(s, text, seconds=5.0):
    kind, body = recv_frame(s, seconds)
    if kind != FRAME_ERROR or text not in message_of(body):
        fail(f"expected an error with {text!r}, got frame {kind} {message_of(body)!r}")
    return message_of(body)


def register(name):
    s = connect()
    s.sendall(frame(FRAME_RELAY_REGISTER, field(1, name)))
    return s


def open_client(name):
    s = connect()
    s.sendall(frame(FRAME_RELAY_OPEN, field(1, name)))
    return s


def token_of(body):  # RelayDial{token = 1}: 0x0a, 32, the bytes
    if len(body) != 34 or body[0] != 0x0A or body[1] != 32:
        fail(f"a RELAY_DIAL without a 32-byte token: {body!r}")
    return body[2:]


ghost = register(b"ghost")
kind, _ = recv_frame(ghost)
if kind != FRAME_RELAY_ACK:
    fail(f"register answered {kind}")
print("ok registered ghost")

# Two clients wait for a dial-back that never comes; a third is over the limit.
waiting = [open_client(b"ghost"), open_client(b"ghost")]
tokens = [token_of(recv_frame(ghost)[1]) for _ in waiting]
third = open_client(b"ghost")
print("ok third client: " + expect_error(third, "max_pending_dials"))
start = time.monotonic()
for c in waiting:
    expect_error(c, "did not dial back within 1 s", seconds=4)
print(f"ok waiting clients told after {time.monotonic() - start:.1f} s")
late = connect()
late.sendall(frame(FRAME_RELAY_DATA, field(1, tokens[0])))
print("ok expired token: " + expect_error(late, "unknown or expired dial token"))

# Names: the second and third fit, a fourth is over max_servers.
second = register(b"second")
if recv_frame(second)[0] != FRAME_RELAY_ACK:
    fail("second name refused")
server = register(b"site")
if recv_frame(server)[0] != FRAME_RELAY_ACK:
    fail("site refused")
third_name = register(b"fourth")
print("ok third name: " + expect_error(third_name, "max_servers"))
# The same control connection may not take another name.
ghost.sendall(frame(FRAME_RELAY_REGISTER, field(1, b"other")))
print("ok second name on one connection: " + expect_error(ghost, "registers one name"))

# A good dial-back: bridged both ways, half-close passed on, token used once.
client = open_client(b"site")
token = token_of(recv_frame(server)[1])
data = connect()
data.sendall(frame(FRAME_RELAY_DATA, field(1, token)))
payload = os.urandom(3 << 20)
client.sendall(b"hello server")
data.settimeout(5)
if recv_exact(data, 12) != b"hello server":
    fail("client bytes did not reach the server side")
data.sendall(payload)
client.settimeout(5)
if recv_exact(client, len(payload)) != payload:
    fail("3 MiB from the server side came back changed")
client.shutdown(socket.SHUT_WR)
if data.recv(1) != b"":
    fail("the client's half-close was not passed on")
data.sendall(b"after half-close")
if recv_exact(client, 16) != b"after half-close":
    fail("the other direction stopped at the half-close")
print("ok bridged: 12 bytes up, 3 MiB down, half-close passed on")
again = connect()
again.sendall(frame(FRAME_RELAY_DATA, field(1, token)))
print("ok token reused: " + expect_error(again, "unknown or expired dial token"))
for s in (client, data, server, ghost, second, third_name, third, late, again):
    s.close()
