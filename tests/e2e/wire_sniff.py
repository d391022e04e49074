#!/usr/bin/python3
"""The TCP payloads crossing one network interface, for the tests that
check what a hop carries (tests/e2e/remote_ranks.sh).

    wire_sniff.py record IFACE FILE      until SIGTERM: every TCP payload seen
                                         on IFACE, either way, appended to FILE
    wire_sniff.py check FILE [--min-bytes N] [--absent HEX]... [--present HEX]...
                                         exit 1 (saying which) unless FILE holds
                                         at least N bytes, none of the --absent
                                         byte strings and all of the --present ones

Recording needs root (an AF_PACKET socket). Payloads are stored one after
the other in arrival order: a pattern that repeats through an array is found
whole inside single segments.
"""
import argparse
import signal
import socket
import struct
import sys

ETH_P_ALL = 0x0003
ETH_HEADER = 14


def tcp_payload(frame):
    """The TCP payload of an Ethernet frame carrying IPv4 or IPv6, or b""."""
    if len(frame) < ETH_HEADER:
        return b""
    ethertype = struct.unpack("!H", frame[12:14])[0]
    ip = frame[ETH_HEADER:]
    if ethertype == 0x0800 and len(ip) >= 20 and ip[9] == 6:
        total = struct.unpack("!H", ip[2:4])[0] or len(ip)  # 0 under segmentation offload
        tcp = ip[(ip[0] & 0x0F) * 4:total]
    elif ethertype == 0x86DD and len(ip) >= 40 and ip[6] == 6:
        tcp = ip[40:]
    else:
        return b""
    if len(tcp) < 20:
        return b""
    return tcp[(tcp[12] >> 4) * 4:]


def record(iface, path):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    # Large: a burst of 64 KiB segments must not be dropped before it is read.
    sock.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
    sock.bind((iface, 0))
    sock.settimeout(0.1)
    with open(path, "ab") as out:
        print("recording", flush=True)  # the caller waits for this line
        while not stop:
            try:
                frame = sock.recv(1 << 17)
            except socket.timeout:
                continue
            except InterruptedError:
                continue
            out.write(tcp_payload(frame))


def check(path, min_bytes, absent, present):
    with open(path, "rb") as f:
        wire = f.read()
    failures = []
    if len(wire) < min_bytes:
        failures.append(f"only {len(wire)} bytes recorded, {min_bytes} expected")
    for pattern in absent:
        if bytes.fromhex(pattern) in wire:
            failures.append(f"{pattern} crossed the wire")
    for pattern in present:
        if bytes.fromhex(pattern) not in wire:
            failures.append(f"{pattern} is not on the wire")
    for f in failures:
        print(f"wire_sniff: {path}: {f}", file=sys.stderr)
    print(f"wire_sniff: {path}: {len(wire)} bytes, {'FAIL' if failures else 'ok'}")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("iface")
    rec.add_argument("file")
    chk = sub.add_parser("check")
    chk.add_argument("file")
    chk.add_argument("--min-bytes", type=int, default=0)
    chk.add_argument("--absent", action="append", default=[])
    chk.add_argument("--present", action="append", default=[])
    args = parser.parse_args()
    if args.command == "record":
        record(args.iface, args.file)
        return 0
    return check(args.file, args.min_bytes, args.absent, args.present)


if __name__ == "__main__":
    sys.exit(main())
