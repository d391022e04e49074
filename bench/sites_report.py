"""The tables of bench/loadtest_sites.sh, from ninf-loadtest's CSVs.

Usage: sites_report.py WORK_DIR ROUNDS "SIZES" "PER_SITE"
(reads WORK_DIR/LABEL-N-CLIENTS-ROUND.csv and WORK_DIR/summary-ROUND.csv)

Client i of a run ran in site i mod 4 (ninf-loadtest --netns), so site a's
clients are those with i % 4 == 0 in the four-site runs and all of them in
the one-site runs.
"""
import csv
import sys


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def span(rows):
    if not rows:
        return 0.0
    first = min(float(r["start_s"]) for r in rows)
    last = max(float(r["start_s"]) + float(r["response_s"]) for r in rows)
    return last - first


def megabytes_per_second(rows, seconds):
    good = [r for r in rows if r["outcome"] == "ok"]
    return sum(int(r["bytes"]) for r in good) / seconds / 1e6 if seconds > 0 else 0.0


def main():
    work, rounds = sys.argv[1], int(sys.argv[2])
    sizes = [int(n) for n in sys.argv[3].split()]
    per_site = [int(c) for c in sys.argv[4].split()]
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
    print("| round | n | c per site | four sites / one site (4c clients), GF/s | site a's MB/s, four sites vs alone | shape holds (> 2x; site a falls < 44 %) |")
    print("|---|---|---|---|---|---|")
    for rnd, n, c, f in ratios:
        gain = f[("four-sites", 4 * c)][0] / f[("one-site", 4 * c)][0] if f[("one-site", 4 * c)][0] else 0
        alone = f[("one-site", c)][2]
        change = (f[("four-sites", 4 * c)][2] / alone - 1) * 100 if alone else 0
        holds = "yes" if gain > 2 and change > -44 else "no"
        print(f"| {rnd} | {n} | {c} | {gain:.2f} | {change:+.0f} % ({f[('four-sites', 4 * c)][2]:.2f} vs "
              f"{alone:.2f} MB/s) | {holds} |")


if __name__ == "__main__":
    main()
