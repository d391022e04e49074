#!/usr/bin/env python3
"""Who may hold a relay name and use its dial tokens (issue 43, hostile
findings 2 and 3), against a real ninf-relay and real ninfds on loopback.

    relay_identity.py NINF_RELAY NINFD RELAY_CLIENT REGISTRY

The relay holds two keys: site A's and site B's. A real ninfd of site A
registers "site-a". Then, each case printing one line (exit 1 on the first
that fails):
  squat        site B's key registers "site-a": refused, naming the key that
               holds it, and logged; site A's calls still reach site A.
  clone        a second ninfd of site A with the same relay_name (a cloned
               host): exits 2 at its start saying so; site A still served.
  token_alone  a hand-played site B registers "site-b"; a client opens it;
               the relay's dial token is presented without a key (refused),
               then with site A's key (refused, the token left unspent), then
               by site B: the client is bridged to site B, not to the thief.
Runs without root.
"""
import hashlib
import hmac
import os
import socket
import subprocess
import sys
import time

from relay_run import Run
from relay_wire import field, frame, recv_frame

RELAY, NINFD, CLIENT, REGISTRY = sys.argv[1:5]

FRAME_ERROR, FRAME_AUTH, FRAME_CHALLENGE, FRAME_PROOF = 6, 13, 14, 15
FRAME_RELAY_REGISTER, FRAME_RELAY_DIAL, FRAME_RELAY_DATA = 40, 41, 42
FRAME_RELAY_OPEN, FRAME_RELAY_ACK = 43, 44

RUN = Run("ninf-relay-id-")
fail = RUN.fail


def message_of(kind, body):
    """The text of a FRAME_ERROR (Error{code = 1, message = 2})."""
    if kind != FRAME_ERROR:
        return f"<frame type {kind}>"
    i = 2 if body[:1] == b"\x08" else 0  # code = 1, a one-byte varint
    if body[i:i + 1] != b"\x12":
        return ""
    length, shift, i = 0, 0, i + 1
    while True:  # the message's length, a varint
        length |= (body[i] & 0x7F) << shift
        shift, i = shift + 7, i + 1
        if not body[i - 1] & 0x80:
            return body[i:i + length].decode("utf-8", "replace")


def fields(body):
    """Length-delimited fields of a small protobuf message: {number: bytes}."""
    out, i = {}, 0
    while i < len(body):
        number, length = body[i] >> 3, body[i + 1]
        out[number] = body[i + 2:i + 2 + length]
        i += 2 + length
    return out


def authenticate(s, secret):
    """protocol/auth.h's exchange, as ninfd's side of the relay plays it."""
    key_id = hashlib.sha256(b"ninf-auth-v1 key id\0" + secret.encode()).digest()[:8]
    cn = os.urandom(32)
    s.sendall(frame(FRAME_AUTH, field(1, key_id) + field(2, cn)))
    kind, body = recv_frame(s)
    if kind != FRAME_CHALLENGE:
        fail(f"authentication: {message_of(kind, body)}")
    sn = fields(body)[1]
    proof = hmac.new(secret.encode(), b"ninf-auth-v1 client\0" + cn + sn, "sha256").digest()
    s.sendall(frame(FRAME_PROOF, field(1, proof)))


def connect(port, secret=None):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    if secret:
        authenticate(s, secret)
    return s


def register(port, secret, name, instance=b"hand-played"):
    """A control connection registering `name`: (socket, reply type, body)."""
    s = connect(port, secret)
    s.sendall(frame(FRAME_RELAY_REGISTER, field(1, name.encode()) + field(2, instance)))
    kind, body = recv_frame(s)
    return s, kind, body


def call_site_a(port, key):
    env = dict(os.environ, NINF_SERVER=f"site-a@127.0.0.1:{port}", NINF_TRANSPORT="tcp",
               NINF_KEY_FILE=key)
    out = subprocess.run([CLIENT, "1000"], env=env, capture_output=True, text=True, timeout=30)
    if out.stdout.strip() != "ok":
        fail(f"a call of site A through the relay: {out.stdout} {out.stderr}")


def case_squat(port, key_b, key_a_file):
    s, kind, body = register(port, key_b, "site-a")
    s.close()
    text = message_of(kind, body)
    if "relay name 'site-a' is registered by key" not in text:
        fail(f"squat: site B's key took 'site-a' (reply: {text!r})")
    if not RUN.wait_log("relay.log", "event=register_conflict name=site-a", 5):
        fail("squat: the relay logged no register_conflict")
    call_site_a(port, key_a_file)
    print(f"ok squat: {text!r}")


def case_clone(port, key_a_file):
    log = "clone.log"
    clone = RUN.start([NINFD, "--reverse", "--relay", f"127.0.0.1:{port}", "--relay-name", "site-a",
                   "--key-file", key_a_file, "--registry", REGISTRY, "--unix-socket", "",
                   "--port", "0"], log)
    try:
        status = clone.wait(timeout=20)
    except subprocess.TimeoutExpired:
        fail("clone: a second ninfd with site A's relay_name kept running")
    text = RUN.log_text(log)
    if status != 2 or "is registered by another ninfd" not in text:
        fail(f"clone: exit status {status}, log: {text[-400:]!r}")
    call_site_a(port, key_a_file)
    print("ok clone: exit 2, 'relay name 'site-a' is registered by another ninfd'")


def case_token_alone(port, key_a, key_b):
    control, kind, body = register(port, key_b, "site-b")
    if kind != FRAME_RELAY_ACK:
        fail(f"token_alone: site B could not register: {message_of(kind, body)}")
    client = connect(port)
    client.sendall(frame(FRAME_RELAY_OPEN, field(1, b"site-b")))
    kind, body = recv_frame(control)
    if kind != FRAME_RELAY_DIAL:
        fail(f"token_alone: no dial asked of site B ({message_of(kind, body)})")
    token = fields(body)[1]
    for who, secret, expected in [
        ("no key", None, "this relay requires authentication"),
        ("site A's key", key_a, "one the server's key did not present"),
    ]:
        thief = connect(port, secret)
        thief.sendall(frame(FRAME_RELAY_DATA, field(1, token)))
        kind, body = recv_frame(thief)
        thief.close()
        if expected not in message_of(kind, body):
            fail(f"token_alone: the token with {who}: {message_of(kind, body)!r}")
    # The token is still site B's: its own dial-back is bridged to the client.
    data = connect(port, key_b)
    data.sendall(frame(FRAME_RELAY_DATA, field(1, token)))
    time.sleep(0.2)
    data.sendall(b"from site B")
    client.settimeout(5)
    got = client.recv(64)
    if got != b"from site B":
        fail(f"token_alone: the client got {got!r}, not site B's bytes")
    for s in (data, client, control):
        s.close()
    print("ok token_alone: refused without a key and with another key; site B bridged")


def main():
    key_a, key_b = "site-a-key-" + os.urandom(12).hex(), "site-b-key-" + os.urandom(12).hex()
    key_a_file = RUN.key_file("a.key", key_a)
    relay_keys = RUN.key_file("relay.keys", key_a + "\n" + key_b)
    port = RUN.start_relay(RELAY, "--key-file", relay_keys, "--idle-timeout-seconds", "30")
    RUN.start([NINFD, "--reverse", "--relay", f"127.0.0.1:{port}", "--relay-name", "site-a",
               "--key-file", key_a_file, "--registry", REGISTRY, "--unix-socket", "", "--port",
               "0", "--log-level", "debug"], "site-a.log")
    if not RUN.wait_log("relay.log", "event=server_registered name=site-a", 10):
        fail("site A's ninfd did not register")
    case_squat(port, key_b, key_a_file)
    case_clone(port, key_a_file)
    case_token_alone(port, key_a, key_b)


try:
    main()
finally:
    RUN.close()
