#!/usr/bin/python3
"""dask_client.py - Dask distributed's side of bench/peers.sh: the same
command line, workloads and output lines as the C clients (peer_bench.h).

    /usr/bin/python3 bench/peers/dask_client.py --connect tcp://HOST:PORT --workload W ...

The server is a scheduler and one worker process with as many threads as
cores (bench/peers.sh starts them). Each call is what Dask's documentation
shows: submit a function, take its result. Arrays of 1 MiB and more go
to the worker with Client.scatter first, as the docs advise for large
data (a large object inside a task graph warns and is slower); hash=False
so that every call moves its bytes again instead of finding them cached.
Results are copied into the caller's own array (np.copyto), like the C
clients. dgesv on the worker is LAPACK's, through scipy.linalg.lapack.
"""
import argparse
import sys
import time

import numpy as np

SCATTER_FROM = 1 << 20


def noop():
    return None


def identity(x):
    return x


def solve(a, b):
    from scipy.linalg import lapack
    _, _, x, info = lapack.dgesv(a, b, overwrite_a=True, overwrite_b=True)
    if info != 0:
        raise RuntimeError(f'dgesv info {info}')
    return x


def parse_size(text):
    units = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
    if text[-1:].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def send(client, array):
    """The argument as Dask's docs say to pass it: scattered when large."""
    if array.nbytes >= SCATTER_FROM:
        return client.scatter(array, hash=False, direct=True)
    return array


def null_call(client, _):
    client.submit(noop, pure=False).result()


def echo_call(client, buf):
    stamp = int(time.perf_counter_ns() & 0xFF)
    buf[0] = stamp
    buf[-1] = stamp
    start = time.perf_counter()
    back = client.submit(identity, send(client, buf), pure=False).result()
    np.copyto(buf, back)
    seconds = time.perf_counter() - start
    if buf[0] != stamp or buf[-1] != stamp or buf.nbytes != back.nbytes:
        raise RuntimeError('echo came back different')
    return seconds


def dgesv_call(client, problem):
    a0, b0 = problem
    b = b0.copy()  # the caller's right-hand side; x lands here
    start = time.perf_counter()
    x = client.submit(solve, send(client, a0), send(client, b), pure=False).result()
    np.copyto(b, x)
    seconds = time.perf_counter() - start
    if not np.all(np.abs(b - 1.0) < 1e-6):
        raise RuntimeError('dgesv wrong solution')
    return seconds


def timed(call):
    def run(client, state):
        start = time.perf_counter()
        call(client, state)
        return time.perf_counter() - start
    return run


def problem(n):
    """The same kind of system as the C clients: x = ones, column-major A."""
    rng = np.random.default_rng(42)
    a0 = np.asfortranarray(rng.random((n, n)) - 0.5)
    return a0, a0.sum(axis=1)


def report(workload, size, times):
    t = sorted(times)
    n = len(t)
    median = t[n // 2] if n % 2 else (t[n // 2 - 1] + t[n // 2]) / 2
    p90 = t[max(0, -(-9 * n // 10) - 1)]  # nearest rank, as bench_percentile
    print(f'peer=dask workload={workload} size={size} median={median * 1e6:.2f} '
          f'min={t[0] * 1e6:.2f} p90={p90 * 1e6:.2f} reps={n} unit=us', flush=True)


def rate(client, args):
    start = args.start_at if args.start_at > 0 else time.time() + 0.5
    stop = start + args.seconds
    calls, late = 0, None
    while True:
        null_call(client, None)
        now = time.time()
        if late is None:
            late = int(now > start)  # started after the window opened
        if now >= stop:
            break
        if now >= start:
            calls += 1
    print(f'peer=dask workload=rate size=0 calls={calls} seconds={args.seconds:.3f} late={late} '
          'unit=calls', flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--connect', required=True)
    p.add_argument('--workload', required=True, choices=['null', 'echo', 'dgesv', 'rate'])
    p.add_argument('--size', default='0')
    p.add_argument('--reps', type=int, default=10)
    p.add_argument('--warmup', type=int, default=2)
    p.add_argument('--start-at', type=float, default=0)
    p.add_argument('--seconds', type=float, default=1)
    args = p.parse_args()
    from distributed import Client
    size = parse_size(args.size)
    with Client(args.connect, timeout=60) as client:
        client.wait_for_workers(1, timeout=60)
        if args.workload == 'rate':
            return rate(client, args)
        if args.workload == 'null':
            call, state = timed(null_call), None
        elif args.workload == 'echo':
            call, state = echo_call, np.arange(size, dtype=np.uint8)
        else:
            call, state = dgesv_call, problem(size)
        times = [call(client, state) for _ in range(args.warmup + args.reps)][args.warmup:]
        report(args.workload, size, times)
    return 0


if __name__ == '__main__':
    sys.exit(main())
