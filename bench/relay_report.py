#!/usr/bin/env python3
"""The table of bench/relay.sh from its raw log.

    relay_report.py RAW ROUNDS CPUS KERNEL RELAY_CPUS

RAW holds bench_transfer lines prefixed with the mode ("direct" or
"relayed"). Per size and mode: the median over the rounds of mb_s (size /
(call time / 2), the whole one-shot call) and of bulk_mb_s (the same with
the mode's own null call subtracted: the transfer itself).
"""
import re
import statistics
import sys

raw, rounds, cpus, kernel, relay_cpus = sys.argv[1:6]
runs = {}
LINE = re.compile(r'(\w+) transfer size=(\d+) iters=\d+ call_us=([\d.]+) mb_s=([\d.]+) '
                  r'bulk_mb_s=([\d.]+)')
for line in open(raw):
    m = LINE.match(line)
    if m:
        runs.setdefault((m.group(1), int(m.group(2))), []).append(
            (float(m.group(4)), float(m.group(5))))


def median(mode, size, column):
    values = [v[column] for v in runs.get((mode, size), [])]
    return statistics.median(values) if values else 0.0


print("# Relayed vs direct one-shot echo over TCP\n")
print(f"{rounds} rounds, direct and relayed alternated; medians of the rounds, MB/s per "
      "direction.")
print("`call`: size / (call time / 2), the whole one-shot call (connect, the relay's dial-back,")
print("authentication, executable start, both transfers); `bulk`: the same with the mode's own")
print("null call subtracted (bench/bench_transfer.c). Loopback, NINF_TRANSPORT=tcp, keys on,")
print(f"{cpus} vCPUs shared with other work, kernel {kernel}. taskset: both ninfds and their")
print(f"executables on CPU 0, the client on CPU 1, ninf-relay on CPU {relay_cpus}.\n")
print("| size | direct call | relayed call | ratio | direct bulk | relayed bulk | bulk ratio |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for size in sorted({s for _, s in runs}):
    dc, rc = median("direct", size, 0), median("relayed", size, 0)
    db, rb = median("direct", size, 1), median("relayed", size, 1)
    print(f"| {size >> 20} MiB | {dc:.0f} | {rc:.0f} | {rc / dc if dc else 0:.2f} | "
          f"{db:.0f} | {rb:.0f} | {rb / db if db else 0:.2f} |")
