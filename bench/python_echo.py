#!/usr/bin/env python3
"""bench/python_echo.py - the Python client's echo throughput, the same loop
as `bench_throughput --size SIZE --no-check` (one thread, the array filled
once, each call the transfer alone, 0.5 s of warm-up not counted).

    NINF_SERVER=host:port PYTHONPATH=BUILD/python python_echo.py SIZE SECONDS

Prints the C program's line: throughput what=echo-python size=.. calls=..
seconds=.. calls_per_s=.. mb_per_s=.. failed=..
"""
import sys
import time

import numpy as np

import ninf


def main():
    size, seconds = int(sys.argv[1]), float(sys.argv[2])
    words = size // 8
    a = np.arange(words, dtype=np.float64)
    start = time.monotonic()
    warm_until, stop_at = start + 0.5, start + 0.5 + seconds
    calls = 0
    while True:
        now = time.monotonic()
        if now >= stop_at:
            break
        ninf.call("echo", words, a)
        if now >= warm_until:
            calls += 1
    # The echo must have come back intact.
    assert np.array_equal(a, np.arange(words, dtype=np.float64))
    print(f"throughput what=echo-python size={size} threads=1 calls={calls} "
          f"seconds={seconds:.2f} calls_per_s={calls / seconds:.1f} "
          f"mb_per_s={calls * size / seconds / 1e6:.1f} failed=0")


if __name__ == "__main__":
    main()
