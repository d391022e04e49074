"""Tables of the load-test experiments from ninf-loadtest's CSVs.

  grid_report.py gflops WORK ROUNDS "CLIENTS"
      aggregate GF/s per run label (rows) and client count (columns), the
      rounds side by side, then adaptive / best of the other labels
      (bench/loadtest_surface.sh: the Ninf study's Fig. 6)
  grid_report.py ep WORK ROUNDS "CLIENTS"
      the Ninf study's Table 8 form per label and c: Mflops max / min / mean,
      communication time max / min / mean, server utilization, jobs (the
      study's "load": running and waiting) and the 1-minute load average
      (bench/loadtest_ep.sh)
  grid_report.py meta WORK ROUNDS "CLIENTS"
      per placement policy and c: where the calls ran (s1 = 10.79.1.2, the
      slow link; s2 = 10.79.2.2, the fast one), aggregate GF/s, T_response,
      then each policy's GF/s over completion's (bench/loadtest_meta.sh)

WORK holds summary-ROUND.csv (ninf-loadtest --summary) and, for ep, the
calls of each point in LABEL-CLIENTS-ROUND.csv (--csv).
"""
import csv
import sys


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
    by_round, labels = summaries(work, rounds)
    print("| run | round | c | calls | Mflops max / min / mean | communication s max / min / mean | "
          "T_wait mean s | server utilization % | jobs (running + queued) | load average (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label in labels:
        for rnd in range(1, rounds + 1):
            for c in clients:
                s = by_round[rnd].get((label, c))
                if not s:
                    continue
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
    by_round, labels = summaries(work, rounds)
    print("| policy | round | c | calls | on s1 (slow) · s2 (fast) | aggregate GF/s | "
          "T_response mean / p95 s | T_wait mean s |")
    print("|---|---|---|---|---|---|---|---|")
    for label in labels:
        for rnd in range(1, rounds + 1):
            for c in clients:
                s = by_round[rnd].get((label, c))
                if not s:
                    continue
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


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("gflops", "ep", "meta"):
        sys.exit(__doc__)
    clients = [int(c) for c in sys.argv[4].split()]
    {"gflops": gflops, "ep": ep, "meta": meta}[sys.argv[1]](sys.argv[2], int(sys.argv[3]), clients)


if __name__ == "__main__":
    main()
