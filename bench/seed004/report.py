#!/usr/bin/python3
"""Seed 004's multi-client items (Tables 3-8, Figs. 6 and 8): the tables,
plots and shape verdicts of bench/seed004/ITEM.sh's runs, from the raw
data a run leaves (points.csv, calls-ID.csv, summary-ID.csv).

  report.py render ITEM DIR [--command C] [--plot PNG] [--notes FILE] ...
      the report of one item in Markdown on stdout, the plot into PNG
  report.py duration ITEM VERSION N_PAPER C TAU MINIMUM
      the seconds a point must run (point_seconds)
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
import re
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


def point_seconds(item, version, n_paper, c, tau, minimum):
    """How long a point must run: at least `minimum`, and CALLS_PER_POINT of
    its longest call, estimated as c of the paper's c = 1 calls at n_paper
    scaled by tau (what the calibration made of its time scale; c calls at
    once share the link or the cores). Items without such a row (the SMP
    items, EP) keep `minimum`."""
    table = paper.LINPACK_TABLES.get(item)
    if item in ('table4', 'table7') and version == '1pe':
        table = paper.COMPANION[item]
    if item == 'fig8':
        table = paper.TABLE7  # its sites' links stand for Table 7's, 4-PE
    row = table.get((n_paper, 1)) if table else None
    if not row or row[2] <= 0:
        return minimum
    call = linpack_flops(n_paper) / (row[2] * 1e6) * tau
    return max(minimum, int(CALLS_PER_POINT * c * call + 0.999))


# ---- one point ---------------------------------------------------------------

def _describe(values):
    if not values:
        return (0.0, 0.0, 0.0)
    return (max(values), min(values), sum(values) / len(values))


def link_mbs(rate):
    """A tc rate as points.csv gives it ("28990kbit", "40mbit") in MB/s, or
    None for none."""
    for unit, scale in (('kbit', 1e3), ('mbit', 1e6), ('gbit', 1e9), ('bit', 1.0)):
        if rate.endswith(unit) and rate[:-len(unit)].replace('.', '', 1).isdigit():
            return float(rate[:-len(unit)]) * scale / 8 / 1e6
    return None


def notes_facts(lines):
    """What the set-up notes say of the links: {'sites': {id: MB/s},
    'server': the server site's MB/s or None, 'lan_links': count or None}."""
    sites, server, lan_links = {}, None, None
    for line in lines:
        m = re.match(r'site (\w+): (\d+) kbit/s', line)
        if m:
            sites[m.group(1)] = int(m.group(2)) * 1e3 / 8 / 1e6
        m = re.match(r'server site \w+: (\d+) kbit/s', line)
        if m:
            server = int(m.group(1)) * 1e3 / 8 / 1e6
        m = re.match(r'LAN: (\d+) links? of', line)
        if m:
            lan_links = int(m.group(1))
        if line.startswith('LAN: one link of'):
            lan_links = 1
    return {'sites': sites, 'server': server, 'lan_links': lan_links}


def capacity(row, facts):
    """The emulated links' capacity a point's calls could use, MB/s, or None
    where no link is emulated: every site's link for a four-site point, the
    clients' links for a LAN point (min(c, links) of them), else the one
    link; never more than a shared path to the server carries."""
    if row['site'] == 'all' and facts['sites']:
        links = sum(facts['sites'].values())
    elif row['link_mbs'] is None:
        return None
    elif row['site'] == 'lan':
        links = row['link_mbs'] * (1 if row['lan_shared'] else
                                   min(row['c'], facts['lan_links'] or row['c']))
    else:
        links = row['link_mbs']
    return min(links, facts['server']) if facts.get('server') else links


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
    st['longest'] = max(resp) if resp else 0.0
    # A call lost is one that did not complete, whether the client saw it
    # fail or the point ended without it.
    st['failed'] = max(st['failed'], int(point.get('failed') or 0))
    compute_shares = [float(r['compute_s']) / float(r['response_s']) for r in ok
                      if float(r['response_s']) > 0]
    st['compute_share'] = sum(compute_shares) / len(compute_shares) if compute_shares else 0.0
    # Bytes moved over wall time: what crossed the links, whatever the
    # client model left idle.
    st['aggregate_mbs'] = sum(float(r['bytes']) for r in ok) / wall / 1e6 if wall > 0 else 0.0
    st['link_mbs'] = link_mbs(point.get('link_rate', ''))
    st['shared_path'] = point.get('shared_path', '0') == '1'
    st['lan_shared'] = point.get('lan_shared', '0') == '1'
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
    notes = os.path.join(folder, 'notes.txt')
    facts = notes_facts(open(notes).read().splitlines() if os.path.exists(notes) else [])
    for p in read_csv(os.path.join(folder, 'points.csv')):
        calls = read_csv(os.path.join(folder, f"calls-{p['id']}.csv"))
        summary = read_csv(os.path.join(folder, f"summary-{p['id']}.csv"))
        st = point_stats(p, calls, summary)
        st['capacity_mbs'] = capacity(st, facts)
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

# Size claims compare an effect with the paper's own numbers, within a
# margin fixed here before any run: at least SIZE_LOW x the paper's weakest
# value (for an advantage, SIZE_LOW x its gain over 1) and at most
# SIZE_HIGH x its strongest.
SIZE_LOW, SIZE_HIGH = 0.8, 1.25
# A point must last this many of its longest calls: a shorter one averages
# the few calls that fit, with contention falling in its tail.
CALLS_PER_POINT = 5
# What bytes moved over wall time may exceed the emulated links' capacity
# by before the measurement itself is wrong (the calls' bytes include the
# few that go the other way).
CAPACITY_SLACK = 1.05

# An item's verdict, from its claims (item_verdict), in this vocabulary.
VOCABULARY = ('holds', 'holds qualitatively', 'partly', 'not testable here', 'does not hold')
MARKS = ('holds', 'does not hold', 'no data', 'not testable here')


class Verdict:
    """One claim checked on the data. `holds` is True, False or None (no
    data). `kind` is 'shape' (the direction the paper shows), 'size' (the
    effect against the paper's own numbers, SIZE_LOW/SIZE_HIGH) or
    'validity' (what makes a run's numbers mean something: no call lost,
    points long enough, no more bytes than the links carry). `untestable`, when
    set, says why this machine or set-up cannot test the claim: the verdict
    is then "not testable here", never "holds"."""

    def __init__(self, claim, holds, evidence, kind='shape', untestable=None):
        self.claim, self.holds, self.evidence = claim, holds, evidence
        self.kind, self.untestable = kind, untestable

    def mark(self):
        if self.untestable:
            return 'not testable here'
        return {True: 'holds', False: 'does not hold', None: 'no data'}[self.holds]

    def shown_evidence(self):
        return f'{self.untestable}; measured: {self.evidence}' if self.untestable else self.evidence


def item_verdict(marks):
    """An item's verdict from its claims' (kind, mark) pairs: "holds" when
    every testable claim holds; "holds qualitatively" when every shape and
    validity claim holds and a size claim does not; "partly" when some
    shape claims hold, or all do in a run that is not valid; "does not
    hold" when no shape claim does; "not testable here" when no claim is
    testable. A claim without data counts as not holding."""
    tested = [(k, m) for k, m in marks if m != 'not testable here']
    if not tested:
        return 'not testable here'

    def held(kind):
        return [m == 'holds' for k, m in tested if k == kind]

    shape, size, validity = held('shape'), held('size'), held('validity')
    if shape and not any(shape):
        return 'does not hold'
    if not all(shape) or not all(validity):
        return 'partly'
    return 'holds' if all(size) else 'holds qualitatively'


def within_paper(value, lo, hi):
    """Whether `value` is within the paper's [lo, hi] widened by the margins."""
    return None if value is None else SIZE_LOW * lo <= value <= SIZE_HIGH * hi


def advantage_of_paper(ratio, paper_lo):
    """Whether a speed-up `ratio` gains at least SIZE_LOW of the paper's
    smallest gain (paper_lo - 1)."""
    return None if ratio is None else ratio - 1 >= SIZE_LOW * (paper_lo - 1)


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


def _paper_rel(table, col, c_hi, c_lo=1):
    """(lowest, highest) over the paper's sizes of its column `col` at c_hi
    over c_lo, or None when the table has no such pair."""
    ratios = [table[(n, c_hi)][col] / table[(n, c_lo)][col]
              for n in sorted({n for n, _ in table})
              if (n, c_hi) in table and (n, c_lo) in table and table[(n, c_lo)][col]]
    return (min(ratios), max(ratios)) if ratios else None


def _size_claim(what, values, band, unit=''):
    """A size claim: every value within the paper's band and the margins."""
    lo, hi = band
    return Verdict(f'{what} within the paper\'s {lo:.3f}-{hi:.3f}{unit} '
                   f'(x{SIZE_LOW} to x{SIZE_HIGH}: {SIZE_LOW * lo:.3f}-{SIZE_HIGH * hi:.3f})',
                   _all(lambda v: within_paper(v, lo, hi), values.values()),
                   _show(values.items(), 3), kind='size')


# Why per-call MB/s cannot fall with c when every client has a link of its own.
OWN_LINKS = ('each client has a link of its own (--lan-links): nothing shared can slow a '
             'client\'s transfer, so MB/s cannot fall with c')


def verdict_lan(rows, cores, table=paper.TABLE3):
    """Tables 3/4 on one version's rows: the paper's shape (a)-(f), and its
    effect sizes from `table` (the paper's table of this version)."""
    out = []
    sizes = sorted({r['n'] for r in rows})
    cs = sorted({r['c'] for r in rows})
    if not sizes or len(cs) < 2:
        return [Verdict('per-call Mflops falls with c', None, 'needs two client counts')]
    lo, hi = cs[0], cs[-1]
    rel = {n: _ratio(_mean_at(rows, n, hi), _mean_at(rows, n, lo)) for n in sizes}
    out.append(Verdict(f'(a) per-call Mflops falls with c: mean at c = {hi} <= 0.5 x c = {lo}',
                       _all(lambda v: v <= 0.5, rel.values()), _show(rel.items())))
    band = _paper_rel(table, 2, hi, lo)
    if band:
        out.append(_size_claim(f'(a) size: c = {hi} / c = {lo} per-call Mflops', rel, band))
    shared_link = any(r['lan_shared'] for r in rows)
    mrel = {n: _ratio(_mbs_at(rows, n, hi), _mbs_at(rows, n, lo)) for n in sizes}
    untestable = None if shared_link else OWN_LINKS
    out.append(Verdict(f'(b) per-call MB/s falls with c: c = {hi} <= 0.5 x c = {lo}',
                       _all(lambda v: v <= 0.5, mrel.values()), _show(mrel.items()),
                       untestable=untestable))
    band = _paper_rel(table, 5, hi, lo)
    if band:
        v = _size_claim(f'(b) size: c = {hi} / c = {lo} per-call MB/s', mrel, band)
        v.untestable = untestable
        out.append(v)
    # The paper: saturated by c = 8, twice its 4 PEs (82-100 % there).
    sat_c = next((c for c in cs if c >= 2 * cores), hi)
    sat = {n: _by(rows, n=n, c=sat_c)[0]['util'] for n in sizes if _by(rows, n=n, c=sat_c)}
    out.append(Verdict(f'(c) the server saturates by c = 2 x cores: measured utilization >= 80 % '
                       f'at c = {sat_c} (paper: 82-100 % at c = 8, twice its 4 PEs)',
                       _all(lambda v: v >= 80, sat.values()), _show(sat.items(), 0, ' %')))
    loads = {n: _by(rows, n=n, c=hi)[0]['load'] for n in sizes if _by(rows, n=n, c=hi)}
    loads = {n: (None if v != v else v / hi) for n, v in loads.items()}  # NaN: no samples
    out.append(Verdict(f'(d) load approaches c: load / c at c = {hi} >= 0.6',
                       _all(lambda v: v >= 0.6, loads.values()), _show(loads.items())))
    # No size claim for load: the paper counted runnable processes (a 4-PE
    # call's threads too, so its load passed c), ours counts calls.
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
    (lowest, highest) (Tables 3/4 on the LAN, 6/7 on the WAN)."""
    ratios = [top[(n, c)][2] / bottom[(n, c)][2]
              for n in sorted({n for n, cc in top if cc == c})
              if (n, c) in bottom and bottom[(n, c)][2]]
    return (min(ratios), max(ratios)) if ratios else None


def _band_text(band):
    return f'{band[0]:.2f}-{band[1]:.2f}' if band else '?'


# A gain this set-up can give of less than this cannot be told from the
# run-to-run noise of one machine (two runs of the same binary differ by
# about as much).
NOISE = 0.05


def most_gain(share, threads):
    """The largest speed-up k threads can give a call whose compute is
    `share` of it: the rest (transfer, waiting) does not get faster."""
    return 1 / (1 - share * (1 - 1 / threads)) if threads > 1 else 1.0


def verdict_versions(four, one, paper_four, paper_one, threads=None):
    """Table 4 (and 7): 4-PE against 1-PE at the smallest and largest c,
    beside the paper's own ratios from `paper_four` and `paper_one` (its
    4-PE and 1-PE tables of the same network). `threads`: how many the
    4-PE version runs a call on here; the gain it can give at most follows
    from the 1-PE calls' compute share, and a claim beyond that is not
    testable here."""
    if not four or not one:
        return [Verdict('4-PE against 1-PE', None, 'needs both versions (--versions "4pe 1pe")')]
    cs = sorted({r['c'] for r in four} & {r['c'] for r in one})
    sizes = sorted({r['n'] for r in four} & {r['n'] for r in one})
    lo, hi = cs[0], cs[-1]
    win = {n: _ratio(_mean_at(four, n, lo), _mean_at(one, n, lo)) for n in sizes}
    tie = {n: _ratio(_mean_at(one, n, hi), _mean_at(four, n, hi)) for n in sizes}
    paper_win = _paper_ratio_range(paper_four, paper_one, 1)
    paper_tie = _paper_ratio_range(paper_one, paper_four, 16)
    shares = [r['compute_share'] for r in one if r['c'] == lo and r.get('compute_share')]
    bound = most_gain(max(shares), threads) if shares and threads else None
    need = 1 + SIZE_LOW * (paper_win[0] - 1) if paper_win else None
    why = (f'a 1-PE call here computes {max(shares):.0%} of its time and the 4-PE version has '
           f'{threads} threads, so it can be at most {bound:.3f}x faster' if bound else None)
    out = [Verdict(f'4-PE faster than 1-PE at c = {lo} (paper {_band_text(paper_win)}x)',
                   _all(lambda v: v > 1.0, win.values()), _show(win.items(), 3, 'x'),
                   untestable=(f'{why}: within the {NOISE:.0%} noise' if bound and bound < 1 + NOISE
                               else None))]
    if paper_win:
        out.append(Verdict(f'4-PE advantage at c = {lo} at least x{SIZE_LOW} of the paper\'s '
                           f'smallest gain (>= {need:.3f}x; paper {_band_text(paper_win)}x)',
                           _all(lambda v: advantage_of_paper(v, paper_win[0]), win.values()),
                           _show(win.items(), 3, 'x'), kind='size',
                           untestable=(f'{why}, below the {need:.3f}x asked' if bound and bound < need
                                       else None)))
    out.append(Verdict(f'near tie at c = {hi}: 1-PE / 4-PE within 0.8-1.3 (paper '
                       f'{_band_text(paper_tie)})',
                       _all(lambda v: 0.8 <= v <= 1.3, tie.values()), _show(tie.items())))
    return out


def verdict_smp(rows, cores):
    """Table 5: with c <= cores the per-call fall is small and headroom stays."""
    cs = sorted({r['c'] for r in rows})
    if len(cs) < 2:
        return [Verdict('small fall with c <= cores', None, 'needs two client counts')]
    n = sorted({r['n'] for r in rows})[0]
    lo, hi = _mean_at(rows, n, cs[0]), _mean_at(rows, n, cs[-1])
    rel = _ratio(hi, lo)
    util = _by(rows, n=n, c=cs[-1])[0]['util']
    paper_rel = paper.TABLE5[(600, 16)][2] / paper.TABLE5[(600, 4)][2]
    return [
        Verdict(f'per-call Mflops barely falls: c = {cs[-1]} >= 0.6 x c = {cs[0]} (paper 0.74)',
                None if rel is None else rel >= 0.6, _fmt(rel)),
        _size_claim(f'size: c = {cs[-1]} / c = {cs[0]} per-call Mflops', {n: rel},
                    (paper_rel, paper_rel)),
        Verdict(f'headroom at c = {cs[-1]}: utilization < 95 % (paper 89.9 %)', util < 95,
                f'{util:.0f} %'),
    ]


def verdict_surface(rows, cores):
    """Fig. 6: good below the c x t = cores diagonal, collapse above it for
    high t, and only for high t."""
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

    def kept(t):  # what t keeps at the largest c of its c = 1 Mflops
        return _ratio(_mean_at(_by(rows, t=t), n, cs[-1]), _mean_at(_by(rows, t=t), n, cs[0]))

    big, small = ts[-1], ts[0]
    kb, ks = kept(big), kept(small)
    collapse = None if kb is None or ks is None or big == small else kb <= 0.25 and kb <= 0.5 * ks
    return [
        Verdict(f'good below the diagonal: every point with c x t <= {cores} keeps >= 0.7 of '
                'its t\'s c = 1 Mflops',
                (all(x >= 0.7 for x in below) if below else None),
                ', '.join(f'{x:.2f}' for x in below) or 'no such point past c = 1'),
        Verdict(f'collapse for high t only: t = {big} at c = {cs[-1]} keeps <= 0.25 of its '
                f'c = {cs[0]} Mflops and <= half of what t = {small} keeps',
                collapse, f't = {big}: {_fmt(kb)}, t = {small}: {_fmt(ks)}'),
    ]


def verdict_wan(rows, table=paper.TABLE6):
    """Tables 6/7: bandwidth-bound, idle server; effect sizes from `table`
    (the paper's table of this version)."""
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
    out = [
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
    band = _paper_rel(table, 2, hi, lo)
    if band:
        out.append(_size_claim(f'size: c = {hi} / c = {lo} per-call Mflops', rel, band))
    return out


# Why site a's drop says nothing when no path is shared.
NO_SHARED_PATH = ('the sites share no path in this set-up, so the others cannot slow site a: '
                  'a small drop is what independent links give whatever the server does')


def _sites_pair(rows, c4):
    per = c4 // 4
    four = [r for r in rows if r['label'] == 'four-sites' and r['c'] == c4]
    one = [r for r in rows if r['label'] == 'one-site' and r['c'] == per]
    same = [r for r in rows if r['label'] == 'one-site' and r['c'] == c4]
    return per, (four[0] if four else None), (one[0] if one else None), (same[0] if same else None)


def verdict_sites(rows):
    """Fig. 8, one admission's rows: four sites against one."""
    out = []
    cs = sorted({r['c'] for r in rows if r['label'] == 'four-sites'})
    if not cs:
        return [Verdict('four sites against one', None, 'no four-site point')]
    for c4 in cs:
        per, f, o, same = _sites_pair(rows, c4)
        if not f or not o:
            continue
        ratio = _ratio(f['aggregate_mbs'], o['aggregate_mbs'])
        out.append(Verdict(f'c = {per} per site: four sites move >= 3x the bytes per second of one '
                           'site (bytes over wall time)',
                           None if ratio is None else ratio >= 3,
                           f'{_fmt(ratio)}x ({_fmt(f["aggregate_mbs"])} against '
                           f'{_fmt(o["aggregate_mbs"])} MB/s)'))
        if same:
            # The same c4 clients behind four links against one: links used
            # at once (the 1998 server) or in turn.
            r2 = _ratio(f['aggregate_mbs'], same['aggregate_mbs'])
            out.append(Verdict(f'c = {per} per site: the same {c4} clients behind four links move '
                               '>= 2x the bytes per second of one link (transfers overlap)',
                               None if r2 is None else r2 >= 2, f'{_fmt(r2)}x'))
        # Per-client performance with the other sites calling against site
        # a alone: equal when the server overlaps their transfers (the
        # paper's point), lower when calls queue at the server for their
        # turn on the link.
        prel = f['mflops'][2] / o['mflops'][2] if o['mflops'][2] else 0
        out.append(Verdict(f'c = {per} per site: per-client Mflops with four sites >= 0.7 x one '
                           'site alone (the paper: site a lost 9-44 % of its throughput)',
                           prel >= 0.7, f'{prel:.2f}'))
        drop = 1 - f['site_a_mbs'] / o['mbs'][2] if o['mbs'][2] else 1
        band = paper.FIG8_SITE_A_DROP.get(per, (0.09, 0.44))
        untestable = None if f['shared_path'] else NO_SHARED_PATH
        out.append(Verdict(f'c = {per}: site a\'s per-call MB/s falls <= {SIZE_HIGH * band[1]:.0%} '
                           f'with the others calling (paper {band[0]:.0%}-{band[1]:.0%})',
                           drop <= SIZE_HIGH * band[1], f'{drop:.0%}', untestable=untestable))
        out.append(Verdict(f'c = {per}: site a\'s drop within the paper\'s {band[0]:.0%}-'
                           f'{band[1]:.0%} (x{SIZE_LOW} to x{SIZE_HIGH})',
                           within_paper(drop, *band), f'{drop:.0%}', kind='size',
                           untestable=untestable))
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
                                     for c, (x, e) in zip(past, checks)), kind='size'))
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


def _point_name(r):
    return f"{r['label']} n = {r['n']} c = {r['c']}" + (f" t = {r['t']}" if r['t'] != 1 else '')


def verdict_validity(rows):
    """What makes a run's numbers mean something, for every item: no call
    lost, every point long enough for its longest call, and no more bytes
    per second than the emulated links carry."""
    lost = sum(r['failed'] for r in rows)
    calls = sum(r['calls'] for r in rows)
    lossy = [f"{_point_name(r)}: {r['failed']}" for r in rows if r['failed']]
    out = [Verdict('no call lost: every call made completed', lost == 0,
                   f'{lost} of {calls} lost' + (f" ({', '.join(lossy[:4])})" if lossy else ''),
                   kind='validity')]
    spans = [(r['wall'] / r['longest'], r) for r in rows if r['longest'] > 0]
    if spans:
        least, r = min(spans, key=lambda x: x[0])
        out.append(Verdict(f'every point lasts >= {CALLS_PER_POINT} of its longest calls',
                           least >= CALLS_PER_POINT,
                           f'fewest: {least:.1f} ({_point_name(r)}: {r["wall"]:.0f} s, a call of '
                           f'{r["longest"]:.0f} s)', kind='validity'))
    loads = [(r['aggregate_mbs'] / r['capacity_mbs'], r) for r in rows if r.get('capacity_mbs')]
    if loads:
        most, r = max(loads, key=lambda x: x[0])
        out.append(Verdict('bytes moved over wall time within the emulated links\' capacity',
                           most <= CAPACITY_SLACK,
                           f'at most {most:.0%} of it ({_point_name(r)}: '
                           f'{r["aggregate_mbs"]:.2f} of {r["capacity_mbs"]:.2f} MB/s)',
                           kind='validity'))
    return out


def verdicts(item, rows, cores):
    if item in ('table3', 'table4'):
        main = '1pe' if item == 'table3' else '4pe'
        table = paper.TABLE3 if item == 'table3' else paper.TABLE4
        out = verdict_lan(_by(rows, version=main), cores, table)
        if item == 'table4':
            out += verdict_versions(_by(rows, version='4pe'), _by(rows, version='1pe'),
                                    paper.TABLE4, paper.TABLE3, cores)
    elif item == 'table5':
        out = verdict_smp(rows, cores)
    elif item == 'fig6':
        out = verdict_surface(rows, cores)
    elif item in ('table6', 'table7'):
        main = '1pe' if item == 'table6' else '4pe'
        out = verdict_wan(_by(rows, version=main),
                          paper.TABLE6 if item == 'table6' else paper.TABLE7)
        if item == 'table7':
            out += verdict_versions(_by(rows, version='4pe'), _by(rows, version='1pe'),
                                    paper.TABLE7, paper.TABLE6, cores)
    elif item == 'fig8':
        out = verdict_sites(rows)
    elif item == 'table8':
        out = verdict_ep(rows, cores)
    else:
        raise ValueError(item)
    return out + verdict_validity(rows)


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
    out += verdict_section(item, rows, cores)
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


def verdict_section(item, rows, cores):
    """The "## Shape verdict" section: every claim with its kind, verdict and
    evidence, then the item's verdict per admission (item_verdict)."""
    out = ['## Shape verdict (computed from the data)', '']
    out += shared.md_head(['admission', 'claim', 'kind', 'verdict', 'evidence'], 'lllll')
    words = []
    for adm in sorted({r['admission'] for r in rows}):
        vs = verdicts(item, _by(rows, admission=adm), cores)
        for v in vs:
            out.append(shared.md_row([adm, v.claim, v.kind, v.mark(), v.shown_evidence()]))
        words.append(f'**{item_verdict([(v.kind, v.mark()) for v in vs])}** (admission {adm})')
    out += ['', 'Item verdict: ' + '; '.join(words) + '. "holds": every testable claim holds; '
            '"holds qualitatively": every shape and validity claim, not every size claim (the '
            f'paper\'s effect within x{SIZE_LOW}-x{SIZE_HIGH} of its numbers); "partly": some '
            'shape claims, or a run that is not valid; a claim this machine cannot test counts '
            'for nothing.']
    return out


def splice_verdict(text, section):
    """`text` (a result file) with its "## Shape verdict" section replaced by
    `section` (lines), everything else as it was recorded."""
    lines = text.split('\n')
    start = lines.index('## Shape verdict (computed from the data)')
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith('## '))
    return '\n'.join(lines[:start] + section + [''] + lines[end:])


# ---- the index (bench/results/seed004/README.md) ------------------------------------

def file_claims(text):
    """{admission: [(kind, mark)]} from a multi-client result file's verdict
    table; {'-': [...]} from a single-client one's "- holds (kind): ..." list."""
    claims = {}
    in_table = False
    for line in text.splitlines():
        if line.startswith('## Shape verdict') or line.startswith('## Verdict'):
            in_table = True
            continue
        if in_table and line.startswith('## '):
            break
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if in_table and len(cells) == 5 and cells[3] in MARKS:
            claims.setdefault(cells[0], []).append((cells[2], cells[3]))
        m = re.match(r'^- (holds|does not hold) \((shape|size|validity)\): ', line)
        if in_table and m:
            claims.setdefault('-', []).append((m.group(2), m.group(1)))
    return claims


def record_admission(claims):
    """The admission an item's verdict is counted under: ninfd's default,
    arrival, when the file has it."""
    return 'arrival' if 'arrival' in claims else sorted(claims)[0]


def index_verdict(text):
    """One line from a result file: the item's verdict (item_verdict) and
    its claims, per admission; "not yet run" for no file."""
    if text is None:
        return 'not yet run'
    claims = file_claims(text)
    if not claims:
        return 'no verdict table'
    parts = []
    for adm, marks in sorted(claims.items()):
        held = sum(m == 'holds' for _, m in marks)
        untestable = sum(m == 'not testable here' for _, m in marks)
        where = '' if adm == '-' else f'{adm}: '
        parts.append(f'{item_verdict(marks)} ({where}{held} of {len(marks) - untestable} testable '
                     'claims hold' + (f', {untestable} not testable here' if untestable else '') + ')')
    return ('quick run only: ' if '--quick smoke run' in text else '') + '; '.join(parts)


def item_word(text):
    """The item's verdict in VOCABULARY ("not yet run" for no file)."""
    if text is None:
        return 'not yet run'
    claims = file_claims(text)
    return item_verdict(claims[record_admission(claims)]) if claims else 'not yet run'


def _read_or_none(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


# The single-client items (single_report.py), indexed beside the others.
SINGLE_ITEMS = ('fig3_4', 'table2')


def _run_files(results, item):
    return [_read_or_none(os.path.join(results, f'{item}{suffix}.md')) for suffix in ('', '-run2')]


def index_rows(results):
    """{item: verdict} for every item with a computed verdict, from
    results/ITEM.md (run 1) and ITEM-run2.md beside it."""
    out = {}
    for item in list(SINGLE_ITEMS) + list(TITLES):
        first, second = _run_files(results, item)
        if first is None and second is None:
            out[item] = 'not yet run'
        else:
            out[item] = f'run 1: {index_verdict(first)}; run 2: {index_verdict(second)}'
    return out


def index_counts(results):
    """README's count of items per verdict, one row per run."""
    lines = shared.md_head(['run'] + list(VOCABULARY) + ['not yet run'], 'l' + 'r' * 6)
    for run in (0, 1):
        words = [item_word(_run_files(results, item)[run])
                 for item in list(SINGLE_ITEMS) + list(TITLES)]
        lines.append(shared.md_row([run + 1] + [words.count(w) for w in VOCABULARY]
                                   + [words.count('not yet run')]))
    return lines


COUNTS_BEGIN = '<!-- verdict counts: report.py index --write -->'
COUNTS_END = '<!-- end of verdict counts -->'


def update_index(text, verdicts_now, counts=None):
    """README.md's table with the verdict cell of each item's row (the row
    whose file cell is `ITEM.md` or `ITEM.{md,png}`) replaced, other rows
    left alone; and the lines between COUNTS_BEGIN and COUNTS_END replaced
    by `counts`."""
    out = []
    skipping = False
    for line in text.splitlines():
        if line == COUNTS_END:
            skipping = False
        if skipping:
            continue
        cells = line.split('|')
        if len(cells) == 7:
            for item, verdict in verdicts_now.items():
                if cells[4].strip() in (f'`{item}.md`', f'`{item}.{{md,png}}`'):
                    cells[5] = f' {verdict} '
                    line = '|'.join(cells)
        out.append(line)
        if line == COUNTS_BEGIN and counts is not None:
            out += counts
            skipping = True
    return '\n'.join(out) + '\n'


def reverdict(results):
    """Every result file with its data (ITEM.data, or the 4-PE item's for
    Tables 3 and 6) gets its verdict section computed again from the data;
    the rest of each file stays as recorded. Returns the files changed."""
    changed = []
    for item in TITLES:
        for suffix in ('', '-run2'):
            path = os.path.join(results, f'{item}{suffix}.md')
            source = {'table3': 'table4', 'table6': 'table7'}.get(item, item)
            data = os.path.join(results, f'{source}{suffix}.data')
            text = _read_or_none(path)
            if text is None or not os.path.exists(os.path.join(data, 'points.csv')):
                continue
            rows = own_rows(item, load_points(data))
            new = splice_verdict(text, verdict_section(item, rows, rows[0]['server_cores']))
            if new != text:
                with open(path, 'w') as f:
                    f.write(new)
                changed.append(path)
    return changed


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
    d = sub.add_parser('duration', help='seconds a point must run (point_seconds)')
    d.add_argument('item')
    d.add_argument('version')
    d.add_argument('n_paper', type=int)
    d.add_argument('c', type=int)
    d.add_argument('tau', type=float)
    d.add_argument('minimum', type=int)
    i = sub.add_parser('index')
    i.add_argument('results', help='bench/results/seed004')
    i.add_argument('--write', action='store_true',
                   help="fill README.md's verdict column and its count of items per verdict")
    v = sub.add_parser('reverdict')
    v.add_argument('results', help='bench/results/seed004')
    args = ap.parse_args(argv)
    if args.cmd == 'duration':
        print(point_seconds(args.item, args.version, args.n_paper, args.c, args.tau, args.minimum))
        return 0
    if args.cmd == 'reverdict':
        for path in reverdict(args.results):
            print(f'{path}: verdict recomputed')
        return 0
    if args.cmd == 'index':
        verdicts_now = index_rows(args.results)
        if args.write:
            readme = os.path.join(args.results, 'README.md')
            with open(readme) as f:
                text = f.read()
            with open(readme, 'w') as f:
                f.write(update_index(text, verdicts_now, index_counts(args.results)))
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
