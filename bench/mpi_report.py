#!/usr/bin/env python3
"""The tables of bench/mpi.sh from its raw lines.

    mpi_report.py RAW_FILE SLURM(yes|no)

Raw lines: `LABEL call i=.. fn=.. size=.. seconds=..` (bench_placed),
`launcher=L mpi_latency routine=R first_ms=.. oneshot_us=.. handle_us=..`,
`slurm_max_calls=N throughput what=null ... calls_per_s=..`.
"""
import statistics
import sys


def fields(words):
    return dict(w.split("=", 1) for w in words if "=" in w)


def main():
    raw, slurm = sys.argv[1], sys.argv[2] == "yes"
    times, latency, throughput = {}, {}, {}
    for line in open(raw):
        words = line.split()
        if len(words) > 1 and words[1] == "call":
            times.setdefault(words[0], []).append(float(fields(words)["seconds"]))
        elif len(words) > 1 and words[1] == "mpi_latency":
            f = fields(words)
            latency[(f["launcher"], f["routine"])] = f
        elif len(words) > 1 and words[1] == "throughput":
            f = fields(words)
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


main()
