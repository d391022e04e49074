"""The tables of bench/loadtest_sjf.sh, from ninf-loadtest's per-call CSVs.

Usage: sjf_report.py WORK_DIR ROUNDS fcfs VARIANT...
(reads WORK_DIR/VARIANT-ROUND.csv; every variant is compared with fcfs)

Jobs are paired across the two orders by (client, step): with the same
clients, steps and seeds a pair is the same call (same size, same data).
"""
import csv
import math
import sys


def load(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f)]


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


def main():
    work, rounds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
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
        pairs = [(float(r["wait_s"]), fcfs_wait[(r["client"], r["step"])])
                 for r in s if (r["client"], r["step"]) in fcfs_wait]
        worse = [(sw, fw) for sw, fw in pairs if sw > 2 * fw + 0.010]
        worst = max(worse, key=lambda p: p[0] - 2 * p[1], default=None)
        line += f" {len(pairs)} | {len(worse)} | " + (f"{worst[0]:.3f} / {worst[1]:.3f} |" if worst else "- |")
        print(line)


if __name__ == "__main__":
    main()
