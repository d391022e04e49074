#!/usr/bin/python3
"""bench/peers/report.py on canned raw logs: the table's cells, Ninf's speed
against the best peer, the verdicts, two runs side by side, and the plot.
Nothing is measured or timed."""
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
place=veth peer=ninf workload=echo size=1048576 median=40000.00 min=1 p90=1 reps=5 unit=us
place=veth peer=dask workload=echo size=1048576 median=20000.00 min=1 p90=1 reps=5 unit=us
place=host peer=ninf workload=rate size=4 median=9000.0 min=9000.0 p90=9000.0 reps=4 unit=calls/s
place=host peer=grpc workload=rate size=4 median=6000.0 min=6000.0 p90=6000.0 reps=4 unit=calls/s
"""
RUN2 = RUN1.replace('median=20.00', 'median=40.00')


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
        assert '20.0 µs' in null and '| 1.50x | yes |' in null, null  # 30 / 20
        echo = next(r for r in table if r.startswith('| echo 1 MiB | veth'))
        assert '40.0 ms' in echo and '| 0.50x | no |' in echo, echo
        rate = next(r for r in table if r.startswith('| rate 4 clients'))
        assert '9,000' in rate and '| 1.50x | yes |' in rate, rate
        assert 'not ahead in some run: echo 1 MiB on veth' in one, one
        assert os.path.getsize(os.path.join(tmp, 'one.png')) > 0

        out = os.path.join(tmp, 'two.md')
        report.render(paths, out)
        null = next(r for r in rows_of(open(out).read()) if r.startswith('| null'))
        assert '20.0 µs / 40.0 µs' in null and '1.50x / 0.75x' in null, null
        assert '| yes / no |' in null, null
    print('peers_report: every check holds')
    return 0


if __name__ == '__main__':
    sys.exit(main())
