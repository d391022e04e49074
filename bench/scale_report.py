#!/usr/bin/python3
"""The report of bench/scale.sh: one ninf-meta, many ninfd in emulated sites,
many clients. Reads the script's raw log and prints the Markdown body: the
set-up, where each site's calls ran, ninf-meta's CPU and memory per server and
per placement, and the checks with their verdicts.

    scale_report.py RAW

RAW has one `kind key=value ...` line per fact (bench/scale.sh writes them):

    setup sites=8 per_site=4 clients=256 ... policy=completion
    site id=s1 addr=10.79.1.2 rate=1gbit
    server addr=10.79.1.2:3001 site=s1 pid=123
    meta phase=empty|registered|idle|loaded t=SECONDS cpu_s=.. rss_kb=.. hwm_kb=..
    meta_status phase=... servers=.. placements=.. reports=.. (ninf-meta --status)
    ninfds phase=... count=.. cpu_s=.. rss_kb=..
    loadtest site=s1 exit=0
    served addr=10.79.1.2:3001 completed=.. failed=.. cancelled=..
    call site=s1 client=0 server=10.79.3.2:3002 outcome=ok start_s=.. response_s=.. wait_s=..
    meta_servers <a line of ninf-meta --servers>
    leftover processes=N

The verdicts are computed here (and unit-tested on recorded data by
bench/scale_report_test.py), never asserted by the timed run itself.
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report as shared  # noqa: E402  bench/report.py, the one report module

# Under `completion`, at least this share of a site's calls is expected on
# the site's own servers: the only servers reached without crossing a
# shaped link. A link-blind policy puts 1 / sites there (1/8 with 8 sites);
# calls placed before the links are measured, or while the own servers'
# slots are taken, may go elsewhere.
OWN_SITE_SHARE = 0.75
# The calls a site sends elsewhere should, under `completion`, take faster
# paths than other sites picked at random would: the path's rate is the
# slower of the two links it crosses, and the mean over those calls is
# compared with the mean over the other sites, each equally likely (a
# link-blind policy: 1.0; measured 1.9-3.4 with completion, 1.02 with
# round-robin). Only calls from each client's second tick on: the first
# ones are placed while the links are being probed, on the default
# figures, where every site looks alike.
FASTER_PATHS = 1.5
# No server is left idle while the others work: each runs at least this
# share of the mean calls per server (a server once judged by a single cold
# call ran 1 call of a mean 51: issue 30).
STARVED_SHARE = 0.1


def mbits(rate):
    """tc's spelling (20mbit, 1gbit, 500kbit) in Mbit/s; None for "none"."""
    m = re.match(r"^([\d.]+)(kbit|mbit|gbit)$", rate)
    if not m:
        return None
    return float(m.group(1)) * {"kbit": 1e-3, "mbit": 1.0, "gbit": 1e3}[m.group(2)]


def pairs(line):
    """key=value pairs of a line (values without spaces)."""
    return dict(re.findall(r"([\w/]+)=(\S+)", line))


def num(text, default=0.0):
    try:
        return float(text)
    except (TypeError, ValueError):
        return default


def parse(lines):
    """The raw log as lists and maps (see the module's docstring)."""
    d = {"setup": {}, "sites": [], "servers": {}, "meta": {}, "status": {}, "ninfds": {},
         "loadtests": {}, "served": {}, "calls": [], "leftover": None, "leftover_names": []}
    for line in lines:
        line = line.rstrip("\n")
        kind, _, rest = line.partition(" ")
        f = pairs(rest)
        if kind == "setup":
            d["setup"] = f
        elif kind == "site":
            d["sites"].append(f)
        elif kind == "server":
            d["servers"][f["addr"]] = f["site"]
        elif kind == "meta":
            d["meta"][f["phase"]] = f
        elif kind == "meta_status":
            d["status"][f["phase"]] = f
        elif kind == "ninfds":
            d["ninfds"][f["phase"]] = f
        elif kind == "loadtest":
            d["loadtests"][f["site"]] = int(f["exit"])
        elif kind == "served":
            d["served"][f["addr"]] = f
        elif kind == "call":
            d["calls"].append(f)
        elif kind == "leftover":
            if "processes" in f:
                d["leftover"] = int(f["processes"])
            else:
                d["leftover_names"].append(rest.strip())
    return d


def analyse(d):
    """Every figure and verdict of the report, as a dict."""
    a = {}
    sites = [s["id"] for s in d["sites"]]
    a["sites"] = sites
    calls = d["calls"]
    a["issued"] = len(calls)
    a["ok"] = sum(1 for c in calls if c["outcome"] == "ok")
    a["failed"] = a["issued"] - a["ok"]
    a["served"] = sum(int(s.get("completed", 0)) for s in d["served"].values())
    a["served_failed"] = sum(int(s.get("failed", 0)) for s in d["served"].values())
    idle, loaded = d["status"].get("idle", {}), d["status"].get("loaded", {})

    def delta(key):
        return int(num(loaded.get(key))) - int(num(idle.get(key)))

    a["placements"] = delta("placements")
    a["outcomes_ok"] = delta("outcomes_ok")
    a["outcomes_failed"] = delta("outcomes_failed")

    # Where each site's calls ran (by the CSV's server column).
    matrix = {s: {t: 0 for t in sites} for s in sites}
    unknown = []
    for c in calls:
        to = d["servers"].get(c["server"])
        if to is None:
            unknown.append(c["server"])
            continue
        matrix[c["site"]][to] += 1
    a["matrix"] = matrix
    a["unknown_servers"] = unknown
    per_site = {}
    for s in sites:
        mine = [c for c in calls if c["site"] == s]
        ok = [num(c["response_s"]) for c in mine if c["outcome"] == "ok"]
        waits = [num(c["wait_s"]) for c in mine if c["outcome"] == "ok"]
        total = sum(matrix[s].values())
        per_site[s] = {
            "calls": len(mine),
            "own": matrix[s][s],
            "share": matrix[s][s] / total if total else 0.0,
            "response_ms": statistics.mean(ok) * 1e3 if ok else 0.0,
            "p95_ms": sorted(ok)[max(0, -(-95 * len(ok) // 100) - 1)] * 1e3 if ok else 0.0,
            # Waiting for a slot: the servers' load, as the calls met it.
            "wait_ms": statistics.mean(waits) * 1e3 if waits else 0.0,
        }
    a["per_site"] = per_site
    placed = sum(sum(row.values()) for row in matrix.values())
    a["own_share"] = sum(matrix[s][s] for s in sites) / placed if placed else 0.0
    a["blind_share"] = 1 / len(sites) if sites else 0.0

    # The paths of the calls that left their site after the first tick,
    # against random other sites.
    interval = num(d["setup"].get("interval"))
    late = {s: {t: 0 for t in sites} for s in sites}
    for c in calls:
        to = d["servers"].get(c["server"])
        if to is not None and num(c.get("start_s")) >= interval:
            late[c["site"]][to] += 1
    a["first_tick_offsite"] = sum(matrix[s][t] - late[s][t] for s in sites for t in sites if t != s)
    rates = {x["id"]: mbits(x["rate"]) for x in d["sites"]}
    taken = uniform = 0.0
    offsite = sum(late[s][t] for s in sites for t in sites if t != s)
    # With two sites there is no other site to choose between: no figure.
    if len(sites) > 2 and all(r is not None for r in rates.values()):
        for s in sites:
            others = [t for t in sites if t != s]
            mean_other = sum(min(rates[s], rates[t]) for t in others) / len(others)
            for t in others:
                c = late[s][t]
                taken += c * min(rates[s], rates[t])
                uniform += c * mean_other
    a["offsite"] = offsite
    a["offsite_mbit"] = taken / offsite if offsite and uniform else 0.0
    a["uniform_mbit"] = uniform / offsite if offsite and uniform else 0.0
    a["faster_paths"] = taken / uniform if uniform else None

    # ninf-meta's cost between the phases.
    m = d["meta"]
    n_servers = len(d["servers"])
    a["n_servers"] = n_servers

    def span(p, q, key):
        return num(m[q][key]) - num(m[p][key]) if p in m and q in m else 0.0

    a["rss_empty_kb"] = num(m.get("empty", {}).get("rss_kb"))
    a["rss_registered_kb"] = num(m.get("registered", {}).get("rss_kb"))
    a["rss_loaded_kb"] = num(m.get("loaded", {}).get("rss_kb"))
    a["hwm_loaded_kb"] = num(m.get("loaded", {}).get("hwm_kb"))
    a["rss_per_server_kb"] = (a["rss_registered_kb"] - a["rss_empty_kb"]) / n_servers if n_servers else 0
    a["cpu_registering_s"] = span("empty", "registered", "cpu_s")
    a["idle_s"] = span("registered", "idle", "t")
    a["idle_cpu_s"] = span("registered", "idle", "cpu_s")
    st = d["status"]
    a["idle_reports"] = (int(num(st.get("idle", {}).get("reports")))
                         - int(num(st.get("registered", {}).get("reports"))))
    a["cpu_per_report_us"] = a["idle_cpu_s"] / a["idle_reports"] * 1e6 if a["idle_reports"] else 0
    a["idle_core_share"] = a["idle_cpu_s"] / a["idle_s"] if a["idle_s"] else 0
    a["load_s"] = span("idle", "loaded", "t")
    a["load_cpu_s"] = span("idle", "loaded", "cpu_s")
    a["load_reports"] = delta("reports")
    # The reports during the load at the idle period's price each; the rest
    # is the clients' share: PLACE, probes, outcomes and their connections.
    a["load_reports_cpu_s"] = a["load_reports"] * a["cpu_per_report_us"] / 1e6
    a["cpu_per_placement_us"] = a["load_cpu_s"] / a["placements"] * 1e6 if a["placements"] else 0
    # None when the reports' share is the whole (the idle price is a
    # small sample: the difference is then noise).
    net = a["load_cpu_s"] - a["load_reports_cpu_s"]
    a["net_cpu_per_placement_us"] = net / a["placements"] * 1e6 if a["placements"] and net > 0 else None
    a["probe_requests"] = delta("probe_requests")
    a["probes"] = delta("probes")
    a["connections_accepted"] = delta("connections_accepted")

    # Checks.
    checks = []
    live = int(num(loaded.get("servers"))) == n_servers and delta("servers_expired") == 0 \
        and delta("servers_closed") == 0
    checks.append(("placement", "every call ran on a registered server, and none left during the run",
                   f"{a['issued'] - len(unknown)} of {a['issued']} calls on the {n_servers} "
                   f"registered servers; {loaded.get('servers', '?')} registered at the end, "
                   f"{delta('servers_expired')} expired, {delta('servers_closed')} closed",
                   not unknown and live))
    policy = d["setup"].get("policy", "?")
    if policy == "completion":
        checks.append(("own_site", f"completion keeps a site's calls on its own servers "
                       f"(share >= {OWN_SITE_SHARE:.2f}; a link-blind policy: {a['blind_share']:.3f})",
                       f"{a['own_share']:.3f} (per site {min((p['share'] for p in per_site.values()), default=0):.2f}"
                       f" to {max((p['share'] for p in per_site.values()), default=0):.2f})",
                       a["own_share"] >= OWN_SITE_SHARE))
        fp = a["faster_paths"]
        checks.append(("faster_paths", f"completion sends a site's other calls over faster paths (path rate / "
                       f"random other sites' >= {FASTER_PATHS}; from the second tick on)",
                       f"{a['offsite']} calls left their site"
                       + (f": {a['offsite_mbit']:.0f} against {a['uniform_mbit']:.0f} Mbit/s, {fp:.2f} x"
                          if fp is not None else (" (two sites: no other to choose)" if len(sites) < 3 else ""))
                       + f" ({a['first_tick_offsite']} more at the first tick, on default link figures)",
                       None if fp is None else fp >= FASTER_PATHS))
    else:
        checks.append(("own_site", f"{policy} ignores links: own-site share near 1 / sites",
                       f"{a['own_share']:.3f} (1 / sites = {a['blind_share']:.3f})", None))
    served = {addr: int(f.get("completed", 0)) for addr, f in d["served"].items()}
    mean_served = sum(served.values()) / len(served) if served else 0.0
    starved = sorted(addr for addr, n in served.items() if n < STARVED_SHARE * mean_served)
    a["starved"] = starved
    checks.append(("starved", f"every server is used: each ran >= {STARVED_SHARE:.0%} of the mean "
                   f"calls per server",
                   f"{min(served.values(), default=0)} to {max(served.values(), default=0)} calls, "
                   f"mean {mean_served:.1f}; " + (f"{len(starved)} below: {', '.join(starved[:6])}"
                                                  if starved else "none below"),
                   bool(served) and not starved))
    exits = d["loadtests"]
    checks.append(("issued", "nothing lost: issued = completed + failed, failed = 0",
                   f"{a['issued']} = {a['ok']} + {a['failed']}; loadtest exits "
                   f"{sorted(set(exits.values())) if exits else '?'}",
                   a["failed"] == 0 and a["issued"] > 0 and set(exits.values()) <= {0}))
    checks.append(("ninfds", "nothing lost: = the ninfds' completed calls",
                   f"{a['served']} completed, {a['served_failed']} failed at the ninfds",
                   a["served"] == a["ok"] and a["served_failed"] == 0))
    checks.append(("meta", "nothing lost: = ninf-meta's placements and outcomes",
                   f"{a['placements']} placements, {a['outcomes_ok']} outcomes ok, "
                   f"{a['outcomes_failed']} failed",
                   a["placements"] == a["issued"] and a["outcomes_ok"] == a["ok"]
                   and a["outcomes_failed"] == 0))
    checks.append(("leftover", "no process left in the sites' namespaces after the stop",
                   "none" if d["leftover"] == 0 else
                   f"{d['leftover']}: {'; '.join(d['leftover_names'][:5])}",
                   d["leftover"] == 0))
    a["checks"] = checks
    a["all_met"] = all(c[3] is not False for c in checks)
    return a


def verdict(ok):
    return "n/a" if ok is None else ("met" if ok else "**not met**")


def workload_text(setup):
    size = setup.get("size", "?")
    if setup.get("workload", "linpack") == "ep":
        return f"NAS EP with 2^{size} pairs"
    return f"linpack n = {size}"


def render(d, a):
    out = []
    s = d["setup"]
    # A site's link: its rate, and its one-way delay when the run added one.
    rates = {x["id"]: x["rate"] + (f", {x['delay_ms']} ms" if int(x.get("delay_ms", "0")) else "")
             for x in d["sites"]}
    per_site_servers = {}
    for site in d["servers"].values():
        per_site_servers[site] = per_site_servers.get(site, 0) + 1
    out.append(f"{a['n_servers']} ninfd in {len(a['sites'])} sites (1 slot, 1 thread per call, "
               f"1 warm executable each), {s.get('clients', '?')} clients in the sites' namespaces "
               f"(ninf-loadtest --metaserver, {workload_text(s)}, a tick every "
               f"{s.get('interval', '?')} s with p = {s.get('probability', '?')}, "
               f"{s.get('duration', '?')} s), one ninf-meta (policy `{s.get('policy', '?')}`) in the hub; "
               f"{s.get('idle', '?')} s idle with every server reporting before the clients start; "
               f"ninf-meta's probe_wait_seconds: {s.get('probe_wait', 'default')}; load average "
               f"{s.get('load1', '?')} at the start. "
               f"A site's own servers are reached without crossing a link; any other site's "
               f"across two (the client's and the server's)"
               + ("; the delays each way are the two sites' added together (ninf-linkdelay "
                  "relays), so a round trip between sites grows by twice that."
                  if any(int(x.get("delay_ms", "0")) for x in d["sites"]) else "."))
    out.append("")
    out.append("## Checks")
    out.append("")
    out += shared.md_head(["check", "measured", "verdict"], "lll")
    for _, what, measured, ok in a["checks"]:
        out.append(shared.md_row([what, measured, verdict(ok)]))
    out.append("")
    out.append("## Sites")
    out.append("")
    out += shared.md_head(["site", "link", "servers", "calls", "on its own servers", "share",
                           "response mean ms", "p95 ms", "slot wait mean ms"], "llrrrrrrr")
    for site in a["sites"]:
        p = a["per_site"][site]
        out.append(shared.md_row([site, rates[site], per_site_servers.get(site, 0), p["calls"],
                                  p["own"], shared.fmt(p["share"]), shared.fmt(p["response_ms"], 1),
                                  shared.fmt(p["p95_ms"], 1), shared.fmt(p["wait_ms"], 1)]))
    out.append("")
    out.append("Where each site's calls ran (rows: the clients' site; columns: the server's):")
    out.append("")
    out += shared.md_head(["from \\ to"] + a["sites"], "l" + "r" * len(a["sites"]))
    for site in a["sites"]:
        out.append(shared.md_row([site] + [a["matrix"][site][t] for t in a["sites"]]))
    out.append("")
    out.append("## ninf-meta's cost")
    out.append("")
    out.append("CPU: the time on CPU of ninf-meta's threads (`/proc/PID/task/*/schedstat`; "
               "older raw logs: user + system from `/proc/PID/stat`, in ticks of 10 ms); "
               "memory: `/proc/PID/status` (VmRSS, VmHWM).")
    out.append("")
    out += shared.md_head(["phase", "what", "figure"], "llr")
    out.append(f"| started, no server | RSS | {a['rss_empty_kb'] / 1024:.1f} MiB |")
    out.append(f"| {a['n_servers']} servers registered | RSS | {a['rss_registered_kb'] / 1024:.1f} MiB |")
    out.append(f"| | RSS per server registered | {a['rss_per_server_kb']:.0f} KiB |")
    out.append(f"| | CPU for the registrations (and their first reports) | {a['cpu_registering_s'] * 1e3:.0f} ms |")
    out.append(f"| idle, {a['n_servers']} servers reporting, {a['idle_s']:.0f} s | reports | "
               f"{a['idle_reports']} ({a['idle_reports'] / a['idle_s'] if a['idle_s'] else 0:.1f} /s) |")
    out.append(f"| | CPU | {a['idle_cpu_s']:.2f} s ({a['idle_core_share'] * 100:.2f} % of a core) |")
    out.append(f"| | CPU per report | {a['cpu_per_report_us']:.0f} µs |")
    out.append(f"| | CPU per server and second | "
               f"{a['idle_cpu_s'] / a['idle_s'] / a['n_servers'] * 1e6 if a['idle_s'] and a['n_servers'] else 0:.0f} µs |")
    out.append(f"| clients, {a['load_s']:.0f} s | placements | {a['placements']} "
               f"({a['placements'] / a['load_s'] if a['load_s'] else 0:.1f} /s), "
               f"{a['probe_requests']} answered with links to probe, {a['probes']} probes reported |")
    out.append(f"| | reports | {a['load_reports']} |")
    out.append(f"| | connections accepted | {a['connections_accepted']} |")
    out.append(f"| | CPU | {a['load_cpu_s']:.2f} s "
               f"({a['load_cpu_s'] / a['load_s'] * 100 if a['load_s'] else 0:.2f} % of a core) |")
    out.append(f"| | CPU per placement (all of it) | {a['cpu_per_placement_us']:.0f} µs |")
    net = a["net_cpu_per_placement_us"]
    out.append("| | CPU per placement, less the reports at the idle price | "
               + (f"{net:.0f} µs |" if net is not None else "n/a (the reports at that price are all of it) |"))
    out.append(f"| | RSS at the end (peak) | {a['rss_loaded_kb'] / 1024:.1f} MiB "
               f"({a['hwm_loaded_kb'] / 1024:.1f} MiB) |")
    nd = d["ninfds"]
    if "registered" in nd and "loaded" in nd:
        out.append("")
        out.append(f"For scale, the {nd['loaded'].get('count')} ninfds together: "
                   f"RSS {num(nd['loaded']['rss_kb']) / 1024:.0f} MiB at the end, CPU "
                   f"{num(nd['idle']['cpu_s']) - num(nd['registered']['cpu_s']):.2f} s over the idle "
                   f"period and {num(nd['loaded']['cpu_s']) - num(nd['idle']['cpu_s']):.2f} s over the load "
                   f"(without their executables).")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        d = parse(f)
    a = analyse(d)
    sys.stdout.write(render(d, a))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
