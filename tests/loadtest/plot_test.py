"""loadtest/plot.py on recorded ninf-loadtest output (tests/loadtest/data/, made by real runs
against two ninfd in control groups of their own): every plot is drawn, the bugs an outside
performance engineer found stay fixed, and the figures show the data they claim to.

  summary_mixed.csv          --summary of mixed-size runs (--size 100,300), one and two servers,
                             c = 1, 2, 4: `perf` once failed on its size "100+300"
  summary_before_totals.csv  the same, in the summary's form before aggregate_mbs existed
  series.csv                 --series of a two-server run with --server-cgroup

Run as: /usr/bin/python3 plot_test.py PLOT_PY DATA_DIR (exit 77, skipped, without matplotlib).
"""
import csv
import importlib.util
import math
import os
import subprocess
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("plot_test: no matplotlib for this python: skipped")
    sys.exit(77)

plot_py, data = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("plot", plot_py)
plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot)
out_dir = tempfile.mkdtemp(prefix="ninf-plot-test.")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def png(name):
    path = os.path.join(out_dir, name)
    return path


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 1000


mixed = plot.rows(os.path.join(data, "summary_mixed.csv"))

# perf on a mixed-size summary the tool wrote (ValueError on "100+300" before).
fig = plot.perf(mixed, png("perf.png"))
check(is_png(png("perf.png")), "perf drew no PNG")
labels = sorted(line.get_label() for line in fig.axes[0].get_lines())
check(labels == ["one site, n=100+300", "two sites, n=100+300"], f"perf lines: {labels}")

# Per-call Mflops where the paper plots that (Fig. 6): any summary column.
fig = plot.perf(mixed, png("perf-mflops.png"), "mflops_mean")
check(fig.axes[0].get_ylabel() == "per-call Mflops (mean)", f"perf axis: {fig.axes[0].get_ylabel()}")
drawn = sorted(y for line in fig.axes[0].get_lines() for y in line.get_ydata())
check(drawn == sorted(float(r["mflops_mean"]) for r in mixed), "perf mflops_mean not the summary's")
surface_rows = [dict(r, label=f"fixed t={1 + i % 2}") for i, r in enumerate(mixed)]
fig = plot.surface(surface_rows, png("surface.png"), "mflops_mean")
check(is_png(png("surface.png")), "surface drew no PNG")

# sites draws MB/s beside GF/s (it drew only GF/s), with the summary's values.
fig = plot.sites(mixed, png("sites.png"))
check(is_png(png("sites.png")), "sites drew no PNG")
ylabels = [ax.get_ylabel() for ax in fig.axes]
check(ylabels == ["aggregate GF/s", "aggregate MB/s"], f"sites panels: {ylabels}")
mbs_bars = sorted(round(p.get_height(), 3) for p in fig.axes[1].patches)
expected = sorted(round(float(r["aggregate_mbs"]), 3) for r in mixed)
check(mbs_bars == expected, f"sites MB/s bars {mbs_bars}, summary {expected}")

# An older summary without aggregate_mbs: per-call MB/s, and said so.
old = plot.rows(os.path.join(data, "summary_before_totals.csv"))
fig = plot.sites(old, png("sites_old.png"))
check(fig.axes[1].get_ylabel() == "per-call MB/s (mean)", f"old sites panel: {fig.axes[1].get_ylabel()}")

# series: three panels; the measured cpu_util is drawn for each server and in total.
series = plot.rows(os.path.join(data, "series.csv"))
fig = plot.series(series, png("series.png"))
check(is_png(png("series.png")), "series drew no PNG")
check(len(fig.axes) == 3, f"series panels: {len(fig.axes)}")
lines = {line.get_label(): line for line in fig.axes[1].get_lines()}
check("all cpu_util (measured)" in lines, f"series utilization lines: {sorted(lines)}")
with open(os.path.join(data, "series.csv"), newline="") as f:
    total_mbs = [float(r["mbs"]) for r in csv.DictReader(f) if r["server"] == "all"]
drawn = [line for line in fig.axes[2].get_lines() if line.get_label() == "all MB/s"]
check(len(drawn) == 1 and list(drawn[0].get_ydata()) == total_mbs, "series total MB/s not the CSV's")
# Empty cells (not measured) are gaps, not zeros.
check(math.isnan(plot.number("")), "an empty cell is not NaN")

# The command line: each plot by name, and its usage for a wrong one.
for kind, source, extra in (("perf", "summary_mixed.csv", []), ("sites", "summary_mixed.csv", []),
                            ("series", "series.csv", []), ("perf", "summary_mixed.csv", ["mflops_mean"])):
    out = png(f"cli-{kind}-{len(extra)}.png")
    rc = os.spawnv(os.P_WAIT, sys.executable,
                   [sys.executable, plot_py, kind, os.path.join(data, source), out] + extra)
    check(rc == 0 and is_png(out), f"plot.py {kind} {extra} from the command line: {rc}")
bad = subprocess.run([sys.executable, plot_py, "perf", os.path.join(data, "summary_mixed.csv"),
                      png("bad.png"), "no_such_column"], stderr=subprocess.PIPE, text=True)
check(bad.returncode != 0 and "no column no_such_column" in bad.stderr, f"unknown column: {bad.stderr}")

if failures:
    for f in failures:
        print("plot_test: FAIL:", f)
    sys.exit(1)
print("plot_test: ok")
