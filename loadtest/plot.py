#!/usr/bin/python3
"""Plots of ninf-loadtest output, as PNG.

  plot.py perf    SUMMARY.csv OUT.png [COLUMN]
                                        aggregate GF/s (or COLUMN) against clients, a line per run
                                        label and size (a mixed run's size is its sizes joined by
                                        "+", e.g. 300+1000)
  plot.py surface SUMMARY.csv OUT.png [COLUMN]
                                        heat map of aggregate GF/s (or COLUMN) over clients x
                                        threads, from labels that contain "t=N" (the seed's Fig. 6,
                                        which plots per-call Mflops: COLUMN mflops_mean)
  plot.py sites   SUMMARY.csv OUT.png   aggregate GF/s and aggregate MB/s per label at each client
                                        count (single site against several, the seed's Fig. 8)
  plot.py series  SERIES.csv  OUT.png   the per-second time series of --series: running and queued
                                        calls, utilization (booked) and cpu_util (measured), MB/s and
                                        calls per second, per server and in total

COLUMN is any numeric column of the summary (docs/loadtest.md, "Summary CSV"), e.g. mflops_mean.
SUMMARY.csv is what --summary appends to, SERIES.csv what --series writes (docs/loadtest.md).
Debian's matplotlib is for /usr/bin/python3.
"""
import csv
import math
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    with open(path, newline="") as f:
        # A file that several runs appended to may hold a header again.
        return [r for r in csv.DictReader(f) if r.get("label") != "label" and r.get("t_s") != "t_s"]


def number(text):
    """A cell as a float; NaN for an empty (not measured) or missing one."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def size_key(size):
    """Sorts "600" < "1000" < "300+1000" by their numbers, whatever the text."""
    return tuple(int(p) if p.isdigit() else 0 for p in str(size).split("+"))


# What a column is called on an axis (the column's own name otherwise).
AXIS = {"aggregate_gflops": "aggregate GF/s", "mflops_mean": "per-call Mflops (mean)",
        "aggregate_mbs": "aggregate MB/s", "throughput_mean": "per-call MB/s (mean)"}


def check_column(data, column):
    if data and column not in data[0]:
        sys.exit(f"plot.py: the summary has no column {column}")


def perf(data, out, column="aggregate_gflops"):
    check_column(data, column)
    series = defaultdict(list)
    for r in data:
        series[(r["label"], r["size"])].append((int(r["clients"]), number(r[column])))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (label, size), points in sorted(series.items(), key=lambda kv: (kv[0][0], size_key(kv[0][1]))):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"{label}, n={size}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("clients c")
    ax.set_ylabel(AXIS.get(column, column))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    return fig


def surface(data, out, column="aggregate_gflops"):
    check_column(data, column)
    cells = {}
    for r in data:
        m = re.search(r"t=(\d+)", r["label"])
        if m:
            cells[(int(m.group(1)), int(r["clients"]))] = number(r[column])
    if not cells:
        sys.exit("plot.py surface: no label with t=N in the summary")
    ts = sorted({k[0] for k in cells})
    cs = sorted({k[1] for k in cells})
    grid = [[cells.get((t, c), float("nan")) for c in cs] for t in ts]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(cs)), [str(c) for c in cs])
    ax.set_yticks(range(len(ts)), [str(t) for t in ts])
    ax.set_xlabel("clients c")
    ax.set_ylabel("threads per call t")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v == v:
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", color="w", fontsize=8)
    fig.colorbar(im, label=AXIS.get(column, column))
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    return fig


def sites(data, out):
    # One bar per label (and size, when the runs have several) at each c, in
    # two panels: the work done and the bytes moved, across all servers.
    several = len({r["size"] for r in data}) > 1
    name = (lambda r: f"{r['label']}, n={r['size']}") if several else (lambda r: r["label"])
    # Summaries written before aggregate_mbs existed: per-call MB/s, said so.
    has_total = all(r.get("aggregate_mbs") not in (None, "") for r in data)
    mbs_column, mbs_label = ("aggregate_mbs", "aggregate MB/s") if has_total else \
        ("throughput_mean", "per-call MB/s (mean)")
    panels = [("aggregate_gflops", "aggregate GF/s"), (mbs_column, mbs_label)]
    by = defaultdict(dict)
    for r in data:
        by[int(r["clients"])][name(r)] = r
    labels = sorted({name(r) for r in data})
    cs = sorted(by)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    width = 0.8 / max(1, len(labels))
    for ax, (column, ylabel) in zip(axes, panels):
        for k, label in enumerate(labels):
            ax.bar([i + k * width for i in range(len(cs))],
                   [number(by[c][label][column]) if label in by[c] else 0 for c in cs],
                   width, label=label)
        ax.set_xticks([i + width * (len(labels) - 1) / 2 for i in range(len(cs))], [str(c) for c in cs])
        ax.set_xlabel("clients c")
        ax.set_ylabel(ylabel)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    return fig


def series(data, out):
    by = defaultdict(list)
    for r in data:
        by[r["server"]].append(r)
    names = sorted(by, key=lambda s: (s == "all", s))  # "all" drawn last
    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    for name in names:
        points = sorted(by[name], key=lambda r: number(r["t_s"]))
        t = [number(r["t_s"]) for r in points]
        style = {"linewidth": 2.0, "marker": "."} if name == "all" else \
            {"linewidth": 1.0, "alpha": 0.7, "marker": "."}
        axes[0].plot(t, [number(r["running"]) for r in points], label=f"{name} running", **style)
        axes[0].plot(t, [number(r["queued"]) for r in points], linestyle="--",
                     label=f"{name} queued", **style)
        axes[1].plot(t, [number(r["utilization"]) for r in points], label=f"{name} utilization (booked)",
                     **style)
        if any(r["cpu_util"] not in ("", None) for r in points):
            axes[1].plot(t, [number(r["cpu_util"]) for r in points], linestyle="--",
                         label=f"{name} cpu_util (measured)", **style)
        axes[2].plot(t, [number(r["mbs"]) for r in points], label=f"{name} MB/s", **style)
        axes[2].plot(t, [number(r["calls"]) for r in points], linestyle=":",
                     label=f"{name} calls/s", **style)
    axes[0].set_ylabel("calls")
    axes[1].set_ylabel("utilization")
    axes[2].set_ylabel("MB/s, calls/s")
    axes[2].set_xlabel("seconds into the run")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    return fig


PLOTS = {"perf": perf, "surface": surface, "sites": sites, "series": series}


def main():
    with_column = ("perf", "surface")
    if len(sys.argv) < 2 or sys.argv[1] not in PLOTS or \
            len(sys.argv) not in ((4, 5) if sys.argv[1] in with_column else (4,)):
        sys.exit(__doc__)
    PLOTS[sys.argv[1]](rows(sys.argv[2]), sys.argv[3], *sys.argv[4:])


if __name__ == "__main__":
    main()
