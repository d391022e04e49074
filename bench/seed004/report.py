#!/usr/bin/python3
"""Seed 004's multi-client items (Tables 3-8, Figs. 6 and 8): the tables,
plots and shape verdicts of bench/seed004/ITEM.sh's runs, from the raw
data a run leaves (points.csv, calls-ID.csv, summary-ID.csv).

  report.py render ITEM DIR [--command C] [--plot PNG] [--notes FILE] ...
      the report of one item in Markdown on stdout, the plot into PNG
  report.py calibrate CALLS.csv N N_PAPER J90_MFLOPS LAN_MBS WAN_MBS
      our per-core Mflops F, the time scale tau, the step s = 3 tau and the
      LAN and WAN rates (bit/s) that make transfer take tau x the paper's

Everything that decides a verdict is a pure function of the rows (the
`verdict_*` functions), unit-tested on recorded and made-up data by
tests/bench/seed004_report_test.py.
"""
import argparse
import csv
import importlib.util
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paper  # noqa: E402

# bench/report.py, the one report module (tables, ratios, the plot set-up);
# by its path, since this file is report.py too.
_SPEC = importlib.util.spec_from_file_location(
    'bench_report', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'report.py'))
shared = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(shared)
_fmt, _ratio = shared.fmt, shared.ratio

PAPER_SIZES = {'table3': [600, 1000, 1400], 'table4': [600, 1000, 1400],
               'table6': [600, 1000, 1400], 'table7': [600, 1000, 1400],
               'table5': [600], 'fig6': [600], 'fig8': [600]}
# Tables 3 and 6 are the 1-PE halves of Tables 4 and 7 (the same set-up,
# one server version): record.sh renders them from those runs' data when
# it has them, keeping only the item's own version.
OWN_VERSIONS = {'table3': {'1pe'}, 'table6': {'1pe'}}
# The SMP items scale c to our cores (Table 5's c = 4 / 8 / 16 of 16 CPUs
# become c x cores / 16): the paper's c a row stands for.
PAPER_CORES = {'table5': paper.SMP_CPUS, 'fig6': paper.SMP_CPUS}


def linpack_flops(n):
    return 2.0 / 3.0 * n ** 3 + 2.0 * n ** 2


def paper_bytes(n):
    """The paper's Linpack traffic: A and b in, x back."""
    return 8.0 * n * n + 16.0 * n


# ---- calibration -----------------------------------------------------------

def calibration(rows, n, n_paper, j90_mflops, lan_mbs, wan_mbs):
    """(F Mflops per core, tau, s, LAN bit/s, WAN bit/s) from c = 1 calls.

    tau = our compute time at n / the J90's at n_paper; the paper's step,
    LAN and WAN transfer times are all multiplied by tau, so that T_call/s
    and the transfer's share of a call are the paper's."""
    ok = [r for r in rows if r['outcome'] == 'ok' and float(r['compute_s']) > 0]
    if not ok:
        raise ValueError('no successful calibration call')
    compute = statistics.median(float(r['compute_s']) for r in ok)
    nbytes = statistics.median(float(r['bytes']) for r in ok)
    f_mflops = linpack_flops(n) / compute / 1e6
    tau = compute / (linpack_flops(n_paper) / (j90_mflops * 1e6))
    step = paper.STEP_S * tau
    lan_time = paper_bytes(n_paper) / (lan_mbs * 1e6) * tau
    wan_time = paper_bytes(n_paper) / (wan_mbs * 1e6) * tau
    return f_mflops, tau, step, 8 * nbytes / lan_time, 8 * nbytes / wan_time


# ---- one point ---------------------------------------------------------------

def _describe(values):
    if not values:
        return (0.0, 0.0, 0.0)
    return (max(values), min(values), sum(values) / len(values))


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline='') as f:
        return list(csv.DictReader(f))


def point_stats(point, calls, summary):
    """The paper's columns for one point: per-call Mflops and MB/s
    max/min/mean, communication time, measured utilization %, load (the
    server's running + queued calls), the clients' CPU, and totals."""
    ok = [r for r in calls if r['outcome'] == 'ok']
    wall = float(point['wall_s'])
    cores = int(point['server_cores'])
    mfl = [float(r['mflops']) for r in ok]
    mbs = [float(r['throughput_mbs']) for r in ok if float(r['throughput_mbs']) > 0]
    comm = [max(0.0, float(r['response_s']) - float(r['wait_s']) - float(r['compute_s']))
            for r in ok]
    resp = [float(r['response_s']) for r in ok]
    share = [float(r['transfer_s']) / float(r['response_s']) for r in ok
             if float(r['response_s']) > 0]
    st = {k: point[k] for k in ('id', 'item', 'label', 'version', 'admission', 'site', 'workload')}
    st.update(n=int(point['n']), c=int(point['c']), t=int(point['threads']),
              interval=float(point['interval']), wall=wall, server_cores=cores,
              calls=len(calls), ok=len(ok), failed=len(calls) - len(ok))
    st['mflops'] = _describe(mfl)
    st['mbs'] = _describe(mbs)
    st['comm'] = _describe(comm)
    st['response_mean'] = sum(resp) / len(resp) if resp else 0.0
    st['wait_mean'] = (sum(float(r['wait_s']) for r in ok) / len(ok)) if ok else 0.0
    st['transfer_share'] = sum(share) / len(share) if share else 0.0
    st['util'] = 100.0 * float(point['server_cpu_s']) / (wall * cores) if wall > 0 else 0.0
    ccores = int(point['client_cores'])
    st['client_util'] = 100.0 * float(point['client_cpu_s']) / (wall * ccores) if wall > 0 else 0.0
    st['load'] = float(summary[0]['jobs_mean']) if summary else float('nan')
    st['booked_util'] = 100.0 * float(summary[0]['utilization_mean']) if summary else float('nan')
    # Fig. 8's "total throughput" is the sum over the clients of their
    # per-call throughput (bytes / transfer time); "delivered" is what all
    # calls moved over the point's span, which the client model also limits.
    per_client = {}
    for r in ok:
        if float(r['throughput_mbs']) > 0:
            per_client.setdefault(r['client'], []).append(float(r['throughput_mbs']))
    st['total_mbs'] = sum(sum(v) / len(v) for v in per_client.values())
    if ok:
        span = (max(float(r['start_s']) + float(r['response_s']) for r in ok)
                - min(float(r['start_s']) for r in ok))
        st['delivered_mbs'] = sum(float(r['bytes']) for r in ok) / span / 1e6 if span > 0 else 0.0
    else:
        st['delivered_mbs'] = 0.0
    # Site a's calls in a multi-site point: client i runs in site i mod 4.
    if point['site'] == 'all':
        a = [float(r['throughput_mbs']) for r in ok if int(r['client']) % 4 == 0]
        st['site_a_mbs'] = sum(a) / len(a) if a else 0.0
    else:
        st['site_a_mbs'] = st['mbs'][2]
    return st


def load_points(folder):
    rows = []
    for p in read_csv(os.path.join(folder, 'points.csv')):
        calls = read_csv(os.path.join(folder, f"calls-{p['id']}.csv"))
        summary = read_csv(os.path.join(folder, f"summary-{p['id']}.csv"))
        st = point_stats(p, calls, summary)
        if st['item'] in PAPER_CORES:
            # Table 5's c was scaled to our cores (c x cores / 16): the
            # paper's row it stands for.
            st['paper_c'] = round(st['c'] * PAPER_CORES[st['item']] / st['server_cores'])
        rows.append(st)
    return rows


def own_rows(item, rows):
    """The points of ITEM among ROWS: Table 3's of Table 4's run are its 1-PE ones."""
    own = OWN_VERSIONS.get(item)
    return [r for r in rows if own is None or r['version'] in own]


def paper_n(rows, item):
    """{our n: the paper's n}: our sizes in order stand for the paper's."""
    ours = sorted({r['n'] for r in rows})
    sizes = PAPER_SIZES.get(item, [])
    return {n: (sizes[i] if i < len(sizes) else None) for i, n in enumerate(ours)}


# ---- verdicts (pure) -----------------------------------------------------------

class Verdict:
    def __init__(self, claim, holds, evidence):
        self.claim, self.holds, self.evidence = claim, holds, evidence

    def mark(self):
        return {True: 'holds', False: 'does not hold', None: 'no data'}[self.holds]


def _by(rows, **match):
    return [r for r in rows if all(r[k] == v for k, v in match.items())]


def _mean_at(rows, n, c):
    hit = _by(rows, n=n, c=c)
    return hit[0]['mflops'][2] if hit and hit[0]['ok'] else None


def _mbs_at(rows, n, c):
    hit = _by(rows, n=n, c=c)
    return hit[0]['mbs'][2] if hit and hit[0]['ok'] else None


def _all(pred, values):
    values = list(values)
    if not values or any(v is None for v in values):
        return None
    return all(pred(v) for v in values)


def _show(pairs, digits=2, suffix=''):
    return ', '.join(f'n={n}: {_fmt(v, digits)}{suffix}' for n, v in pairs)


def verdict_lan(rows, cores):
    """Tables 3/4 on one version's rows: the paper's shape (a)-(f)."""
    out = []
    sizes = sorted({r['n'] for r in rows})
    cs = sorted({r['c'] for r in rows})
    if not sizes or len(cs) < 2:
        return [Verdict('per-call Mflops falls with c', None, 'needs two client counts')]
    lo, hi = cs[0], cs[-1]
    rel = {n: _ratio(_mean_at(rows, n, hi), _mean_at(rows, n, lo)) for n in sizes}
    out.append(Verdict(f'(a) per-call Mflops falls with c: mean at c = {hi} <= 0.5 x c = {lo} '
                       '(paper 0.21-0.30 at c = 16)',
                       _all(lambda v: v <= 0.5, rel.values()), _show(rel.items())))
    mrel = {n: _ratio(_mbs_at(rows, n, hi), _mbs_at(rows, n, lo)) for n in sizes}
    out.append(Verdict(f'(b) per-call MB/s falls with c: c = {hi} <= 0.5 x c = {lo} (paper 0.20-0.35)',
                       _all(lambda v: v <= 0.5, mrel.values()), _show(mrel.items())))
    # Saturation at the largest c. (Where it starts depends on how much CPU
    # a client's call costs the server beyond the routine: the J90 spent
    # 0.5 PE per client at c = 1 (12.6 % of 4), so it saturated near c = 8.)
    sat_hit = {n: _by(rows, n=n, c=hi)[0]['util'] for n in sizes if _by(rows, n=n, c=hi)}
    out.append(Verdict(f'(c) the server saturates: measured utilization >= 80 % at c = {hi} '
                       '(paper 82-100 % at c = 8, 99-100 % at c = 16) for every n',
                       _all(lambda v: v >= 80, sat_hit.values()), _show(sat_hit.items(), 0, ' %')))
    loads = {n: _by(rows, n=n, c=hi)[0]['load'] for n in sizes if _by(rows, n=n, c=hi)}
    loads = {n: (None if v != v else v) for n, v in loads.items()}  # NaN: no samples
    out.append(Verdict(f'(d) load approaches c: load at c = {hi} >= 0.6 c (paper 13-17 of 16)',
                       _all(lambda v: v >= 0.6 * hi, loads.values()),
                       _show(loads.items(), 1)))
    ends = [_mean_at(rows, n, hi) for n in sizes]
    ends = [e for e in ends if e]
    if len(ends) >= 2:
        spread = max(ends) / min(ends)
        out.append(Verdict(f'(e) at c = {hi} every n converges: max/min of the means <= 1.3 '
                           '(paper 21.1-23.9: 1.13)', spread <= 1.3, f'{spread:.2f}'))
        firsts = [_mean_at(rows, n, lo) for n in sizes]
        out.append(Verdict(f'(f) at c = {lo} larger n is faster',
                           None if None in firsts else firsts == sorted(firsts),
                           ' < '.join(_fmt(x, 0) for x in firsts)))
    return out


def _paper_ratio_range(top, bottom, c):
    """The paper's top/bottom per-call mean Mflops at c over its sizes, as
    "lo-hi" (Tables 3/4 on the LAN, 6/7 on the WAN)."""
    ratios = [top[(n, c)][2] / bottom[(n, c)][2]
              for n in sorted({n for n, cc in top if cc == c})
              if (n, c) in bottom and bottom[(n, c)][2]]
    return f'{min(ratios):.2f}-{max(ratios):.2f}' if ratios else '?'


def verdict_versions(four, one, paper_four, paper_one):
    """Table 4 (and 7): 4-PE against 1-PE at the smallest and largest c,
    beside the paper's own ratios from `paper_four` and `paper_one` (its
    4-PE and 1-PE tables of the same network)."""
    if not four or not one:
        return [Verdict('4-PE against 1-PE', None, 'needs both versions (--versions "4pe 1pe")')]
    cs = sorted({r['c'] for r in four} & {r['c'] for r in one})
    sizes = sorted({r['n'] for r in four} & {r['n'] for r in one})
    lo, hi = cs[0], cs[-1]
    win = {n: _ratio(_mean_at(four, n, lo), _mean_at(one, n, lo)) for n in sizes}
    tie = {n: _ratio(_mean_at(one, n, hi), _mean_at(four, n, hi)) for n in sizes}
    paper_win = _paper_ratio_range(paper_four, paper_one, 1)
    paper_tie = _paper_ratio_range(paper_one, paper_four, 16)
    return [
        Verdict(f'4-PE faster than 1-PE at c = {lo} (paper {paper_win}x)',
                _all(lambda v: v > 1.0, win.values()), _show(win.items(), 2, 'x')),
        Verdict(f'near tie at c = {hi}: 1-PE / 4-PE within 0.8-1.3 (paper {paper_tie})',
                _all(lambda v: 0.8 <= v <= 1.3, tie.values()), _show(tie.items())),
    ]


def verdict_smp(rows, cores):
    """Table 5: with c <= cores the per-call fall is small and headroom stays."""
    cs = sorted({r['c'] for r in rows})
    if len(cs) < 2:
        return [Verdict('small fall with c <= cores', None, 'needs two client counts')]
    n = sorted({r['n'] for r in rows})[0]
    lo, hi = _mean_at(rows, n, cs[0]), _mean_at(rows, n, cs[-1])
    rel = _ratio(hi, lo)
    util = _by(rows, n=n, c=cs[-1])[0]['util']
    return [
        Verdict(f'per-call Mflops barely falls: c = {cs[-1]} >= 0.6 x c = {cs[0]} (paper 0.74)',
                None if rel is None else rel >= 0.6, _fmt(rel)),
        Verdict(f'headroom at c = {cs[-1]}: utilization < 95 % (paper 89.9 %)', util < 95,
                f'{util:.0f} %'),
    ]


def verdict_surface(rows, cores):
    """Fig. 6: good below the c x t = cores diagonal, collapse above it for
    high t."""
    ts = sorted({r['t'] for r in rows})
    cs = sorted({r['c'] for r in rows})
    if len(cs) < 2 or not ts:
        return [Verdict('the surface', None, 'needs two client counts')]
    n = sorted({r['n'] for r in rows})[0]
    below = []
    for r in rows:
        base = _mean_at(_by(rows, t=r['t']), n, cs[0])
        if r['c'] * r['t'] <= cores and base and r['c'] > cs[0]:
            below.append(r['mflops'][2] / base)
    big = ts[-1]
    b1 = _mean_at(_by(rows, t=big), n, cs[0])
    bn = _mean_at(_by(rows, t=big), n, cs[-1])
    return [
        Verdict(f'good below the diagonal: every point with c x t <= {cores} keeps >= 0.7 of '
                'its t\'s c = 1 Mflops',
                (all(x >= 0.7 for x in below) if below else None),
                ', '.join(f'{x:.2f}' for x in below) or 'no such point past c = 1'),
        Verdict(f'collapse for high t: t = {big} at c = {cs[-1]} <= 0.25 x its c = {cs[0]}',
                bn <= 0.25 * b1 if b1 and bn is not None else None, _fmt(_ratio(bn, b1))),
    ]


def verdict_wan(rows):
    """Tables 6/7: bandwidth-bound, idle server."""
    sizes = sorted({r['n'] for r in rows})
    cs = sorted({r['c'] for r in rows})
    if not sizes or len(cs) < 2:
        return [Verdict('per-call Mflops falls as 1/c', None, 'needs two client counts')]
    lo, hi = cs[0], cs[-1]
    rel = {n: _ratio(_mean_at(rows, n, hi), _mean_at(rows, n, lo)) for n in sizes}
    bound = 2.5 * lo / hi  # 1/c with room (the paper: 0.09 at c = 16)
    mrel = {n: _ratio(_mbs_at(rows, n, hi), _mbs_at(rows, n, lo)) for n in sizes}
    util = max(r['util'] for r in rows)
    firsts = [_mean_at(rows, n, lo) for n in sizes]
    return [
        Verdict(f'per-call Mflops falls as 1/c: c = {hi} <= {bound:.2f} x c = {lo} (paper 0.09)',
                _all(lambda v: v <= bound, rel.values()), _show(rel.items())),
        Verdict(f'per-call MB/s falls as 1/c (the link is shared): <= {bound:.2f} (paper 0.09)',
                _all(lambda v: v <= bound, mrel.values()), _show(mrel.items())),
        Verdict('the server stays idle: utilization <= 30 % at every point (paper 4-16 %)',
                util <= 30, f'max {util:.0f} %'),
        Verdict(f'larger n is faster at c = {lo}',
                firsts == sorted(firsts) if len(firsts) >= 2 and None not in firsts else None,
                ' < '.join(_fmt(x) for x in firsts)),
    ]


def verdict_sites(rows):
    """Fig. 8, one admission's rows: four sites against one."""
    out = []
    cs = sorted({r['c'] for r in rows if r['label'] == 'four-sites'})
    if not cs:
        return [Verdict('four sites against one', None, 'no four-site point')]
    for c4 in cs:
        per = c4 // 4
        four = [r for r in rows if r['label'] == 'four-sites' and r['c'] == c4]
        one = [r for r in rows if r['label'] == 'one-site' and r['c'] == per]
        same = [r for r in rows if r['label'] == 'one-site' and r['c'] == c4]
        if not four or not one:
            continue
        f, o = four[0], one[0]
        ratio = f['total_mbs'] / o['total_mbs'] if o['total_mbs'] else 0
        out.append(Verdict(f'c = {per} per site: four sites >= 3x one site\'s total MB/s '
                           '(sum of the clients\' per-call MB/s)',
                           ratio >= 3, f'{ratio:.2f}x ({_fmt(f["total_mbs"])} against '
                           f'{_fmt(o["total_mbs"])} MB/s)'))
        if same:
            # Bytes moved per second by the same c4 clients behind four links
            # against one: links used at once (the 1998 server) or in turn.
            r2 = _ratio(f.get('delivered_mbs'), same[0].get('delivered_mbs'))
            out.append(Verdict(f'c = {per} per site: the same {c4} clients behind four links move '
                               '>= 2x the bytes per second of one link (transfers overlap)',
                               None if r2 is None else r2 >= 2, f'{_fmt(r2)}x'))
        # Per-client performance with the other sites calling against site
        # a alone: equal when the links are independent and the server
        # overlaps their transfers (the paper's point), lower when calls
        # queue at the server for their turn on the link.
        prel = f['mflops'][2] / o['mflops'][2] if o['mflops'][2] else 0
        out.append(Verdict(f'c = {per} per site: per-client Mflops with four sites >= 0.7 x one '
                           'site alone (the paper: site a lost 9-44 % of its throughput)',
                           prel >= 0.7, f'{prel:.2f}'))
        drop = 1 - f['site_a_mbs'] / o['mbs'][2] if o['mbs'][2] else 1
        hi = paper.FIG8_SITE_A_DROP.get(per, (0, 0.44))[1]
        out.append(Verdict(f'c = {per}: site a\'s per-call MB/s falls <= {hi:.0%} with the others '
                           'calling', drop <= hi, f'{drop:.0%}'))
        out.append(Verdict(f'c = {per}: the server is not the limit: utilization <= 50 % '
                           '(paper 20-34 %)', f['util'] <= 50, f'{f["util"]:.0f} %'))
    if len(cs) >= 2:
        a = [r for r in rows if r['label'] == 'four-sites' and r['c'] == cs[0]][0]
        b = [r for r in rows if r['label'] == 'four-sites' and r['c'] == cs[-1]][0]
        rel = b['mflops'][2] / a['mflops'][2] if a['mflops'][2] else 0
        out.append(Verdict(f'per-client Mflops changes little from c = {cs[0] // 4} to '
                           f'{cs[-1] // 4} per site (>= 0.5; the one-to-one link limits)',
                           rel >= 0.5, f'{rel:.2f}'))
    return out


def verdict_ep(rows, cores):
    """Table 8: held to c = cores, then 1/2 and 1/4; LAN = WAN."""
    lan = _by(rows, label='LAN')
    wan = _by(rows, label='WAN')
    cs = sorted({r['c'] for r in lan})
    if len(cs) < 2:
        return [Verdict('EP shape', None, 'needs two client counts')]
    n = lan[0]['n']
    base = _mean_at(lan, n, cs[0])
    if not base or any(_mean_at(lan, n, c) is None for c in cs):
        return [Verdict('EP shape', None, 'a LAN point without a successful call')]
    out = []
    held = [c for c in cs if c <= cores]
    held_rel = min(_mean_at(lan, n, c) / base for c in held)
    out.append(Verdict(f'per-call Mflops held up to c = {cores} (>= 0.85 of c = 1)',
                       held_rel >= 0.85, f'{held_rel:.2f}'))
    past = [c for c in cs if c > cores]
    if past:
        checks = [(_mean_at(lan, n, c) / base, cores / c) for c in past]
        out.append(Verdict('past the cores it falls as cores / c (within 25 %)',
                           all(abs(x / e - 1) <= 0.25 for x, e in checks),
                           ', '.join(f'c={c}: {x:.2f} (1/c: {e:.2f})'
                                     for c, (x, e) in zip(past, checks))))
    sat = [r['util'] for r in lan if r['c'] >= cores]
    if sat:
        out.append(Verdict(f'the server saturates from c = {cores}: utilization >= 85 %',
                           min(sat) >= 85, f'min {min(sat):.0f} %'))
    diffs = []
    for c in cs:
        a, b = _mean_at(lan, n, c), _mean_at(wan, n, c)
        if a and b:
            diffs.append((c, b / a - 1))
    out.append(Verdict('LAN and WAN per-call Mflops within 10 % at every c',
                       all(abs(d) <= 0.10 for _, d in diffs) if diffs else None,
                       ', '.join(f'c={c}: {d:+.0%}' for c, d in diffs)))
    return out


def verdicts(item, rows, cores):
    if item in ('table3', 'table4'):
        main = '1pe' if item == 'table3' else '4pe'
        out = verdict_lan(_by(rows, version=main), cores)
        if item == 'table4':
            out += verdict_versions(_by(rows, version='4pe'), _by(rows, version='1pe'),
                                    paper.TABLE4, paper.TABLE3)
        return out
    if item == 'table5':
        return verdict_smp(rows, cores)
    if item == 'fig6':
        return verdict_surface(rows, cores)
    if item in ('table6', 'table7'):
        main = '1pe' if item == 'table6' else '4pe'
        out = verdict_wan(_by(rows, version=main))
        if item == 'table7':
            out += verdict_versions(_by(rows, version='4pe'), _by(rows, version='1pe'),
                                    paper.TABLE7, paper.TABLE6)
        return out
    if item == 'fig8':
        return verdict_sites(rows)
    if item == 'table8':
        return verdict_ep(rows, cores)
    raise ValueError(item)


# ---- set-up check: is the scaled set-up the paper's? ------------------------------

def setup_checks(item, rows):
    """Per n at the smallest c: our T_call/s and transfer share against the
    paper's (its call time = operations / its per-call Mflops, its transfer
    time = its bytes / its MB/s, both at c = 1), so a reader sees whether
    the calibration reproduced the paper's ratios."""
    table = paper.LINPACK_TABLES.get(item)
    if not table or not rows:
        return []
    nmap = paper_n(rows, item)
    lo = min(r['c'] for r in rows)
    lines = ['| n (paper n) | version | T_call/s | paper | transfer share | paper |',
             '|---|---|---|---|---|---|']
    for r in sorted((r for r in rows if r['c'] == lo), key=lambda r: (r['version'], r['n'])):
        pn = nmap.get(r['n'])
        t = table
        if item in ('table4', 'table7') and r['version'] == '1pe':
            t = paper.COMPANION[item]
        p = t.get((pn, _paper_c(item, r)))
        if not p or r['interval'] <= 0:
            continue
        p_call = linpack_flops(pn) / (p[2] * 1e6)
        p_share = paper_bytes(pn) / (p[5] * 1e6) / p_call
        lines.append(f"| {r['n']} ({pn}) | {r['version']} | {r['response_mean'] / r['interval']:.2f} | "
                     f"{p_call / paper.STEP_S:.2f} | {r['transfer_share']:.0%} | {p_share:.0%} |")
    return lines if len(lines) > 2 else []


# ---- rendering -------------------------------------------------------------------

def _triple(t, d=2):
    return '/'.join(_fmt(x, d) for x in t)


def linpack_table(item, rows, table):
    nmap = paper_n(rows, item)
    lines = ['| n (paper n) | c | Mflops max/min/mean | paper | MB/s max/min/mean | paper '
             '| util % (measured) | paper | load | paper | T_call/s | transfer share '
             '| clients\' CPU % | calls (failed) |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in sorted(rows, key=lambda r: (r['n'], r['t'], r['c'])):
        pn = nmap.get(r['n'])
        p = table.get((pn, _paper_c(item, r))) if table else None
        ts = r['response_mean'] / r['interval'] if r['interval'] > 0 else float('nan')
        tcol = f" t={r['t']}" if item == 'fig6' else ''
        lines.append(
            f"| {r['n']} ({pn or '-'}){tcol} | {r['c']} | {_triple(r['mflops'])} | "
            f"{_triple(p[0:3]) if p else '-'} | {_triple(r['mbs'], 3)} | "
            f"{_triple(p[3:6], 3) if p else '-'} | {r['util']:.1f} | {_fmt(p[6], 1) if p else '-'} | "
            f"{r['load']:.2f} | {_fmt(p[7]) if p else '-'} | {ts:.2f} | {r['transfer_share']:.0%} | "
            f"{r['client_util']:.0f} | {r['ok']} ({r['failed']}) |")
    return lines


def _paper_c(item, r):
    return r.get('paper_c', r['c'])


def ep_table(rows):
    lines = ['| net | c | Mflops max/min/mean | paper | comm. s max/min/mean | paper '
             '| util % | paper | load | paper | calls (failed) |',
             '|---|---|---|---|---|---|---|---|---|---|---|']
    for r in sorted(rows, key=lambda r: (r['label'], r['c'])):
        p = paper.TABLE8.get((r['label'], r['c']))
        lines.append(
            f"| {r['label']} | {r['c']} | {_triple(r['mflops'])} | {_triple(p[0:3]) if p else '-'} | "
            f"{_triple(r['comm'], 3)} | {_triple(p[3:6]) if p else '-'} | {r['util']:.1f} | "
            f"{_fmt(p[6], 1) if p else '-'} | {r['load']:.2f} | {_fmt(p[7]) if p else '-'} | "
            f"{r['ok']} ({r['failed']}) |")
    return lines


def sites_table(rows):
    lines = ['| point | c (total) | per-client Mflops max/min/mean | per-call MB/s mean '
             '| site a per-call MB/s | total MB/s (sum over clients) | delivered MB/s '
             '| util % | load | calls (failed) |',
             '|---|---|---|---|---|---|---|---|---|---|']
    for r in sorted(rows, key=lambda r: (r['c'], r['label'])):
        lines.append(f"| {r['label']} | {r['c']} | {_triple(r['mflops'])} | {r['mbs'][2]:.3f} | "
                     f"{r['site_a_mbs']:.3f} | {r['total_mbs']:.3f} | "
                     f"{r.get('delivered_mbs', 0):.3f} | {r['util']:.1f} | "
                     f"{r['load']:.2f} | {r['ok']} ({r['failed']}) |")
    return lines


def surface_table(rows, cores):
    ts = sorted({r['t'] for r in rows})
    cs = sorted({r['c'] for r in rows})
    lines = shared.md_head(['t \\ c'] + cs, 'l' * (len(cs) + 1))
    for t in ts:
        cells = []
        for c in cs:
            hit = _by(rows, t=t, c=c)
            v = _fmt(hit[0]['mflops'][2], 0) if hit else '-'
            cells.append(f'**{v}**' if c * t <= cores else v)
        lines.append(shared.md_row([t] + cells))
    return lines


def plot(item, rows, cores, path):
    plt = shared.pyplot(required=False)
    if plt is None:
        return False
    if item == 'fig6':
        ts = sorted({r['t'] for r in rows})
        cs = sorted({r['c'] for r in rows})
        grid = [[(_by(rows, t=t, c=c) or [{'mflops': (0, 0, float('nan'))}])[0]['mflops'][2]
                 for c in cs] for t in ts]
        fig, ax = plt.subplots(figsize=(6, 4))
        im = ax.imshow(grid, origin='lower', aspect='auto', cmap='viridis')
        ax.set_xticks(range(len(cs)), [str(c) for c in cs])
        ax.set_yticks(range(len(ts)), [str(t) for t in ts])
        for i, t in enumerate(ts):
            for j, c in enumerate(cs):
                ax.text(j, i, f'{grid[i][j]:.0f}', ha='center', va='center', color='w', fontsize=8)
        # The region c x t <= cores outlined, its edge c x t = cores in red
        # (the paper: good below the diagonal, collapse above it).
        from matplotlib.patches import Rectangle
        first = True
        for i, t in enumerate(ts):
            for j, c in enumerate(cs):
                if c * t <= cores:
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=2,
                                           ec='red' if c * t == cores else 'white', ls='--',
                                           label=f'c x t <= {cores} cores' if first else None))
                    first = False
        if not first:
            ax.legend(loc='upper right', fontsize=8)
        ax.set_xlabel('clients c')
        ax.set_ylabel('threads per call t')
        ax.set_title('Fig. 6 analog: mean per-call Mflops')
        fig.colorbar(im, ax=ax, label='Mflops')
    elif item == 'fig8':
        adms = sorted({r['admission'] for r in rows})
        fig, axes = plt.subplots(2, 1, figsize=(7, 6))
        labels, mfl, tot = [], [], []
        for adm in adms:
            for r in sorted(_by(rows, admission=adm), key=lambda r: (r['c'], r['label'])):
                name = (f"four sites\n{r['c'] // 4} each" if r['label'] == 'four-sites'
                        else f"one site\nc = {r['c']}")
                labels.append(name + (f'\n{adm}' if len(adms) > 1 else ''))
                mfl.append(r['mflops'][2])
                tot.append(r['total_mbs'])
        axes[0].bar(range(len(labels)), mfl, color='tab:blue')
        axes[0].set_ylabel('per-client Mflops')
        axes[1].bar(range(len(labels)), tot, color='tab:orange')
        axes[1].set_ylabel('total MB/s')
        for ax in axes:
            ax.set_xticks(range(len(labels)), labels, fontsize=7)
        axes[0].set_title('Fig. 8 analog: four sites against one (4-PE)')
    else:
        fig, ax = plt.subplots(figsize=(6, 4))
        for key in sorted({(r['label'], r['n']) for r in rows}):
            sel = sorted(_by(rows, label=key[0], n=key[1]), key=lambda r: r['c'])
            ax.plot([r['c'] for r in sel], [r['mflops'][2] for r in sel], 'o-',
                    label=f'{key[0]} n={key[1]}')
        ax.set_xscale('log', base=2)
        ax.set_xlabel('clients c')
        ax.set_ylabel('mean per-call Mflops')
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


TITLES = {
    'table3': 'Table 3: LAN Linpack, 1-PE version',
    'table4': 'Table 4: LAN Linpack, 4-PE version (beside 1-PE)',
    'table5': 'Table 5: SMP server, task-parallel 1-PE Linpack',
    'fig6': 'Fig. 6: per-call Mflops over clients x threads per call',
    'table6': 'Table 6: WAN single site, 1-PE Linpack',
    'table7': 'Table 7: WAN single site, 4-PE Linpack (beside 1-PE)',
    'fig8': 'Fig. 8: WAN, four unequal sites against one, 4-PE',
    'table8': 'Table 8: EP on the LAN and a single-site WAN',
}


def render(item, rows, cores, notes, args, plotted):
    out = [f'# Seed 004 {TITLES[item]}', '']
    out.append(f'`{args.command}` on {args.machine}, {args.date}, commit {args.commit}.')
    if args.quick and args.quick != '0':
        out += ['', '**A --quick smoke run: the smallest settings, numbers that mean little.**']
    out += ['', '## Set-up', '']
    out += [f'- {line}' for line in notes]
    out += ['', '## The paper\'s claim', '', paper.CLAIMS[item], '']
    groups = sorted({(r['version'], r['admission']) for r in rows})
    out += ['## Shape verdict (computed from the data)', '']
    out += shared.md_head(['admission', 'claim', 'verdict', 'evidence'], 'llll')
    for adm in sorted({r['admission'] for r in rows}):
        for v in verdicts(item, _by(rows, admission=adm), cores):
            out.append(shared.md_row([adm, v.claim, v.mark(), v.evidence]))
    check = setup_checks(item, rows)
    if check:
        out += ['', '## Set-up check: the paper\'s ratios at the smallest c', '']
        out += check
    out += ['', '## Results beside the paper\'s', '']
    out.append('Utilization is the server group\'s measured CPU time / (wall time x its cores); '
               'load is the server\'s running + queued calls (mean of the samples), the nearest '
               'to the paper\'s running + runnable processes (a call still receiving its '
               'arguments is blocked on I/O, not runnable, as the WAN tables\' load of 0.5 '
               'at c = 16 shows); MB/s is bytes / transfer time per '
               'call; T_call/s is the mean call time over the step; "clients\' CPU" is their '
               'group\'s CPU time over its cores.')
    out.append('')
    for version, adm in groups:
        sel = _by(rows, version=version, admission=adm)
        if item in paper.LINPACK_TABLES or item == 'fig6':
            table = paper.LINPACK_TABLES.get(item)
            if item in ('table4', 'table7') and version == '1pe':
                table = paper.COMPANION[item]
            if item == 'fig6':
                continue
            out += [f'### {version}, admission {adm}', '']
            out += linpack_table(item, sel, table) + ['']
    if item == 'fig6':
        for adm in sorted({r['admission'] for r in rows}):
            out += [f'### mean per-call Mflops, admission {adm} (bold: c x t <= {cores} cores)', '']
            out += surface_table(_by(rows, admission=adm), cores) + ['']
            out += linpack_table(item, _by(rows, admission=adm), None) + ['']
    if item == 'fig8':
        for adm in sorted({r['admission'] for r in rows}):
            out += [f'### admission {adm}', ''] + sites_table(_by(rows, admission=adm)) + ['']
    if item == 'table8':
        for adm in sorted({r['admission'] for r in rows}):
            out += [f'### admission {adm}', ''] + ep_table(_by(rows, admission=adm)) + ['']
    if plotted:
        out += [f'Plot: `{os.path.basename(args.plot)}`.', '']
    return '\n'.join(out)


# ---- the index (bench/results/seed004/README.md) ------------------------------------

def index_verdict(text):
    """One line from a result file's verdict table: how many claims hold,
    per admission; "not yet run" for no file."""
    if text is None:
        return 'not yet run'
    counts = {}
    quick = '--quick smoke run' in text
    in_table = False
    for line in text.splitlines():
        if line.startswith('## Shape verdict'):
            in_table = True
            continue
        if in_table and line.startswith('## '):
            break
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if in_table and len(cells) == 4 and cells[2] in ('holds', 'does not hold', 'no data'):
            held, total = counts.get(cells[0], (0, 0))
            counts[cells[0]] = (held + (cells[2] == 'holds'), total + 1)
    if not counts:
        return 'no verdict table'
    parts = [f'{h} of {t} claims hold ({adm})' for adm, (h, t) in sorted(counts.items())]
    return ('quick run only: ' if quick else '') + '; '.join(parts)


def _read_or_none(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def index_rows(results):
    """{item: verdict} for the multi-client items, from results/ITEM.md (run
    1) and, once it exists, ITEM-run2.md beside it."""
    out = {}
    for item in TITLES:
        first = _read_or_none(os.path.join(results, f'{item}.md'))
        second = _read_or_none(os.path.join(results, f'{item}-run2.md'))
        if first is None and second is None:
            out[item] = 'not yet run'
        else:
            out[item] = (f'run 1: {index_verdict(first)}; '
                         f'run 2: {index_verdict(second)}')
    return out


def update_index(text, verdicts_now):
    """README.md's table with the verdict cell of each multi-client item's
    row (the row whose file cell names `ITEM.md` or `ITEM.{md,png}`)
    replaced; other rows (the single-client items) are left alone."""
    out = []
    for line in text.splitlines():
        cells = line.split('|')
        if len(cells) == 7:
            for item, verdict in verdicts_now.items():
                if f'`{item}.md`' in cells[4] or f'`{item}.{{md,png}}`' in cells[4]:
                    cells[5] = f' {verdict} '
                    line = '|'.join(cells)
        out.append(line)
    return '\n'.join(out) + '\n'


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('render')
    r.add_argument('item', choices=sorted(TITLES))
    r.add_argument('folder')
    r.add_argument('--command', default='?')
    r.add_argument('--plot', default='')
    r.add_argument('--notes', default='')
    r.add_argument('--machine', default='?')
    r.add_argument('--commit', default='?')
    r.add_argument('--date', default='?')
    r.add_argument('--quick', default='0')
    c = sub.add_parser('calibrate')
    c.add_argument('calls')
    c.add_argument('n', type=int)
    c.add_argument('n_paper', type=int)
    c.add_argument('j90_mflops', type=float)
    c.add_argument('lan_mbs', type=float)
    c.add_argument('wan_mbs', type=float)
    i = sub.add_parser('index')
    i.add_argument('results', help='bench/results/seed004')
    i.add_argument('--write', action='store_true', help="fill README.md's verdict column")
    args = ap.parse_args(argv)
    if args.cmd == 'index':
        verdicts_now = index_rows(args.results)
        if args.write:
            readme = os.path.join(args.results, 'README.md')
            with open(readme) as f:
                text = f.read()
            with open(readme, 'w') as f:
                f.write(update_index(text, verdicts_now))
        for item, verdict in verdicts_now.items():
            print(f'{item}: {verdict}')
        return 0
    if args.cmd == 'calibrate':
        f, tau, step, lan, wan = calibration(read_csv(args.calls), args.n, args.n_paper,
                                             args.j90_mflops, args.lan_mbs, args.wan_mbs)
        # Rates in kbit, as tc spells them (ninf-sites takes NUMBERkbit).
        print(f'{f:.0f} {tau:.5f} {step:.4f} {max(1, round(lan / 1000))} {max(1, round(wan / 1000))}')
        return 0
    rows = load_points(args.folder)
    rows = own_rows(args.item, rows)
    if not rows:
        print(f'report.py: no points in {args.folder}', file=sys.stderr)
        return 1
    cores = rows[0]['server_cores']
    notes = []
    if args.notes and os.path.exists(args.notes):
        with open(args.notes) as f:
            notes = [line.strip() for line in f if line.strip()]
    plotted = bool(args.plot) and plot(args.item, rows, cores, args.plot)
    print(render(args.item, rows, cores, notes, args, plotted))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
