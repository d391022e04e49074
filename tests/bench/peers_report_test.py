#!/usr/bin/python3
"""bench/peers/report.py on canned raw logs: the table's cells, both Ninf
clients' speed against the best peer, the verdicts, the targets (one-shot
null over raw, the default budget's calls/s over the fixed budget's), two
runs side by side, and the plot. Nothing is measured or timed."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'bench', 'peers'))
import report  # noqa: E402

RUN1 = """# cores=2 quick=0
place=host peer=raw workload=null size=0 median=8.00 min=8.00 p90=8.00 reps=100 unit=us
place=host peer=ninf workload=null size=0 median=20.00 min=18.00 p90=25.00 reps=100 unit=us
place=host peer=grpc workload=null size=0 median=50.00 min=45.00 p90=60.00 reps=100 unit=us
place=host peer=zeromq workload=null size=0 median=30.00 min=28.00 p90=35.00 reps=100 unit=us
place=host peer=ninf-oneshot workload=null size=0 median=22.00 min=20.00 p90=30.00 reps=100 unit=us
place=veth peer=ninf workload=echo size=1048576 median=40000.00 min=1 p90=1 reps=5 unit=us
place=veth peer=dask workload=echo size=1048576 median=20000.00 min=1 p90=1 reps=5 unit=us
place=host peer=ninf workload=rate size=4 median=9000.0 min=9000.0 p90=9000.0 reps=4 unit=calls/s
place=host peer=grpc workload=rate size=4 median=6000.0 min=6000.0 p90=6000.0 reps=4 unit=calls/s
place=host peer=ninf-oneshot workload=rate size=4 median=3000.0 min=3000.0 p90=3000.0 reps=4 unit=calls/s
place=host peer=ninf-fixed workload=rate size=4 median=10000.0 min=10000.0 p90=10000.0 reps=4 unit=calls/s
place=host peer=ninf workload=rate size=1 median=5000.0 min=5000.0 p90=5000.0 reps=1 unit=calls/s
place=host peer=ninf-fixed workload=rate size=1 median=9000.0 min=9000.0 p90=9000.0 reps=1 unit=calls/s
place=host peer=raw workload=null size=0 median=11.00 min=11.00 p90=11.00 reps=100 unit=us
"""
# (Raw measured twice in the run, after the peers slower: the floor is the
# lower median, 8.)
# Run 2: the handle's null twice as slow, the one-shot null over 3x raw.
RUN2 = RUN1.replace('median=20.00', 'median=40.00').replace('median=22.00', 'median=26.00')


def rows_of(text):
    return [line for line in text.split('\n') if line.startswith('| ')]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, text in enumerate((RUN1, RUN2), 1):
            paths.append(os.path.join(tmp, f'run{i}.raw.txt'))
            with open(paths[-1], 'w') as f:
                f.write(text)
        out = os.path.join(tmp, 'one.md')
        report.render(paths[:1], out)
        one = open(out).read()
        table = rows_of(one)
        assert table[0].startswith('| workload | placement | ninf |'), table[0]
        null = next(r for r in table if r.startswith('| null'))
        # handle 30 / 20, one-shot 30 / 22; one-shot 22 over raw 8 (<= 3x)
        assert '20.0 µs' in null and '| 1.50x | 1.36x | yes, yes |' in null, null
        assert '| one-shot/raw 2.75x met |' in null, null
        echo = next(r for r in table if r.startswith('| echo 1 MiB | veth'))
        assert '40.0 ms' in echo and '| 0.50x | — | no, — | — |' in echo, echo
        rate = next(r for r in table if r.startswith('| rate 4 clients'))
        # handle 9000 / 6000, one-shot 3000 / 6000; handle 9000 over fixed 10000
        assert '9,000' in rate and '| 1.50x | 0.50x | yes, no |' in rate, rate
        assert '| adaptive/fixed 0.90 missed |' in rate, rate
        # One client contends with nobody: the budget's target is for many.
        one_client = next(r for r in table if r.startswith('| rate 1 client |'))
        assert one_client.endswith('| — |'), one_client
        assert ('not ahead in some run: echo 1 MiB on veth (handle); '
                'rate 4 clients on host (one-shot)') in one, one
        assert 'target is missed in some run: rate 4 clients on host.' in one, one
        assert os.path.getsize(os.path.join(tmp, 'one.png')) > 0

        out = os.path.join(tmp, 'two.md')
        report.render(paths, out)
        null = next(r for r in rows_of(open(out).read()) if r.startswith('| null'))
        assert '20.0 µs / 40.0 µs' in null and '1.50x / 0.75x' in null, null
        assert '| yes, yes / no, yes |' in null, null
        assert '| one-shot/raw 2.75x met / one-shot/raw 3.25x missed |' in null, null
    print('peers_report: every check holds')
    return 0


if __name__ == '__main__':
    sys.exit(main())
