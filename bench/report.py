#!/usr/bin/python3
"""The Markdown tables of every benchmark driver (bench/*.sh), one kind each.

    report.py core RAW CPU CORES DATE KERNEL QUICK(0|1)   bench/run.sh, the whole report
    report.py datapath RAW [WHEN]                        bench/datapath.sh, the whole report
    report.py mpi RAW SLURM(yes|no)                      bench/mpi.sh
    report.py auth RAW ROUNDS                            bench/auth.sh, the whole report
    report.py tls RAW ROUNDS                             bench/tls.sh, the whole report
    report.py python RAW COMMIT                          bench/python.sh, the whole report
    report.py placement RAW                              bench/placement.sh, the table rows
    report.py chain RAW MATRIX_BYTES                     bench/chain_sites.sh, rows and summary
    report.py gflops WORK ROUNDS "CLIENTS"               bench/loadtest_surface.sh
    report.py ep WORK ROUNDS "CLIENTS"                   bench/loadtest_ep.sh
    report.py meta WORK ROUNDS "CLIENTS"                 bench/loadtest_meta.sh
    report.py sites WORK ROUNDS "SIZES" "PER_SITE"       bench/loadtest_sites.sh
    report.py sjf WORK ROUNDS fcfs VARIANT...            bench/loadtest_sjf.sh
    report.py relay RAW ROUNDS CPUS KERNEL RELAY_CPUS    bench/relay.sh, the whole report

RAW is a driver's raw log: lines of `what key=value ...` from the benchmark
programs, some with a label in front. WORK is a load-test driver's temporary
folder of ninf-loadtest CSVs: summary-ROUND.csv (--summary) and the calls of
each point (--csv), named as the kind below says. Every kind prints to
standard output; the drivers put their own header around it.

The reports with logic of their own (bench/scale_report.py, bench/peers/,
bench/seed004/) take what every report does from here, "shared by every
report" below: Markdown table rows, runs side by side in one cell, ratios and
their formatting, the plot set-up. Those in a folder load this file by its
path as `bench_report`, since they are named report.py too.
"""
import csv
import math
import re
import statistics
import sys


# ---- shared by every report --------------------------------------------------------

def md_row(cells):
    """One Markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def md_head(columns, aligns):
    """A table's header and rule; aligns has one letter a column, "l" or "r"."""
    return [md_row(columns), "|" + "".join("---:|" if a == "r" else "---|" for a in aligns)]


def side_by_side(values, show):
    """Several runs' values in one cell, "run 1 / run 2"."""
    return " / ".join(show(v) for v in values)


def ratio(a, b):
    """a / b, or None when either is missing (or b is 0): a verdict on missing
    data is "no data", never "holds"."""
    return a / b if a is not None and b else None


def fmt(x, digits=2, missing="-"):
    return missing if x is None else f"{x:.{digits}f}"


def pyplot(required=True):
    """matplotlib's pyplot drawing into files (no display). Without matplotlib:
    None if the plot is optional, else the ImportError."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        if required:
            raise
        return None
    return plt


# ---- raw logs of `what key=value` lines -------------------------------------------

def pairs(line):
    """key=value pairs of a line (values without spaces)."""
    return dict(re.findall(r"(\w+)=([-\w.]+)", line))


def words_fields(words):
    return dict(w.split("=", 1) for w in words if "=" in w)


def core(raw, cpu, cores, date, kernel, quick):
    """bench/run.sh: transfer, latency, dgesv and handles against their raw baselines."""

    def field(words, key):
        # The first word is the kind; "" when the key is absent.
        for w in words[1:]:
            kv = w.split("=")
            if kv[0] == key:
                return kv[1] if len(kv) > 1 else ""
        return ""

    def num(text):
        try:
            return float(text)
        except ValueError:
            return 0.0

    def human(size):
        size = num(size)
        if size >= 1048576:
            return "%d MiB" % int(size / 1048576)
        return "%d KiB" % int(size / 1024)

    def verdict(ok):
        return "**met**" if ok else "**not met**"

    sizes, raw_mb, echo, bulk = [], {}, {}, {}
    raw_rtt = transfer_null = null_us = spawn_us = lat_rtt = lat_ratio = ""
    h_null, h_rtt, h_lratio = {}, {}, {}
    h_sizes, h_raw, h_echo, h_ratio = {}, {}, {}, {}
    dgesv, threads = [], ""
    for line in open(raw):
        w = line.split()
        if not w:
            continue
        kind = w[0]
        if kind == "raw":
            sizes.append(field(w, "size"))
            raw_mb[field(w, "size")] = field(w, "mb_s")
        elif kind == "raw_latency":
            raw_rtt = field(w, "rtt_us")
        elif kind == "transfer":
            echo[field(w, "size")] = field(w, "mb_s")
            bulk[field(w, "size")] = field(w, "bulk_mb_s")
        elif kind == "transfer_null":
            transfer_null = field(w, "call_us")
        elif kind == "latency":
            null_us, spawn_us = field(w, "null_us"), field(w, "spawn_us")
            lat_rtt, lat_ratio = field(w, "raw_rtt_us"), field(w, "ratio")
        elif kind == "handle_latency":
            pl = field(w, "placement")
            h_null[pl], h_rtt[pl], h_lratio[pl] = field(w, "null_us"), field(w, "raw_rtt_us"), field(w, "ratio")
        elif kind == "handle_transfer":
            pl, s = field(w, "placement"), field(w, "size")
            if (pl, s) not in h_echo:
                h_sizes.setdefault(pl, []).append(s)
            h_raw[pl, s], h_echo[pl, s], h_ratio[pl, s] = (field(w, "raw_mbps"), field(w, "echo_mbps"),
                                                           field(w, "ratio"))
        elif kind == "dgesv":
            threads = field(w, "threads")
            dgesv.append((field(w, "n"), field(w, "local_gflops"), field(w, "remote_gflops"),
                          field(w, "ratio")))

    out = ["# Core benchmark: transfer, latency, remote dgesv", ""]
    if quick:
        out += ["_Smoke run (`--quick`): small sizes and few loops; not a measurement._", ""]
    out += ["| | |", "|---|---|", f"| CPU | {cpu} |", f"| cores | {cores} |", f"| date | {date} |",
            f"| kernel | {kernel} |",
            f"| threads | OPENBLAS_NUM_THREADS={cores} locally; for dgesv ninfd `--slots 1` "
            f"(threads_per_job = {cores}), otherwise default settings |", "",
            "Produced by `bench/run.sh`; raw figures in the `.raw.txt` file next to this one.",
            "MB/s are 10^6 bytes per second per direction: size / (round trip / 2). Every figure",
            "is a median over many runs (dgesv: best of a few), measured in the same session.", "",
            "## Transfer: `Ninf_call(\"echo\", n, a)` (INOUT) against raw TCP ping-pong", "",
            "| size | raw MB/s | echo MB/s | ratio | echo MB/s without call setup |",
            "|---:|---:|---:|---:|---:|"]
    transfer_min = None
    for s in sizes:
        if s not in echo:
            continue
        ratio = num(echo[s]) / num(raw_mb[s]) if num(raw_mb[s]) > 0 else 0
        without = ("%.1f" % num(bulk[s]) if num(bulk[s]) > 0
                   else "n/a (within noise of the null call)")
        out.append("| %s | %.1f | %.1f | %.3f | %s |" % (human(s), num(raw_mb[s]), num(echo[s]), ratio,
                                                        without))
        if num(s) >= 1048576 and (transfer_min is None or ratio < transfer_min):
            transfer_min = ratio
    out += ["", "Call setup (median `Ninf_call(\"null\")` in the same program): %.0f us. The last column"
            % num(transfer_null), "subtracts it, to show the array path alone.", "",
            "## Latency: one-shot `Ninf_call(\"null\")`", "",
            "| null one-shot (us) | fork+exec+wait (us) | raw TCP RTT (us) | null / (fork+exec+wait + RTT) |",
            "|---:|---:|---:|---:|"]
    out += ["| %.1f | %.1f | %.2f | %.3f |" % (num(null_us), num(spawn_us), num(lat_rtt), num(lat_ratio)),
            "", "fork+exec+wait: posix_spawn + waitpid of the registry's `null --noop`. Raw 8-byte RTT",
            "from raw_pingpong: %.2f us." % num(raw_rtt), "",
            "## Linpack: remote `dgesv` against local LAPACKE_dgesv (OpenBLAS)", "",
            "| n | local GF/s | remote GF/s | ratio |", "|---:|---:|---:|---:|"]
    dgesv_4000 = None
    for n, local, remote, ratio in dgesv:
        out.append("| %d | %.2f | %.2f | %.3f |" % (int(num(n)), num(local), num(remote), num(ratio)))
        if num(n) == 4000:
            dgesv_4000 = ratio
    out += ["", f"Both with {threads} OpenBLAS threads; GF/s count 2/3 n^3 + 2 n^2 operations, best of a "
            "few runs.", "",
            "## Function handles: calls on one persistent executable (`grpc_call`)", "",
            "Placement: the client and ninfd (hence the executable) on one vCPU (`same`) or on two",
            "(`cross`), with the raw ping-pong's two ends placed the same way in the same run.", "",
            "| placement | null through a handle (us) | raw 8-byte TCP RTT (us) | ratio |",
            "|---|---:|---:|---:|"]
    for pl in ("same", "cross"):
        if pl in h_null:
            out.append("| %s | %.1f | %.1f | %.2f |" % (pl, num(h_null[pl]), num(h_rtt[pl]),
                                                       num(h_lratio[pl])))
    out += ["", "| placement | size | raw MB/s | handle echo MB/s | ratio |", "|---|---:|---:|---:|---:|"]
    h_min = {}
    for pl in ("same", "cross"):
        for s in h_sizes.get(pl, []):
            out.append("| %s | %s | %.1f | %.1f | %.3f |" % (pl, human(s), num(h_raw[pl, s]),
                                                             num(h_echo[pl, s]), num(h_ratio[pl, s])))
            if num(s) >= 1048576 and (pl not in h_min or num(h_ratio[pl, s]) < h_min[pl]):
                h_min[pl] = num(h_ratio[pl, s])
    out += ["", "## Targets", "", "| target | measured | verdict |", "|---|---|---|"]
    seen = transfer_min is not None
    out.append("| echo >= 90%% of raw at sizes >= 1 MiB | %s | %s |" % (
        "lowest ratio %.3f" % transfer_min if seen else "no size >= 1 MiB run",
        verdict(transfer_min >= 0.9) if seen else "not measured"))
    out.append("| null <= 1.2 x (fork+exec+wait + one TCP round trip) | %.3f x | %s |" % (
        num(lat_ratio), verdict(num(lat_ratio) <= 1.2) if null_us != "" else "not measured"))
    for pl in ("same", "cross"):
        if pl in h_null:
            out.append("| handle null <= 2 x raw TCP round trip (%s vCPU) | %.2f x | %s |" % (
                pl, num(h_lratio[pl]), verdict(num(h_lratio[pl]) <= 2)))
        if pl in h_min:
            out.append("| handle echo >= 90%% of raw at >= 1 MiB (%s vCPU) | lowest ratio %.3f | %s |" % (
                pl, h_min[pl], verdict(h_min[pl] >= 0.9)))
    seen = dgesv_4000 is not None
    out.append("| remote dgesv at n = 4000 >= 90%% of local GF/s | %s | %s |" % (
        "ratio %.3f" % num(dgesv_4000) if seen else "n = 4000 not run",
        verdict(num(dgesv_4000) >= 0.9) if seen else "not measured"))
    print("\n".join(out))


def datapath(raw, when=""):
    """bench/datapath.sh: reused, warm and cold calls; TCP, Unix socket, shared memory."""
    rows = {}
    for line in open(raw):
        parts = line.split()
        if len(parts) < 2:
            continue
        rows.setdefault((parts[0], parts[1]), []).append(pairs(line))

    def get(label, kind):
        return rows.get((label, kind), [])

    out = [f"# Data path (issue 8), {when}", ""]
    out.append("One-shot `Ninf_call(\"null\")`, median µs (bench_latency), and what it is compared with:")
    out.append("")
    out.append("| executables | null µs | calls/s (1 thread) | / raw RTT |")
    out.append("|---|---|---|---|")
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
    raw_tcp = {f["size"]: float(f["mb_s"]) for f in get("raw", "raw")}
    raw_uds = {f["size"]: float(f["mb_s"]) for f in get("raw_uds", "raw")}
    labels = [("warm_tcp", "TCP, one process per call"), ("tcp", "TCP, reused"),
              ("uds", "Unix socket, reused"), ("shm", "shared memory, reused")]
    out.append("| size | raw TCP MB/s | raw Unix socket MB/s | " +
               " | ".join(f"{name}" for _, name in labels) + " |")
    out.append("|---|---|---|" + "---|" * len(labels))
    for size in sorted(raw_tcp, key=int):
        cells = []
        for label, _ in labels:
            match = [f for f in get(label, "transfer") if f.get("size") == size]
            cells.append(f"{float(match[0]['mb_s']):.0f} ({float(match[0]['mb_s']) / raw_tcp[size]:.2f})"
                         if match else "-")
        uds = f"{raw_uds[size]:.0f}" if size in raw_uds else "-"
        out.append(f"| {int(size) // 1024} KiB | {raw_tcp[size]:.0f} | {uds} | " + " | ".join(cells) + " |")
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


def mpi(raw, slurm):
    """bench/mpi.sh. Raw lines: `LABEL call i=.. fn=.. size=.. seconds=..` (bench_placed),
    `launcher=L mpi_latency routine=R first_ms=.. oneshot_us=.. handle_us=..`,
    `slurm_max_calls=N throughput what=null ... calls_per_s=..`."""
    slurm = slurm == "yes"
    times, latency, throughput = {}, {}, {}
    for line in open(raw):
        words = line.split()
        if len(words) > 1 and words[1] == "call":
            times.setdefault(words[0], []).append(float(words_fields(words)["seconds"]))
        elif len(words) > 1 and words[1] == "mpi_latency":
            f = words_fields(words)
            latency[(f["launcher"], f["routine"])] = f
        elif len(words) > 1 and words[1] == "throughput":
            f = words_fields(words)
            throughput[f["slurm_max_calls"]] = float(f["calls_per_s"])
    med = {k: statistics.median(v) for k, v in times.items()}

    def met(ok):
        return "met" if ok else "not met"

    print("## EP class A (m = 28), seconds per call")
    print()
    print("| routine | seconds | speed-up over ep_mpi with 1 rank |")
    print("|---|---:|---:|")
    one = med["ep_ranks=1"]
    for label, name in (("ep_serial", "ep (one process)"), ("ep_ranks=1", "ep_mpi, 1 rank"),
                        ("ep_ranks=2", "ep_mpi, 2 ranks")):
        print(f"| {name} | {med[label]:.3f} | {one / med[label]:.2f} |")
    speedup = one / med["ep_ranks=2"]
    print()
    print(f"2 ranks / 1 rank: **{speedup:.2f} x** (target >= 1.8 x: {met(speedup >= 1.8)}); "
          f"parallel efficiency {speedup / 2:.2f}.")
    print()
    print("## Linpack n = 4000, one right-hand side")
    print()
    pd, dg = med["linpack_pdgesv"], med["linpack_dgesv"]
    gf = (2 / 3 * 4000 ** 3 + 2 * 4000 ** 2) * 1e-9
    print("| routine | seconds | Gflop/s |")
    print("|---|---:|---:|")
    print(f"| pdgesv (ScaLAPACK, 2 ranks x 1 thread) | {pd:.3f} | {gf / pd:.1f} |")
    print(f"| dgesv (OpenBLAS, 2 threads) | {dg:.3f} | {gf / dg:.1f} |")
    print()
    print(f"pdgesv / dgesv time: {pd / dg:.2f} (includes ScaLAPACK's scatter of the matrix from "
          "rank 0 and the gather back).")
    print()
    print("## Call latency: first call (starts the executable), reused one-shot, handle")
    print()
    print("| launcher | routine | first call ms | one-shot µs | handle µs |")
    print("|---|---|---:|---:|---:|")
    for launcher in ("local", "local-tcp", "slurm", "slurm-tcp"):
        for routine in ("null_mpi", "null"):
            f = latency.get((launcher, routine))
            if f:
                print(f"| {launcher} | {routine} | {f['first_ms']} | {f['oneshot_us']} | "
                      f"{f['handle_us']} |")
    for launcher in ("local", "slurm"):
        m, s = latency.get((launcher, "null_mpi")), latency.get((launcher, "null"))
        if m and s:
            ratio = float(m["handle_us"]) / float(s["handle_us"])
            print()
            print(f"{launcher}: null_mpi handle / null handle = **{ratio:.2f}** "
                  f"(target <= 2: {met(ratio <= 2)}); one-shot "
                  f"{float(m['oneshot_us']) / float(s['oneshot_us']):.2f}.")
    print()
    print("`-tcp`: with `launch_address = 127.0.0.1`, rank 0 claims its channel over TCP and each")
    print("call is redirected to it (docs/cluster.md) instead of having its socket passed.")
    print("A redirected one-shot call pays one more round trip (CALL, then REDIRECT) and a new")
    print("TCP connection, where the passed socket may be the same-host Unix socket; a handle's")
    print("calls go to rank 0 over TCP, and their job-slot request crosses ninfd's relay.")
    for launcher in ("local", "slurm"):
        unix, tcp = latency.get((launcher, "null_mpi")), latency.get((launcher + "-tcp", "null_mpi"))
        if unix and tcp:
            print()
            print(f"{launcher}: null_mpi redirected / passed socket: one-shot "
                  f"**{float(tcp['oneshot_us']) / float(unix['oneshot_us']):.2f}**, handle "
                  f"**{float(tcp['handle_us']) / float(unix['handle_us']):.2f}**.")
    print()
    print("## One-shot calls per second of null through Slurm (1 client thread, 5 s)")
    print()
    if not slurm or not throughput:
        print("Not measured: Slurm could not start on this machine.")
        return
    reuse, fresh = throughput.get("1000"), throughput.get("1")
    print("| executables | calls/s |")
    print("|---|---:|")
    print(f"| reused steps (executable_max_calls = 1000) | {reuse:.1f} |")
    print(f"| one srun per call (executable_max_calls = 1) | {fresh:.1f} |")
    print()
    print(f"Reuse / one srun per call: **{reuse / fresh:.0f} x**.")


def auth(raw, rounds):
    """bench/auth.sh: plain and keyed daemons alternated; lines prefixed plain/keyed/both."""
    null = {"plain": [], "keyed": []}
    added = []
    bulk = {}
    for line in open(raw):
        mode, _, rest = line.partition(" ")
        f = dict(re.findall(r"(\w+)=([0-9.]+)", rest))
        if rest.startswith("handshake") and "added_us" in f:
            added.append(float(f["added_us"]))
        elif rest.startswith("latency") and "null_us" in f:
            null[mode].append(float(f["null_us"]))
        elif rest.startswith("transfer ") and "size" in f:
            bulk.setdefault(int(f["size"]), {"plain": [], "keyed": []})[mode].append(float(f["mb_s"]))
    med = statistics.median
    lines = ["# Authentication cost (bench/auth.sh)", "",
             f"{rounds} rounds, each: one run against a ninfd without a key, then one against a ninfd",
             "with a `key_file` (HMAC challenge-response per connection); medians of the per-run",
             "medians. One-shot calls: every call opens a connection, so every call pays the handshake.", "",
             "| measure | no key | key | key / no key |", "|---|---|---|---|"]
    p, k = med(null["plain"]), med(null["keyed"])
    lines.append(f"| one-shot `null`, us | {p:.0f} | {k:.0f} | {k / p:.3f} |")
    a = med(added)
    lines.append(f"| the handshake alone (connections alternated one by one), us added | - | {a:.0f} | "
                 f"{(p + a) / p:.3f} of the no-key `null` |")
    for size in sorted(bulk):
        p, k = med(bulk[size]["plain"]), med(bulk[size]["keyed"])
        lines.append(f"| one-shot `echo` {size // 1024} KiB, MB/s per direction | {p:.0f} | {k:.0f} | "
                     f"{k / p:.3f} |")
    lines += ["", "The `null` rows compare separate runs and move by tens of percent from run to run on",
              "this shared machine; the handshake row alternates the two kinds of connection one by",
              "one (connect, key file read, AUTH/CHALLENGE/PROOF, STATS; against connect, STATS), so",
              "it is the cleaner figure of what a key adds to every connection.",
              "", "Per-run handshake medians, us added: " + ", ".join(f"{v:.0f}" for v in added),
              "", "Per-run `null` medians (us), in run order:", "",
              "- no key: " + ", ".join(f"{v:.0f}" for v in null["plain"]),
              "- key: " + ", ".join(f"{v:.0f}" for v in null["keyed"]), ""]
    sys.stdout.write("\n".join(lines))


def tls(raw, rounds):
    """bench/tls.sh: plaintext, TLS, TLS without resumption and mutual TLS; lines prefixed by mode."""
    modes = ("plain", "tls", "tls-full", "mtls")
    rows = {}  # measure -> mode -> [per-run values]

    def add(measure, mode, value):
        rows.setdefault(measure, {m: [] for m in modes})[mode].append(float(value))

    for line in open(raw):
        mode, _, rest = line.partition(" ")
        if mode not in modes:
            continue
        f = dict(re.findall(r"(\w+)=([0-9.]+)", rest))
        if rest.startswith("latency ") and "null_us" in f:
            add("one-shot `null`, us", mode, f["null_us"])
        elif rest.startswith("handle_latency ") and "null_us" in f:
            add("handle `null`, us", mode, f["null_us"])
        elif rest.startswith("transfer ") and "size" in f:
            add(f"one-shot `echo` {human_size(int(f['size']))}, MB/s per direction", mode, f["mb_s"])
            if int(f["size"]) >= 1 << 20 and "bulk_mb_s" in f:
                # The transfer alone: each mode's own one-shot `null` subtracted,
                # so the handshakes do not count against the bytes.
                add(f"`echo` {human_size(int(f['size']))} without the call's fixed cost, MB/s",
                    mode, f["bulk_mb_s"])
        elif rest.startswith("dgesv ") and "remote_gflops" in f:
            add(f"remote dgesv n = {f['n']}, GFLOP/s", mode, f["remote_gflops"])
    med = statistics.median

    def cell(values):
        return f"{med(values):.1f}" if values else "-"

    def ratio(measure, mode):
        base, got = rows[measure]["plain"], rows[measure][mode]
        if not base or not got:
            return "-"
        return f"{med(got) / med(base):.3f}"

    lines = ["# TLS cost (bench/tls.sh)", "",
             f"{rounds} rounds, each running every measure against a plaintext ninfd, a TLS ninfd",
             "(`tls_cert`) and a mutual-TLS ninfd (`tls_client_ca`), alternated; medians of the per-run",
             "medians. All over loopback TCP (`NINF_TRANSPORT=tcp`), daemons on CPU 1, clients on CPU 0.",
             "`tls-full` is TLS with session resumption off (`NINF_TLS_RESUME=0`): every one-shot call",
             "pays a full handshake. Ratios are against plaintext in the same rounds; for times (us) a",
             "ratio above 1 is slower, for rates (MB/s, GFLOP/s) below 1 is slower.", "",
             "| measure | plaintext | TLS | TLS full handshake | mutual TLS | TLS / plain | full / plain "
             "| mutual / plain |",
             "|---|---|---|---|---|---|---|---|"]
    for measure, by_mode in rows.items():
        lines.append(f"| {measure} | " + " | ".join(cell(by_mode[m]) for m in modes) + " | " +
                     " | ".join(ratio(measure, m) for m in ("tls", "tls-full", "mtls")) + " |")
    lines += ["", "Targets (issue 29): TLS `echo` >= 0.80 of plaintext from 1 MiB up; one-shot `null` with",
              "resumption <= 1.5x plaintext.", "", "Per-run `null` medians (us), in run order:", ""]
    for m in modes:
        values = rows.get("one-shot `null`, us", {}).get(m, [])
        lines.append(f"- {m}: " + ", ".join(f"{v:.0f}" for v in values))
    sys.stdout.write("\n".join(lines) + "\n")


def human_size(size):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def python(raw, commit):
    """bench/python.sh: C and Python echo rounds, alternated."""
    rows = {"echo": [], "echo-python": []}
    for line in open(raw):
        m = re.search(r"what=(\S+) .* mb_per_s=([\d.]+)", line)
        if m:
            rows[m.group(1)].append(float(m.group(2)))
    c, p = rows["echo"], rows["echo-python"]
    ratio = statistics.median(p) / statistics.median(c)
    w = sys.stdout.write
    w(f"# Python client vs C client: 16 MiB echo (commit {commit})\n\n")
    w("One thread, INOUT 16 MiB each way, one-shot calls against one ninfd on loopback;\n")
    w("C: `bench_throughput --no-check`, Python: `bench/python_echo.py`, alternating.\n\n")
    w("| round | C MB/s | Python MB/s | Python / C |\n|---:|---:|---:|---:|\n")
    for i, (x, y) in enumerate(zip(c, p), 1):
        w(f"| {i} | {x:.0f} | {y:.0f} | {y / x:.3f} |\n")
    w(f"| median | {statistics.median(c):.0f} | {statistics.median(p):.0f} | **{ratio:.3f}** |\n\n")
    w(f"Target: Python >= 0.95 x C: **{'met' if ratio >= 0.95 else 'missed'}**.\n")


def placement(raw):
    """bench/placement.sh: one row per `placement servers=.. policy=..` line."""
    for line in open(raw):
        f = words_fields(line.split()[1:])
        target = "-"
        if f["policy"] == "completion" and f["servers"] == "1000":
            target = "<= 100 µs: met" if float(f["p99_us"]) <= 100 else "<= 100 µs: not met"
        if f["policy"] == "completion" and f["servers"] == "10000":
            target = "<= 1 ms: met" if float(f["p99_us"]) <= 1000 else "<= 1 ms: not met"
        print("| %s | %s | %s | %s | %s | %.1f | %s |" % (
            f["servers"], f["policy"], f["p50_us"], f["p99_us"], f["scan_p50_us"],
            float(f["p50_us"]) / float(f["scan_p50_us"]), target))


def chain(raw, matrix):
    """bench/chain_sites.sh: forward (1) against return (0), per length and round."""
    runs = {}
    for line in open(raw):
        f = dict(re.findall(r"(\w+)=(\S+)", line))
        runs.setdefault((int(f["length"]), int(f["round"])), {})[f["forward"]] = f
    matrix = int(matrix)
    ratios = {}

    def mb(b):
        return int(b) / 1e6

    for (k, r), m in sorted(runs.items()):
        fw, rt = m["1"], m["0"]
        ratio = float(rt["seconds"]) / float(fw["seconds"])
        ratios.setdefault(k, []).append(ratio)
        print(f"| {k} | {r} | {fw['seconds']} | {rt['seconds']} | {ratio:.2f}x | "
              f"{mb(fw['up']):.2f} + {mb(fw['down']):.2f} | {mb(rt['up']):.2f} + {mb(rt['down']):.2f} | "
              f"{mb((k + 1) * matrix):.2f} + {mb(matrix):.2f} | {fw['servers'].replace(',', ', ')} |")
    print()
    for k, v in sorted(ratios.items()):
        print(f"K = {k}: speed-up median {statistics.median(v):.2f}x, min {min(v):.2f}x, max {max(v):.2f}x "
              f"over {len(v)} rounds (target >= 2x; transfer bound 3K/(K+2) = {3 * k / (k + 2):.2f}x).")


# ---- ninf-loadtest CSVs -------------------------------------------------------------

def load(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("label") != "label"]


def summaries(work, rounds):
    """{round: {(label, clients): row}} and the labels in the order they ran."""
    out, labels = {}, []
    for rnd in range(1, rounds + 1):
        out[rnd] = {}
        for r in load(f"{work}/summary-{rnd}.csv"):
            out[rnd][(r["label"], int(r["clients"]))] = r
            if r["label"] not in labels:
                labels.append(r["label"])
    return out, labels


def points(work, rounds, clients):
    """Each (label, round, c, summary row) that ran, labels in the order they ran."""
    by_round, labels = summaries(work, rounds)
    for label in labels:
        for rnd in range(1, rounds + 1):
            for c in clients:
                s = by_round[rnd].get((label, c))
                if s:
                    yield label, rnd, c, s


def gf(row):
    return float(row["aggregate_gflops"])


def ratio_cell(by_round, rounds, label, c, baseline):
    """LABEL's aggregate GF/s at c over baseline(round's rows, c), each round, "r1 / r2"."""
    ratios = []
    for r in range(1, rounds + 1):
        row, base = by_round[r].get((label, c)), baseline(by_round[r], c)
        if row and base > 0:
            ratios.append(f"{gf(row) / base:.2f}")
    return " / ".join(ratios) or "-"


def gflops(work, rounds, clients):
    """Aggregate GF/s per run label and c, rounds side by side, then adaptive / best other
    (bench/loadtest_surface.sh: the Ninf study's Fig. 6)."""
    by_round, labels = summaries(work, rounds)
    rnds = range(1, rounds + 1)

    def cell(label, c):
        vals = [by_round[r].get((label, c)) for r in rnds]
        return " / ".join(f"{float(v['aggregate_gflops']):.2f}" if v else "-" for v in vals)

    print("| run | " + " | ".join(f"c = {c}" for c in clients) + " |")
    print("|---|" + "---|" * len(clients))
    for label in labels:
        print(f"| {label} | " + " | ".join(cell(label, c) for c in clients) + " |")
    if "adaptive" in labels and len(labels) > 1:
        def best_other(rows, c):
            others = [gf(v) for (lb, cc), v in rows.items() if cc == c and lb != "adaptive"]
            return max(others, default=0)

        cells = [ratio_cell(by_round, rounds, "adaptive", c, best_other) for c in clients]
        print("| adaptive / best other | " + " | ".join(cells) + " |")
    print()
    print(f"Each cell: round 1 / round {rounds}" if rounds > 1 else "One round.")


def ep(work, rounds, clients):
    """The Ninf study's Table 8 form per label and c (bench/loadtest_ep.sh); the calls of
    each point in WORK/LABEL-CLIENTS-ROUND.csv."""
    print("| run | round | c | calls | Mflops max / min / mean | communication s max / min / mean | "
          "T_wait mean s | server utilization % | jobs (running + queued) | load average (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, rnd, c, s in points(work, rounds, clients):
        calls = [r for r in load(f"{work}/{label}-{c}-{rnd}.csv") if r["outcome"] == "ok"]
        # What the client waited for besides the queue and the routine:
        # connection, arguments, result, round trips.
        comm = [float(r["response_s"]) - float(r["wait_s"]) - float(r["compute_s"])
                for r in calls]
        comm_text = (f"{max(comm):.3f} / {min(comm):.3f} / {sum(comm) / len(comm):.3f}"
                     if comm else "-")
        print(f"| {label} | {rnd} | {c} | {s['calls']} | "
              f"{float(s['mflops_max']):.0f} / {float(s['mflops_min']):.0f} / "
              f"{float(s['mflops_mean']):.0f} | {comm_text} | {float(s['wait_mean']):.3f} | "
              f"{100 * float(s['utilization_mean']):.1f} | {float(s['jobs_mean']):.2f} | "
              f"{float(s['load_mean']):.2f} |")


def meta(work, rounds, clients):
    """Per placement policy and c: where the calls ran (s1 = 10.79.1.2, the slow link;
    s2 = 10.79.2.2, the fast one), then each policy's GF/s over completion's
    (bench/loadtest_meta.sh); calls in WORK/LABEL-CLIENTS-ROUND.csv."""
    by_round, labels = summaries(work, rounds)
    print("| policy | round | c | calls | on s1 (slow) · s2 (fast) | aggregate GF/s | "
          "T_response mean / p95 s | T_wait mean s |")
    print("|---|---|---|---|---|---|---|---|")
    for label, rnd, c, s in points(work, rounds, clients):
        calls = load(f"{work}/{label}-{c}-{rnd}.csv")
        on = [sum(1 for r in calls if r["server"].startswith(f"10.79.{i}.2:")) for i in (1, 2)]
        print(f"| {label} | {rnd} | {c} | {s['calls']} | {on[0]} · {on[1]} | "
              f"{float(s['aggregate_gflops']):.2f} | {float(s['response_mean']):.3f} / "
              f"{float(s['response_p95']):.3f} | {float(s['wait_mean']):.3f} |")
    if "completion" not in labels:
        return
    print()
    print("Aggregate GF/s over completion's at the same c (round 1 / round 2 ...):")
    print()
    print("| policy | " + " | ".join(f"c = {c}" for c in clients) + " |")
    print("|---|" + "---|" * len(clients))

    def completion(rows, c):
        return gf(rows[("completion", c)]) if ("completion", c) in rows else 0

    for label in labels:
        cells = [ratio_cell(by_round, rounds, label, c, completion) for c in clients]
        print(f"| {label} | " + " | ".join(cells) + " |")


def span(rows):
    if not rows:
        return 0.0
    first = min(float(r["start_s"]) for r in rows)
    last = max(float(r["start_s"]) + float(r["response_s"]) for r in rows)
    return last - first


def megabytes_per_second(rows, seconds):
    good = [r for r in rows if r["outcome"] == "ok"]
    return sum(int(r["bytes"]) for r in good) / seconds / 1e6 if seconds > 0 else 0.0


def sites(work, rounds, sizes, per_site):
    """bench/loadtest_sites.sh: WORK/LABEL-N-CLIENTS-ROUND.csv and summary-ROUND.csv.
    Client i of a run ran in site i mod 4 (ninf-loadtest --netns), so site a's clients
    are those with i % 4 == 0 in the four-site runs and all of them in the one-site runs."""
    print("| round | n | run | clients | calls | aggregate GF/s | aggregate MB/s | site a MB/s | "
          "T_response mean s | server utilization |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for rnd in range(1, rounds + 1):
        summary = {(r["label"], int(r["size"]), int(r["clients"])): r
                   for r in load(f"{work}/summary-{rnd}.csv")}
        for n in sizes:
            for c in per_site:
                figures = {}
                for label, clients in (("one-site", c), ("one-site", 4 * c), ("four-sites", 4 * c)):
                    rows = load(f"{work}/{label}-{n}-{clients}-{rnd}.csv")
                    s = summary[(label, n, clients)]
                    seconds = span(rows)
                    in_a = [r for r in rows if label == "one-site" or int(r["client"]) % 4 == 0]
                    agg = megabytes_per_second(rows, seconds)
                    site_a = megabytes_per_second(in_a, seconds)
                    figures[(label, clients)] = (float(s["aggregate_gflops"]), agg, site_a)
                    name = "one site" if label == "one-site" else "four sites"
                    print(f"| {rnd} | {n} | {name} | {clients} | {s['calls']} | "
                          f"{float(s['aggregate_gflops']):.3f} | {agg:.2f} | {site_a:.2f} | "
                          f"{float(s['response_mean']):.3f} | {float(s['utilization_mean']):.2f} |")
                ratios.append((rnd, n, c, figures))
    print()
    print("The study's comparisons. Four sites against one site with the same total: how much")
    print("more the server delivers when the clients do not share a link. Site a's throughput")
    print("with four sites sending against alone with c clients: the study's \"fell only 9-18 %")
    print("(c = 1), 18-44 % (c = 4)\", which here measures what the hub and this host's two")
    print("cores cost when four links are busy (the links themselves are independent).")
    print()
    print("| round | n | c per site | four sites / one site (4c clients), GF/s | site a's MB/s, four sites "
          "vs alone | shape holds (> 2x; site a falls < 44 %) |")
    print("|---|---|---|---|---|---|")
    for rnd, n, c, f in ratios:
        gain = f[("four-sites", 4 * c)][0] / f[("one-site", 4 * c)][0] if f[("one-site", 4 * c)][0] else 0
        alone = f[("one-site", c)][2]
        change = (f[("four-sites", 4 * c)][2] / alone - 1) * 100 if alone else 0
        holds = "yes" if gain > 2 and change > -44 else "no"
        print(f"| {rnd} | {n} | {c} | {gain:.2f} | {change:+.0f} % ({f[('four-sites', 4 * c)][2]:.2f} vs "
              f"{alone:.2f} MB/s) | {holds} |")


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def p95(values):
    """Nearest rank, like ninf-loadtest's."""
    if not values:
        return float("nan")
    v = sorted(values)
    return v[max(1, math.ceil(0.95 * len(v))) - 1]


def ok(rows):
    return [r for r in rows if r["outcome"] == "ok"]


def describe(rows):
    resp = [float(r["response_s"]) for r in rows]
    wait = [float(r["wait_s"]) for r in rows]
    return {
        "calls": len(rows),
        "resp_mean": mean(resp),
        "resp_p95": p95(resp),
        "wait_mean": mean(wait),
        "wait_max": max(wait) if wait else float("nan"),
    }


def sjf(work, rounds, variants):
    """bench/loadtest_sjf.sh: WORK/VARIANT-ROUND.csv, every variant compared with the first
    (fcfs). Jobs are paired across the two orders by (client, step): with the same clients,
    steps and seeds a pair is the same call (same size, same data)."""
    runs = {(v, r): load(f"{work}/{v}-{r}.csv") for v in variants for r in range(1, rounds + 1)}
    sizes = sorted({int(row["size"]) for rows in runs.values() for row in rows})

    head = "| round | order | calls (failed) | T_response mean | p95 |"
    rule = "|---|---|---|---|---|"
    for n in sizes:
        head += f" n = {n}: calls, T_response mean / p95, T_wait mean / max |"
        rule += "---|"
    print(head)
    print(rule)
    for (order, rnd), rows in sorted(runs.items(), key=lambda kv: (kv[0][1], variants.index(kv[0][0]))):
        good = ok(rows)
        d = describe(good)
        line = (f"| {rnd} | {order} | {len(rows)} ({len(rows) - len(good)}) | "
                f"{d['resp_mean']:.3f} | {d['resp_p95']:.3f} |")
        for n in sizes:
            s = describe([r for r in good if int(r["size"]) == n])
            line += (f" {s['calls']}, {s['resp_mean']:.3f} / {s['resp_p95']:.3f}, "
                     f"{s['wait_mean']:.3f} / {s['wait_max']:.3f} |")
        print(line)

    print()
    print("Targets, per round: SJF's mean T_response below FCFS's; no job waiting more than")
    print("2x its FCFS wait, read per size as SJF's longest wait <= 2x FCFS's longest. The jobs")
    print("paired by client and step are listed too: a pair is the same call, but its FCFS")
    print("wait is one draw of that run's interleaving, so near-zero FCFS waits make the")
    print("pairwise ratio noise; jobs counted there waited more than 2x their FCFS wait + 10 ms.")
    print()
    print("| round | variant | mean T_response SJF / FCFS | met | " +
          " | ".join(f"n = {n}: longest wait SJF / FCFS | met" for n in sizes) +
          " | paired jobs | waiting > 2x FCFS + 10 ms | worst such (SJF / FCFS s) |")
    print("|---|---|---|---|" + "---|---|" * len(sizes) + "---|---|---|")
    for rnd, variant in [(r, v) for r in range(1, rounds + 1) for v in variants[1:]]:
        f, s = ok(runs[(variants[0], rnd)]), ok(runs[(variant, rnd)])
        fm, sm = describe(f)["resp_mean"], describe(s)["resp_mean"]
        line = (f"| {rnd} | {variant} | {sm:.3f} / {fm:.3f} = {sm / fm:.2f} | "
                f"{'met' if sm < fm else 'not met'} |")
        for n in sizes:
            fw = describe([r for r in f if int(r["size"]) == n])["wait_max"]
            sw = describe([r for r in s if int(r["size"]) == n])["wait_max"]
            line += f" {sw:.3f} / {fw:.3f} | {'met' if sw <= 2 * fw else 'not met'} |"
        fcfs_wait = {(r["client"], r["step"]): float(r["wait_s"]) for r in f}
        pairs_ = [(float(r["wait_s"]), fcfs_wait[(r["client"], r["step"])])
                  for r in s if (r["client"], r["step"]) in fcfs_wait]
        worse = [(sw, fw) for sw, fw in pairs_ if sw > 2 * fw + 0.010]
        worst = max(worse, key=lambda p: p[0] - 2 * p[1], default=None)
        line += f" {len(pairs_)} | {len(worse)} | " + (f"{worst[0]:.3f} / {worst[1]:.3f} |" if worst else "- |")
        print(line)


# ---- the command line ---------------------------------------------------------------

def relay(raw, rounds, cpus, kernel, relay_cpus):
    """bench/relay.sh: per size and mode ("direct" or "relayed", in front of
    bench_transfer's lines), the median over the rounds of mb_s (size / (call
    time / 2), the whole one-shot call) and of bulk_mb_s (the same with the
    mode's own null call subtracted: the transfer itself)."""
    runs = {}
    line_re = re.compile(r"(\w+) transfer size=(\d+) iters=\d+ call_us=([\d.]+) mb_s=([\d.]+) "
                         r"bulk_mb_s=([\d.]+)")
    for line in open(raw):
        m = line_re.match(line)
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
    print("\n".join(md_head(["size", "direct call", "relayed call", "ratio", "direct bulk",
                             "relayed bulk", "bulk ratio"], "rrrrrrr")))
    for size in sorted({s for _, s in runs}):
        dc, rc = median("direct", size, 0), median("relayed", size, 0)
        db, rb = median("direct", size, 1), median("relayed", size, 1)
        print(md_row([f"{size >> 20} MiB", f"{dc:.0f}", f"{rc:.0f}", fmt(ratio(rc, dc) or 0.0),
                      f"{db:.0f}", f"{rb:.0f}", fmt(ratio(rb, db) or 0.0)]))


def ints(text):
    return [int(v) for v in text.split()]


# kind: (function, number of arguments or None for "at least", how to convert them)
KINDS = {
    "core": (lambda raw, cpu, cores, date, kernel, q: core(raw, cpu, cores, date, kernel, q == "1"), 6),
    "datapath": (datapath, (1, 2)),
    "mpi": (mpi, 2),
    "auth": (auth, 2),
    "tls": (tls, 2),
    "python": (python, 2),
    "placement": (placement, 1),
    "chain": (chain, 2),
    "gflops": (lambda w, r, c: gflops(w, int(r), ints(c)), 3),
    "ep": (lambda w, r, c: ep(w, int(r), ints(c)), 3),
    "meta": (lambda w, r, c: meta(w, int(r), ints(c)), 3),
    "sites": (lambda w, r, s, p: sites(w, int(r), ints(s), ints(p)), 4),
    "sjf": (lambda w, r, *v: sjf(w, int(r), list(v)), None),
    "relay": (relay, 5),
}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in KINDS:
        sys.exit(__doc__)
    function, count = KINDS[sys.argv[1]]
    args = sys.argv[2:]
    if count is None:
        good = len(args) >= 3
    elif isinstance(count, tuple):
        good = count[0] <= len(args) <= count[1]
    else:
        good = len(args) == count
    if not good:
        sys.exit(__doc__)
    function(*args)


if __name__ == "__main__":
    main()
