#!/usr/bin/env python3
"""Turns bench/datapath.sh's raw log into bench/results/datapath.md."""
import re
import sys


def fields(line):
    return dict(re.findall(r"(\w+)=([-\w.]+)", line))


def main(path, when):
    rows = {}
    for line in open(path):
        parts = line.split()
        if len(parts) < 2:
            continue
        label, kind = parts[0], parts[1]
        rows.setdefault((label, kind), []).append(fields(line))

    def get(label, kind):
        return rows.get((label, kind), [])

    out = [f"# Data path (issue 8), {when}", ""]
    out.append("One-shot `Ninf_call(\"null\")`, median µs (bench_latency), and what it is compared with:")
    out.append("")
    out.append("| executables | null µs | calls/s (1 thread) | / raw RTT |")
    out.append("|---|---|---|---|")
    raw_rtt = None
    for label, what in [("cold", "cold: started per call"), ("warm", "warm: started in advance, one call each"),
                        ("reused", "reused (TCP)"), ("reused_uds", "reused, Unix-domain socket")]:
        for f in get(label, "latency"):
            null = float(f["null_us"])
            raw_rtt = float(f["raw_rtt_us"])
            out.append(f"| {what} | {null:.0f} | {1e6 / null:.0f} | {null / raw_rtt:.1f} x |")
    for f in get("cold", "latency"):
        out.append("")
        out.append(f"fork+exec+wait of `null --noop`: {float(f['spawn_us']):.0f} µs; "
                   f"raw 8-byte TCP round trip: {float(f['raw_rtt_us']):.0f} µs.")
    out.append("")
    out.append("One-shot calls per second from 1 and 16 client threads (bench_throughput, 3 s each; "
               "echo: 1 MiB INOUT, every result checked), over loopback TCP and the same-host path:")
    out.append("")
    out.append("| executables | path | null, 1 thread | null, 16 threads | echo 1 MiB, 1 thread | "
               "echo 1 MiB, 16 threads |")
    out.append("|---|---|---|---|---|---|")
    for label, what in [("warm", "warm, one call each"), ("reused", "reused")]:
        for path_label, path in [("tcp", "TCP"), ("auto", "same host")]:
            found = {(f["what"], f["threads"]): float(f["calls_per_s"])
                     for f in get(f"{label}_{path_label}", "throughput")}
            if not found:
                continue
            cells = [f"{found[(w, t)]:.0f}" if (w, t) in found else "-"
                     for w, t in [("null", "1"), ("null", "16"), ("echo", "1"), ("echo", "16")]]
            out.append(f"| {what} | {path} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("One-shot `echo` of SIZE bytes (INOUT), per-direction MB/s, and the ratio to the raw TCP "
               "ping-pong of the same run:")
    out.append("")
    raw = {f["size"]: float(f["mb_s"]) for f in get("raw", "raw")}
    raw_uds = {f["size"]: float(f["mb_s"]) for f in get("raw_uds", "raw")}
    labels = [("warm_tcp", "TCP, one process per call"), ("tcp", "TCP, reused"),
              ("uds", "Unix socket, reused"), ("shm", "shared memory, reused")]
    out.append("| size | raw TCP MB/s | raw Unix socket MB/s | " +
               " | ".join(f"{name}" for _, name in labels) + " |")
    out.append("|---|---|---|" + "---|" * len(labels))
    for size in sorted(raw, key=int):
        cells = []
        for label, _ in labels:
            match = [f for f in get(label, "transfer") if f.get("size") == size]
            cells.append(f"{float(match[0]['mb_s']):.0f} ({float(match[0]['mb_s']) / raw[size]:.2f})"
                         if match else "-")
        uds = f"{raw_uds[size]:.0f}" if size in raw_uds else "-"
        out.append(f"| {int(size) // 1024} KiB | {raw[size]:.0f} | {uds} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Remote `dgesv` / local (same threads, --slots 1), best of 3:")
    out.append("")
    out.append("| n | over TCP | over shared memory |")
    out.append("|---|---|---|")
    tcp = {f["n"]: f["ratio"] for f in get("dgesv_tcp", "dgesv")}
    shm = {f["n"]: f["ratio"] for f in get("dgesv_shm", "dgesv")}
    for n in sorted(tcp, key=int):
        out.append(f"| {n} | {tcp[n]} | {shm.get(n, '-')} |")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")
