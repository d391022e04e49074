#!/usr/bin/env python3
"""ninfd's Prometheus endpoint, scraped by a real Prometheus server.

Starts ninfd with --metrics on a free loopback port and Debian's prometheus
scraping it every second, makes three EP calls with the C example, checks
the text with promtool, and asks Prometheus's query API for the call count,
the compute-time p95 and the utilization: the queries docs/monitoring.md
gives. Exit 77 (Meson: skipped) without
prometheus.

    metrics_test.py NINFD EP_DEMO
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

CALLS = 3


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, probe, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = probe()
        if value is not None:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def stop_all(procs):
    """Stops the daemons a test started, the last started first."""
    for p in reversed(procs):
        p.terminate()
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except OSError:
        return None, ""


def query(prom, expr):
    """The first sample's value of an instant query, or None."""
    url = f"http://{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    status, body = http_get(url)
    if status != 200:
        return None
    result = json.loads(body)["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def main():
    ninfd, ninf_meta, ep_demo = sys.argv[1], sys.argv[2], sys.argv[3]
    prometheus = shutil.which("prometheus")
    if not prometheus:
        print("metrics_test: no prometheus here (Debian package prometheus): skipped")
        return 77
    work = tempfile.mkdtemp(prefix="ninf-metrics-")
    procs = []
    try:
        def start(program, name, *flags):
            ready = os.path.join(work, name + ".ready")
            procs.append(subprocess.Popen(
                [program, "--port", "0", "--ready-file", ready, *flags],
                stderr=open(os.path.join(work, name + ".log"), "w")))
            wait_for(name, lambda: os.path.exists(ready) and open(ready).read().strip() or None)
            return open(ready).read().split()[0]

        meta_metrics, metrics_port = free_port(), free_port()
        meta_port = start(ninf_meta, "ninf-meta", "--metrics", str(meta_metrics))
        start(ninfd, "ninfd", "--metrics", str(metrics_port),
              "--metaserver", f"127.0.0.1:{meta_port}", "--site", "lab")
        env = dict(os.environ, NINF_METASERVER=f"127.0.0.1:{meta_port}")
        env.pop("NINF_SERVER", None)

        # A real scraper first, so that the calls below land between scrapes
        # and the rate() queries of docs/monitoring.md have something to see.
        prom = f"127.0.0.1:{free_port()}"
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: ninfd\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{metrics_port}', "
                    f"'127.0.0.1:{meta_metrics}']\n")
        procs.append(subprocess.Popen(
            [prometheus, f"--config.file={config}", f"--storage.tsdb.path={work}/data",
             f"--web.listen-address={prom}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "w")))
        wait_for("prometheus", lambda: http_get(f"http://{prom}/-/ready")[0] == 200 or None, 60)
        wait_for("the first scrapes", lambda: query(prom, 'sum(up{job="ninfd"}) == 2'), 60)
        # The server has registered: the metaserver knows where ep runs.
        wait_for("the registration", lambda: query(prom, "ninf_meta_servers == 1"), 60)

        for _ in range(CALLS):
            subprocess.run([ep_demo, "22"], env=env, check=True, stdout=subprocess.DEVNULL)

        # The text itself: well-formed, and counting the calls.
        status, text = http_get(f"http://127.0.0.1:{metrics_port}/metrics")
        assert status == 200, f"GET /metrics: {status}"
        line = f'ninf_calls_total{{function="ep",outcome="completed"}} {CALLS}'
        assert line in text, f"{line!r} not in:\n{text}"
        status, meta_text = http_get(f"http://127.0.0.1:{meta_metrics}/metrics")
        assert status == 200, f"GET ninf-meta /metrics: {status}"
        promtool = shutil.which("promtool")
        for body in (text, meta_text) if promtool else ():
            check = subprocess.run([promtool, "check", "metrics"], input=body, text=True,
                                   capture_output=True)
            assert check.returncode == 0, check.stdout + check.stderr

        # What Prometheus made of it, with docs/monitoring.md's queries.
        calls = wait_for("a scrape with the calls", lambda: query(
            prom, 'sum(ninf_calls_total{function="ep",outcome="completed"}) == 3'), 60)
        assert calls == CALLS, f"Prometheus counts {calls} calls, expected {CALLS}"
        p95 = wait_for("the compute p95", lambda: query(
            prom, 'histogram_quantile(0.95, sum by (le) '
                  '(rate(ninf_call_seconds_bucket{phase="compute"}[1m]))) > 0'))
        assert 0 < p95 <= 5, f"compute p95 = {p95}"
        utilization = wait_for("the utilization", lambda: query(
            prom, "sum(rate(ninf_busy_core_seconds_total[1m])) / sum(ninf_cores) > 0"))
        assert 0 < utilization <= 1, f"utilization = {utilization}"
        placed = wait_for("the placements", lambda: query(
            prom, 'ninf_meta_placements_total{result="placed"} >= 3'))
        share = wait_for("the placement share", lambda: query(
            prom, "sum by (server) (rate(ninf_meta_server_placements_total[1m])) / "
                  "ignoring(server) group_left sum(rate(ninf_meta_server_placements_total[1m]))"
                  " > 0"))
        assert abs(share - 1) < 1e-9, f"one server's share of placements = {share}"
        bandwidth = wait_for("a link forecast", lambda: query(
            prom, 'max(ninf_meta_link_bandwidth_bytes_per_second{site="127.0.0.1"}) > 0'))
        print(f"metrics_test: Prometheus saw {calls:.0f} calls, compute p95 {p95:.3f} s, "
              f"utilization {utilization:.4f}, {placed:.0f} placements, link forecast "
              f"{bandwidth / 1e6:.1f} MB/s")
        return 0
    finally:
        stop_all(procs)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
