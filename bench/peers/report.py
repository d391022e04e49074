#!/usr/bin/python3
"""report.py - bench/peers.sh's report: one table and one plot from one or
more raw logs (several runs side by side).

    /usr/bin/python3 bench/peers/report.py RAW [RAW2 ...] --out FILE.md

Raw lines (bench/peers.sh; `#` lines are the run's settings):
    place=P peer=NAME workload=W size=S median=M min=M p90=M reps=R unit=U
Rows are workload x size x placement; a column per peer. Both Ninf
clients are judged, each against the best rival on the row: the
function-handle client (peer=ninf) and Ninf_call (peer=ninf-oneshot).
"Speed" is the best rival's median time over Ninf's (or Ninf's calls/s over
the best rival's), so above 1 means Ninf ahead. Two more targets where the
row has them: a null call's one-shot time over the raw round trip of the
same placement and transport (<= 3x; raw's lowest median of the run), and the handles' calls/s at the default thread
budget over the same under thread_budget = "fixed" (peer=ninf-fixed,
>= 0.95). ninf-fixed and raw are shown but are not peers to beat.
With several runs each cell holds every run's figure, "run 1 / run 2".
The plot (FILE.png, matplotlib) shows the first run.
"""
import argparse
import importlib.util
import os
import sys

# bench/report.py, the one report module (tables, runs side by side, the plot
# set-up); by its path, since this file is report.py too.
_SPEC = importlib.util.spec_from_file_location(
    'bench_report', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'report.py'))
shared = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(shared)

NINF = 'ninf'
ONESHOT = 'ninf-oneshot'
FIXED = 'ninf-fixed'
RIVALS = ['grpc', 'zeromq', 'dask']
SHOWN = [NINF, ONESHOT, FIXED] + RIVALS + ['raw']
# The targets of issue 44: one-shot null <= 3x the raw round trip in the same
# placement; the default budget's calls/s >= 0.95 of the fixed budget's.
ONESHOT_OVER_RAW = 3.0
ADAPTIVE_OVER_FIXED = 0.95
WORKLOADS = ['null', 'echo', 'dgesv', 'rate']
PLACES = ['host', 'veth']


def parse(path):
    """({(workload, size, place): {peer: record}}, [setting lines])."""
    rows, settings = {}, []
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        if line.startswith('#'):
            settings.append(line.lstrip('# '))
            continue
        f = dict(kv.split('=', 1) for kv in line.split() if '=' in kv)
        if not {'place', 'peer', 'workload', 'size', 'median', 'unit'} <= f.keys():
            continue
        key = (f['workload'], int(f['size']), f['place'])
        row = rows.setdefault(key, {})
        # Raw is measured more than once in a run (before and after the
        # peers): the lowest median is the floor.
        if f['peer'] == 'raw' and 'raw' in row and float(row['raw']['median']) <= float(f['median']):
            continue
        row[f['peer']] = f
    return rows, settings


def order(key):
    workload, size, place = key
    return (WORKLOADS.index(workload) if workload in WORKLOADS else 99, PLACES.index(place)
            if place in PLACES else 9, size)


def higher_is_better(workload):
    return workload == 'rate'


def speed(workload, peers, client=NINF):
    """`client`'s speed against the best rival, or None when either is missing."""
    if client not in peers:
        return None
    rivals = [float(peers[p]['median']) for p in RIVALS if p in peers]
    if not rivals:
        return None
    ninf = float(peers[client]['median'])
    if higher_is_better(workload):
        return ninf / max(rivals)
    return min(rivals) / ninf if ninf > 0 else None


def target(workload, peers):
    """(text, met) of the row's own target, or None: one-shot null over raw,
    or the default budget's calls/s over the fixed budget's."""
    if workload == 'null' and ONESHOT in peers and 'raw' in peers:
        ratio = float(peers[ONESHOT]['median']) / float(peers['raw']['median'])
        return f'one-shot/raw {shared.fmt(ratio)}x', ratio <= ONESHOT_OVER_RAW
    # Many clients: the gate is for contention; one client has none.
    if workload == 'rate' and NINF in peers and FIXED in peers and int(peers[NINF]['size']) > 1:
        ratio = float(peers[NINF]['median']) / float(peers[FIXED]['median'])
        return f'adaptive/fixed {shared.fmt(ratio)}', ratio >= ADAPTIVE_OVER_FIXED
    return None


def size_label(workload, size):
    if workload == 'echo':
        for unit, div in (('MiB', 1 << 20), ('KiB', 1 << 10)):
            if size >= div and size % div == 0:
                return f'{size // div} {unit}'
        return f'{size} B'
    if workload == 'dgesv':
        return f'n = {size}'
    if workload == 'rate':
        return f'{size} client' + ('s' if size != 1 else '')
    return ''


def figure(workload, record):
    """A cell: µs below 10 ms, else ms; calls/s as is."""
    if record is None:
        return '—'
    value = float(record['median'])
    if higher_is_better(workload):
        # late: some client processes missed the window's start (undercounted).
        return f'{value:,.0f}' + (' (late)' if int(record.get('late', '0')) > 0 else '')
    return f'{value:,.1f} µs' if value < 10000 else f'{value / 1000:,.1f} ms'


def table(runs):
    keys = sorted({k for rows, _ in runs for k in rows}, key=order)
    peers = [p for p in SHOWN if any(p in rows.get(k, {}) for rows, _ in runs for k in keys)]
    head = ['workload', 'placement'] + peers + [
        'handle vs best peer', 'one-shot vs best peer', 'handle / one-shot ahead', 'target']
    lines = shared.md_head(head, 'll' + 'r' * (len(peers) + 2) + 'll')
    behind, missed = [], []
    for key in keys:
        workload, size, place = key
        row = f'{workload} {size_label(workload, size)}'.strip()
        cells = [row, place]
        for p in peers:
            cells.append(shared.side_by_side(
                runs, lambda run: figure(workload, run[0].get(key, {}).get(p))))
        verdicts = {}
        for client in (NINF, ONESHOT):
            speeds = [speed(workload, rows.get(key, {}), client) for rows, _ in runs]
            cells.append(shared.side_by_side(
                speeds, lambda s: '—' if s is None else shared.fmt(s) + 'x'))
            verdicts[client] = ['—' if s is None else ('yes' if s > 1 else 'no') for s in speeds]
        cells.append(shared.side_by_side(
            list(zip(verdicts[NINF], verdicts[ONESHOT])), lambda v: f'{v[0]}, {v[1]}'))
        for client, name in ((NINF, 'handle'), (ONESHOT, 'one-shot')):
            if 'no' in verdicts[client]:
                behind.append(f'{row} on {place} ({name})')
        targets = [target(workload, rows.get(key, {})) for rows, _ in runs]
        cells.append(shared.side_by_side(
            targets, lambda t: '—' if t is None else t[0] + (' met' if t[1] else ' missed')))
        if any(t is not None and not t[1] for t in targets):
            missed.append(f'{row} on {place}')
        lines.append(shared.md_row(cells))
    return lines, behind, missed


def plot(rows, path):
    plt = shared.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    panels = [('null', 'null call, median µs', axes[0][0]), ('echo', 'echo round trip, median µs', axes[0][1]),
              ('dgesv', 'dgesv end to end, median µs', axes[1][0]), ('rate', 'null calls/s, all clients', axes[1][1])]
    for workload, title, ax in panels:
        ax.set_title(title)
        for color, peer in enumerate(SHOWN):
            for place, style in (('host', '-o'), ('veth', '--s')):
                pts = sorted((k[1], float(v[peer]['median'])) for k, v in rows.items()
                             if k[0] == workload and k[2] == place and peer in v)
                if not pts:
                    continue
                xs = [p[0] if workload != 'null' else PLACES.index(place) for p in pts]
                ax.plot(xs, [p[1] for p in pts], style, color=f'C{color}', label=f'{peer} {place}')
        if workload == 'echo':
            ax.set_xscale('log', base=2)
            ax.set_xlabel('bytes each way')
        elif workload == 'dgesv':
            ax.set_xlabel('n')
        elif workload == 'rate':
            ax.set_xlabel('client processes')
        else:
            ax.set_xticks(range(len(PLACES)), PLACES)
        if workload != 'rate':
            ax.set_yscale('log')
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def render(paths, out):
    runs = [parse(p) for p in paths]
    lines, behind, missed = table(runs)
    title = 'Ninf side by side with gRPC C++, ZeroMQ and Dask (bench/peers.sh)'
    doc = [f'# {title}', '']
    for i, (path, (_, settings)) in enumerate(zip(paths, runs), 1):
        doc.append(f'Run {i} (`{os.path.basename(path)}`): ' + '; '.join(settings))
        doc.append('')
    doc += ['Medians; "ninf" is the function-handle client, "ninf-oneshot" Ninf_call, '
            '"ninf-fixed" the handles on a ninfd with thread_budget = "fixed". ' +
            ('Cells give every run, "run 1 / run 2". ' if len(runs) > 1 else '') +
            'Speed = best peer time / Ninf time (rate: Ninf calls/s / best peer calls/s), for '
            'each Ninf client; above 1 means Ninf ahead. Target: one-shot null <= '
            f'{shared.fmt(ONESHOT_OVER_RAW)}x the raw round trip of its placement; calls/s at the '
            f'default budget >= {shared.fmt(ADAPTIVE_OVER_FIXED)} of the fixed budget\'s with '
            'more than one client.', '']
    doc += lines
    doc.append('')
    if behind:
        doc.append('Rows where a Ninf client is not ahead in some run: ' + '; '.join(behind) + '.')
    else:
        doc.append('Both Ninf clients are ahead of every peer on every row.')
    doc.append('')
    if missed:
        doc.append('Rows whose target is missed in some run: ' + '; '.join(missed) + '.')
    else:
        doc.append('Every row with a target meets it.')
    png = os.path.splitext(out)[0] + '.png'
    doc += ['', f'![plot]({os.path.basename(png)})', '']
    with open(out, 'w') as f:
        f.write('\n'.join(doc))
    plot(runs[0][0], png)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('raw', nargs='+')
    p.add_argument('--out', required=True)
    args = p.parse_args()
    render(args.raw, args.out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
