#!/usr/bin/python3
"""Plots of ninf-loadtest summaries (the --summary CSV), as PNG.

  plot.py perf    SUMMARY.csv OUT.png   aggregate GF/s against clients, a line per run label and size
  plot.py surface SUMMARY.csv OUT.png   heat map of aggregate GF/s over clients x threads, from
                                        labels that contain "t=N" (the seed's Fig. 6)
  plot.py sites   SUMMARY.csv OUT.png   aggregate MB/s and GF/s per label at each client count
                                        (single site against several, the seed's Fig. 8)

Debian's matplotlib is for /usr/bin/python3.
"""
import csv
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("label") != "label"]


def perf(data, out):
    series = defaultdict(list)
    for r in data:
        series[(r["label"], int(r["size"]))].append((int(r["clients"]), float(r["aggregate_gflops"])))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (label, size), points in sorted(series.items()):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"{label}, n={size}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("clients c")
    ax.set_ylabel("aggregate GF/s")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def surface(data, out):
    cells = {}
    for r in data:
        m = re.search(r"t=(\d+)", r["label"])
        if m:
            cells[(int(m.group(1)), int(r["clients"]))] = float(r["aggregate_gflops"])
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
    fig.colorbar(im, label="aggregate GF/s")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def sites(data, out):
    # One bar per label (and size, when the runs have several) at each c.
    several = len({r["size"] for r in data}) > 1
    name = (lambda r: f"{r['label']}, n={r['size']}") if several else (lambda r: r["label"])
    by = defaultdict(dict)
    for r in data:
        by[int(r["clients"])][name(r)] = float(r["aggregate_gflops"])
    labels = sorted({name(r) for r in data})
    cs = sorted(by)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    width = 0.8 / max(1, len(labels))
    for k, label in enumerate(labels):
        ax.bar([i + k * width for i in range(len(cs))], [by[c].get(label, 0) for c in cs],
               width, label=label)
    ax.set_xticks([i + width * (len(labels) - 1) / 2 for i in range(len(cs))], [str(c) for c in cs])
    ax.set_xlabel("clients c")
    ax.set_ylabel("aggregate GF/s")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("perf", "surface", "sites"):
        sys.exit(__doc__)
    {"perf": perf, "surface": surface, "sites": sites}[sys.argv[1]](rows(sys.argv[2]), sys.argv[3])


if __name__ == "__main__":
    main()
