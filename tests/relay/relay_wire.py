"""Ninf frames as the relay tests' hand-played peers write and read them
(protocol/frame.h: a 24-byte header, then the protobuf header): shared by
relay_hostile.py, relay_limits.py and relay_link_hostile.py, which import it
from their own folder."""
import struct


def field(number, data):
    """One length-delimited protobuf field (strings and bytes) under 128 bytes."""
    assert len(data) < 128
    return bytes([number << 3 | 2, len(data)]) + data


def frame(kind, header=b"", header_length=None, payload_length=0):
    """A frame of type `kind`; the lengths may lie, for the hostile cases."""
    length = len(header) if header_length is None else header_length
    return b"NINF" + struct.pack("<BBHIIQ", 1, 1, kind, length, 0, payload_length) + header


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError("closed")
        data += chunk
    return data


def recv_frame(s, seconds=5.0):
    """(type, header bytes)."""
    s.settimeout(seconds)
    head = recv_exact(s, 24)
    kind, length = struct.unpack("<H", head[6:8])[0], struct.unpack("<I", head[8:12])[0]
    return kind, recv_exact(s, length)
