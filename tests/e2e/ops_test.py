#!/usr/bin/env python3
"""What an administrator runs into (issue 31, part 5), against the real
ninfd and ninf-meta:

1. ninf-meta reads NINF_META_<NAME>: NINF_META_PORT, NINF_META_READY_FILE,
   NINF_META_METRICS and NINF_META_KEY_FILE are honoured. ninfd's and the
   client's variables (the pairs at the end of `ninf-meta --help`) are
   never read and never fatal: with NINF_KEY_FILE=/nonexistent ninf-meta
   starts keyless and logs one warning naming NINF_META_KEY_FILE; its
   --status and --servers work, warning once per variable set, with every
   one of them set to a value nothing accepts; beside its own, ninfd's is
   ignored without a word.
2. A settings file that cannot be read: exit 2 and strerror, both daemons.
3. The key handshake between the daemons, each mismatch: ninfd logs
   event=metaserver_auth_failed (never metaserver_unreachable) with the
   message naming its own key_file and the side that needs the key, and
   ninf-meta's refusal of a keyless ninfd names ninfd's key_file, not "the
   client".
4. `ninf-meta --servers` and `--links` print the header lines that
   docs/metaserver.md documents.
5. Both daemons' /metrics: the process_* metrics, plausible; every number
   of `--status` exported (each status line's name in a metric name, or
   the renamed ones below), with the same value where nothing moves; the
   auth-failure and connection counters moving as failures are provoked.
6. /healthz: 200 "ready"; ninfd's 503 "draining" while it finishes a
   call after SIGTERM.
7. The executables' OpenBLAS kernels: `ninfd --openblas-core` names some,
   an administrator's OPENBLAS_CORETYPE passes unchanged, and the daemon's
   log says the same as the command (event=openblas_core).

    ops_test.py NINFD NINF_META EP_DEMO
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from metrics_test import free_port, stop_all, wait_for

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def clean_env(**extra):
    """The test's environment without any NINF_* (a developer's shell may
    hold some, and ninf-meta warns of ninfd's), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NINF_")}
    env.update(extra)
    return env


def get(url):
    """(status, body) of a GET; status None when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return None, ""


def samples(text):
    """{'name{labels}': value} of a Prometheus text."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def status_lines(text):
    """{name: value} of `--status` output."""
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def log_text(work, name):
    try:
        return open(os.path.join(work, name + ".log")).read()
    except OSError:
        return ""


def wait_log(work, name, pattern, seconds=20):
    return wait_for(f"{pattern!r} in {name}.log",
                    lambda: re.search(pattern, log_text(work, name)), seconds)


class Daemons:
    """Starts daemons on free ports; stops them all at the end."""

    def __init__(self, work):
        self.work = work
        self.procs = []

    def start(self, program, name, *flags, env=None):
        ready = os.path.join(self.work, name + ".ready")
        proc = subprocess.Popen([program, "--port", "0", "--ready-file", ready, *flags],
                                env=env or clean_env(),
                                stderr=open(os.path.join(self.work, name + ".log"), "w"))
        self.procs.append(proc)

        def started():
            if proc.poll() is not None:
                raise AssertionError(f"{name} exited {proc.returncode}: "
                                     f"{log_text(self.work, name)}")
            words = open(ready).read().split() if os.path.exists(ready) else []
            return words[0] if words else None
        return proc, int(wait_for(name, started))

    def stop(self):
        stop_all(self.procs)


def make_key(work, name):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(os.urandom(32).hex() + "\n")
    os.chmod(path, 0o600)
    return path


def run(argv, env=None, timeout=30):
    return subprocess.run(argv, env=env or clean_env(), capture_output=True, text=True,
                          timeout=timeout)


# --- 1. NINF_META_* --------------------------------------------------------

# "  NINF_KEY_FILE (ninfd's and the client's) -> NINF_META_KEY_FILE": a line
# of the table at the end of `ninf-meta --help` (MetaForeignVariables).
FOREIGN_LINE = re.compile(r"^  (NINF_\w+) \((.+)\) -> (NINF_META_\w+)$", re.M)


def foreign_pairs(meta):
    """[(name, whose, ours)]: ninfd's and the client's variables ninf-meta
    does not read, each with ninf-meta's own, as its --help lists them."""
    r = run([meta, "--help"], timeout=10)
    assert r.returncode == 0, r.stderr
    return FOREIGN_LINE.findall(r.stdout)


def foreign_warning(name, whose, ours):
    return f"{name} is {whose} variable and is not read by ninf-meta, which reads {ours}"


def check_meta_variables(meta, work, daemons):
    pairs = foreign_pairs(meta)
    key_pair = ("NINF_KEY_FILE", "ninfd's and the client's", "NINF_META_KEY_FILE")
    assert key_pair in pairs, pairs
    for name in ["NINF_CONFIG", "NINF_PORT", "NINF_METRICS", "NINF_TLS_CERT", "NINF_LOG_LEVEL",
                 "NINF_POLICY"]:
        assert any(p[0] == name and p[2] == "NINF_META_" + name[5:] for p in pairs), (name, pairs)

    # A client's NINF_KEY_FILE in ninf-meta's environment: it starts, keyless,
    # and says so once.
    _, port = daemons.start(meta, "meta-client-key", env=clean_env(NINF_KEY_FILE="/nonexistent"))
    ignored = re.findall(r"level=(\w+) (event=variable_ignored.*)",
                         log_text(work, "meta-client-key"))
    assert ignored == [("warning", "event=variable_ignored variable=NINF_KEY_FILE "
                        f'use=NINF_META_KEY_FILE message="{foreign_warning(*key_pair)}"')], ignored
    where = f"127.0.0.1:{port}"
    # Its tools, with every variable of the table set to a value no setting
    # accepts (a number, a log level, a file that does not exist): they
    # work, keyless, and warn once per variable. Had one been read, the
    # command would have failed (bad value, missing key or config file).
    poison = clean_env(**{name: "/nonexistent/x" for name, _, _ in pairs})
    r = run([meta, "--status", "--server", where], env=poison)
    assert r.returncode == 0, r.stderr
    assert "auth_failures" in status_lines(r.stdout), r.stdout
    warned = [line for line in r.stderr.splitlines() if line.startswith("ninf-meta: warning: ")]
    assert sorted(warned) == sorted(f"ninf-meta: warning: {foreign_warning(*p)}"
                                    for p in pairs), r.stderr
    r = run([meta, "--servers", "--server", where], env=poison)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "server", r.stdout

    # ninf-meta's own NINF_META_KEY_FILE is used (a client's beside it
    # ignored without a word); the client's alone is not: the tool stays
    # keyless and is refused.
    key = make_key(work, "meta-own.key")
    _, port = daemons.start(meta, "meta-own-key",
                            env=clean_env(NINF_META_KEY_FILE=key, NINF_KEY_FILE="/nonexistent"))
    assert "event=variable_ignored" not in log_text(work, "meta-own-key")
    where = f"127.0.0.1:{port}"
    r = run([meta, "--status", "--server", where])
    assert r.returncode != 0 and "requires authentication" in r.stderr, r.stderr
    r = run([meta, "--status", "--server", where], env=clean_env(NINF_KEY_FILE=key))
    assert r.returncode != 0 and "requires authentication" in r.stderr, r.stderr
    assert f"ninf-meta: warning: {foreign_warning(*key_pair)}\n" in r.stderr, r.stderr
    r = run([meta, "--status", "--server", where],
            env=clean_env(NINF_META_KEY_FILE=key, NINF_KEY_FILE="/nonexistent"))
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr

    # Its own names are honoured, ninfd's beside them ignored without a word.
    port, metrics = free_port(), free_port()
    ready = os.path.join(work, "meta-env.ready")
    env = clean_env(NINF_META_PORT=str(port), NINF_META_READY_FILE=ready,
                    NINF_META_METRICS=str(metrics), NINF_PORT="1", NINF_METRICS="2",
                    NINF_READY_FILE="/nonexistent/x")
    proc = subprocess.Popen([meta], env=env,
                            stderr=open(os.path.join(work, "meta-env.log"), "w"))
    daemons.procs.append(proc)
    wait_for("ninf-meta from NINF_META_*", lambda: os.path.exists(ready) or None)
    assert open(ready).read().split()[0] == str(port), open(ready).read()
    assert get(f"http://127.0.0.1:{metrics}/healthz") == (200, "ready\n")
    assert "event=variable_ignored" not in log_text(work, "meta-env")
    proc.terminate()
    proc.wait(timeout=15)


# --- 2. errno in file errors ------------------------------------------------

def check_config_errno(ninfd, meta):
    for program, name in [(ninfd, "ninfd"), (meta, "ninf-meta")]:
        r = run([program, "--config", "/nonexistent.toml"], timeout=10)
        assert r.returncode == 2, (name, r.returncode, r.stderr)
        assert r.stderr.startswith(f"{name}: /nonexistent.toml: cannot open the settings file: "
                                   "No such file or directory\n"), (name, r.stderr)


# --- 7. the executables' OpenBLAS kernels ----------------------------------

def check_openblas_core(ninfd, work, daemons):
    env = clean_env()
    env.pop("OPENBLAS_CORETYPE", None)
    r = run([ninfd, "--openblas-core"], env=env, timeout=20)
    chosen = r.stdout.strip()
    assert r.returncode == 0 and re.fullmatch(r"[A-Za-z0-9_]+", chosen), (r.returncode, r.stdout,
                                                                            r.stderr)
    r = run([ninfd, "--openblas-core"], env=clean_env(OPENBLAS_CORETYPE="Haswell"), timeout=20)
    assert r.stdout == "Haswell\n", r.stdout
    daemons.start(ninfd, "ninfd-kernels", env=env)
    line = wait_log(work, "ninfd-kernels", r"event=openblas_core [^\n]*").group(0)
    assert re.search(rf"executables={chosen}( |$)", line), (chosen, line)
    print(f"ops_test: executables get OpenBLAS kernels {chosen}: {line}")


# --- 3. the key handshake between the daemons -------------------------------

def check_auth_between_daemons(ninfd, meta, work, daemons):
    key1, key2 = make_key(work, "meta.key"), make_key(work, "other.key")
    base = ["--unix-socket", "", "--warm-executables", "0"]

    # a. keyed ninf-meta, keyless ninfd.
    _, mport = daemons.start(meta, "meta-keyed", "--key-file", key1)
    where = f"127.0.0.1:{mport}"
    daemons.start(ninfd, "ninfd-keyless", *base, "--metaserver", where)
    line = wait_log(work, "ninfd-keyless", r".*event=metaserver_auth_failed.*").group(0)
    expected = (f'error="ninf-meta at {where} requires a key, and ninfd has none: set key_file '
                f"in ninfd's settings to a file whose first key is one of ninf-meta's key_file\"")
    assert expected in line, line
    said = 'metaserver_said="this metaserver requires authentication: ninfd proves itself'
    assert said in line, line
    assert "give the client" not in log_text(work, "ninfd-keyless")
    assert "event=metaserver_unreachable" not in log_text(work, "ninfd-keyless")
    meta_line = wait_log(work, "meta-keyed", r".*event=auth_failed.*").group(0)
    assert 'reason="a server without a key sent META_REGISTER"' in meta_line, meta_line

    # b. keyless ninf-meta, keyed ninfd.
    _, bare = daemons.start(meta, "meta-keyless")
    where = f"127.0.0.1:{bare}"
    daemons.start(ninfd, "ninfd-to-keyless", *base, "--key-file", key1, "--metaserver", where)
    line = wait_log(work, "ninfd-to-keyless", r".*event=metaserver_auth_failed.*").group(0)
    assert (f'error="ninf-meta at {where} has no key_file, and ninfd (key_file {key1}) proves '
            "itself with its first key: give ninf-meta a key_file holding that key (its key_file "
            'setting, NINF_META_KEY_FILE)"') in line, line
    assert "event=metaserver_unreachable" not in log_text(work, "ninfd-to-keyless")

    # c. both keyed, different keys.
    where = f"127.0.0.1:{mport}"
    daemons.start(ninfd, "ninfd-wrong-key", *base, "--key-file", key2, "--metaserver", where)
    line = wait_log(work, "ninfd-wrong-key", r".*event=metaserver_auth_failed.*").group(0)
    assert (f"error=\"ninf-meta at {where} refused ninfd's key: the first key of ninfd's key_file "
            f"{key2} is not one of ninf-meta's key_file; add it there, or put one of ninf-meta's "
            f'keys first in {key2}"') in line, line
    assert "event=metaserver_unreachable" not in log_text(work, "ninfd-wrong-key")

    # And the right key registers (the messages above are not the only outcome).
    daemons.start(ninfd, "ninfd-right-key", *base, "--key-file", key1, "--metaserver", where)
    wait_log(work, "ninfd-right-key", r"event=metaserver_registered")
    return mport, key1


# --- 4. --servers and --links headers as documented --------------------------

def check_view_headers(meta, mport, key):
    doc = open(os.path.join(ROOT, "docs", "metaserver.md")).read()
    section = doc[doc.index("`--servers` prints a header line"):]
    section = section[:section.index("On other hosts")]
    documented = []
    for row in section.splitlines():
        if row.startswith("| `"):
            documented += re.findall(r"`([^`]+)`", row.split("|")[1])
    r = run([meta, "--servers", "--server", f"127.0.0.1:{mport}", "--key-file", key])
    assert r.returncode == 0, r.stderr
    header = r.stdout.splitlines()[0].split()
    assert header == documented, (header, documented)
    assert len(r.stdout.splitlines()) >= 2, r.stdout  # ninfd-right-key is registered
    links = re.search(r"`--links` prints `([^`]+)`", section.replace("\n", " ")).group(1).split()
    r = run([meta, "--links", "--server", f"127.0.0.1:{mport}", "--key-file", key])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].split() == links, (r.stdout, links)


# --- 5. /metrics has what --status has, and process_* -----------------------

# Status lines exported under another name (the rest: a metric whose name
# holds the line's name). "" : not a number a metric carries.
NINFD_RENAMED = {
    "pid": "", "version": "ninf_build_info", "running": "ninf_slots_busy",
    "queued": "ninf_queue_length", "arrival_bytes": "ninf_arrival_bytes_limit",
    "arrival_held": "ninf_arrival_calls", "arrival_held_bytes": "ninf_arrival_bytes",
    "arriving": "ninf_arguments_arriving", "held": "ninf_arguments_held",
    "held_bytes": "ninf_arguments_held_bytes", "jobs": 'ninf_executables{state="live"}',
    "warm_idle": 'ninf_executables{state="warm_idle"}',
    "persistent_executables": 'ninf_executables{state="persistent"}',
    "completed": 'ninf_calls_ended_total{outcome="completed"}',
    "failed": 'ninf_calls_ended_total{outcome="failed"}',
    "cancelled": 'ninf_calls_ended_total{outcome="cancelled"}',
    "rejected": 'ninf_calls_ended_total{outcome="rejected"}',
    "denied": "ninf_calls_denied_total", "bytes_in": 'ninf_bytes_total{direction="in"}',
    "bytes_out": 'ninf_bytes_total{direction="out"}', "store_cap": "ninf_store_cap_bytes",
    "thread_budget": "ninf_config_info", "queue_order": "ninf_config_info",
    "admission": "ninf_config_info",
}
META_RENAMED = {
    "pid": "", "version": "ninf_meta_build_info", "policy": "ninf_meta_config_info",
    "placements": 'ninf_meta_placements_total{result="placed"}',
    "placements_unserved": 'ninf_meta_placements_total{result="unserved"}',
    "placements_denied": 'ninf_meta_placements_total{result="denied"}',
    "probes": "ninf_meta_probes_total", "outcomes_ok": 'ninf_meta_outcomes_total{outcome="ok"}',
    "outcomes_failed": 'ninf_meta_outcomes_total{outcome="failed"}',
    "registrations_refused": 'ninf_meta_refused_by_kind_total{kind="registration"}',
    "reports_refused": 'ninf_meta_refused_by_kind_total{kind="report"}',
    "report_functions_refused": 'ninf_meta_refused_by_kind_total{kind="report_functions"}',
    "outcomes_refused": 'ninf_meta_refused_by_kind_total{kind="outcome"}',
}
# Lines that move between the --status query and the scrape (uptime, load,
# the status query's own connection), and `placements`, which the metric
# splits by result (placed, unserved, denied): compared by presence only.
MOVING = {"uptime_seconds", "load_average_1", "connections", "connections_accepted",
          "busy_core_seconds", "queue_seconds", "placements"}


def check_parity(status, text, prefix, renamed):
    got = samples(text)
    names = "\n".join(got)
    for name, value in status.items():
        if "." in name:  # function.*, user.*: the labelled families
            continue
        metric = renamed.get(name, None)
        if metric == "":
            continue
        if metric is None:
            found = [m for m in got if m.split("{")[0] in (f"{prefix}{name}",
                                                           f"{prefix}{name}_total",
                                                           f"{prefix}{name}_bytes")]
            assert found, f"--status {name}:{value} has no metric in:\n{names}"
            metric = found[0]
        else:
            assert any(m == metric or m.startswith(metric + "{") or m.startswith(metric)
                       for m in got), f"--status {name} ({metric}) missing"
        if name in MOVING or metric not in got:
            continue
        try:
            number = float(value)
        except ValueError:
            continue
        assert abs(got[metric] - number) < 1e-6, (name, value, metric, got[metric])


def documented_metrics():
    """Metric names docs/monitoring.md's tables give: each cell's backticked
    names, "`_queued`" after "`ninf_meta_server_running`" standing for
    ninf_meta_server_queued, labels ("{version}") left out."""
    names = set()
    for line in open(os.path.join(ROOT, "docs", "monitoring.md")):
        if not line.startswith("| `"):
            continue
        prefix = None
        for token in re.findall(r"`([a-z_][a-z0-9_]*)(?:\{[^`]*\})?`", line.split("|")[1]):
            if token.startswith("_") and prefix:
                names.add(prefix + token)
            elif token.startswith(("ninf_", "process_")):
                names.add(token)
                prefix = prefix or token.rsplit("_", 1)[0]
    return names


def check_documented(text):
    families = re.findall(r"^# TYPE (\S+) ", text, re.M)
    missing = sorted(set(families) - documented_metrics())
    assert not missing, f"docs/monitoring.md does not name {missing}"


def check_process_metrics(text):
    got = samples(text)
    for name in ["process_cpu_seconds_total", "process_resident_memory_bytes",
                 "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                 "process_start_time_seconds"]:
        assert name in got, name
    assert got["process_resident_memory_bytes"] > 1e6, got["process_resident_memory_bytes"]
    assert got["process_virtual_memory_bytes"] >= got["process_resident_memory_bytes"]
    assert 3 <= got["process_open_fds"] <= got["process_max_fds"], got["process_open_fds"]
    assert time.time() - 3600 < got["process_start_time_seconds"] <= time.time() + 1
    assert "# TYPE process_cpu_seconds_total counter" in text


def check_meta_metrics(meta, work, daemons):
    key = make_key(work, "meta-metrics.key")
    mport_metrics = free_port()
    _, mport = daemons.start(meta, "meta-metrics", "--key-file", key, "--metrics",
                             str(mport_metrics))
    url = f"http://127.0.0.1:{mport_metrics}"
    assert get(url + "/healthz") == (200, "ready\n")
    r = check_status_against_scrape([meta, "--status", "--server", f"127.0.0.1:{mport}"], key,
                                    url, "ninf_meta_", META_RENAMED)
    assert "requires authentication" in r.stderr, r.stderr


def check_status_against_scrape(status_argv, key, url, prefix, renamed):
    """A keyless status query (refused: one auth failure), then a keyed one,
    then a scrape: process_* and every metric documented, every --status line
    in /metrics, and the counters moved by exactly those two connections.
    Returns the refused query's result."""
    before = samples(get(url + "/metrics")[1])
    refused = run(status_argv)
    assert refused.returncode != 0, refused.stdout
    r = run(status_argv + ["--key-file", key])
    assert r.returncode == 0, r.stderr
    status = status_lines(r.stdout)
    status_code, text = get(url + "/metrics")
    assert status_code == 200
    check_process_metrics(text)
    check_documented(text)
    check_parity(status, text, prefix, renamed)
    after = samples(text)
    assert after[prefix + "auth_failures_total"] == before[prefix + "auth_failures_total"] + 1
    assert int(status["auth_failures"]) == after[prefix + "auth_failures_total"]
    assert (after[prefix + "connections_accepted_total"]
            >= before[prefix + "connections_accepted_total"] + 2)
    assert after["process_cpu_seconds_total"] >= before["process_cpu_seconds_total"]
    return refused


# --- 5, 6. ninfd's /metrics, /healthz, draining ------------------------------

def check_ninfd_metrics_and_drain(ninfd, ep_demo, work, daemons):
    key = make_key(work, "ninfd.key")
    metrics = free_port()
    # No warm executables: nothing starts between a --status and a scrape.
    proc, port = daemons.start(ninfd, "ninfd-metrics", "--key-file", key, "--metrics",
                               str(metrics), "--unix-socket", "", "--grace-seconds", "60",
                               "--warm-executables", "0")
    url = f"http://127.0.0.1:{metrics}"
    assert get(url + "/healthz") == (200, "ready\n")
    assert get(url + "/")[1] == "ninfd metrics: GET /metrics, GET /healthz\n"
    server = f"127.0.0.1:{port}"
    check_status_against_scrape([ninfd, "--status", "--server", server], key, url, "ninf_",
                                NINFD_RENAMED)

    # Draining: a call running, SIGTERM; /healthz turns 503 while the call
    # may finish (grace_seconds), /metrics still answers.
    env = clean_env(NINF_SERVER=server, NINF_KEY_FILE=key)
    client = subprocess.Popen([ep_demo, "38"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        def running():
            r = run([ninfd, "--status", "--server", server, "--key-file", key])
            return status_lines(r.stdout).get("running") == "1" or None
        wait_for("the ep call running", running, 60)
        proc.send_signal(signal.SIGTERM)
        wait_log(work, "ninfd-metrics", r"event=shutdown ", 10)
        code, body = get(url + "/healthz")
        assert (code, body) == (503, "draining\n"), (code, body)
        assert get(url + "/metrics")[0] == 200
        proc.send_signal(signal.SIGTERM)  # the second one ends the call now
        proc.wait(timeout=30)
    finally:
        client.kill()
        client.wait()
    assert get(url + "/healthz")[0] is None  # gone with the daemon


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ninfd, meta, ep_demo = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="ninf-ops-")
    daemons = Daemons(work)
    ok = False
    try:
        check_config_errno(ninfd, meta)
        check_openblas_core(ninfd, work, daemons)
        check_meta_variables(meta, work, daemons)
        mport, key = check_auth_between_daemons(ninfd, meta, work, daemons)
        check_view_headers(meta, mport, key)
        check_meta_metrics(meta, work, daemons)
        check_ninfd_metrics_and_drain(ninfd, ep_demo, work, daemons)
        ok = True
    finally:
        daemons.stop()
        if ok or not os.environ.get("NINF_TEST_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"ops_test: logs kept in {work}", file=sys.stderr)
    print("ops_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
