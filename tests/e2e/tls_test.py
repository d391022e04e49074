#!/usr/bin/env python3
"""TLS 1.3 between the client, ninfd and the executables (docs/security.md).

Makes a site CA and certificates with the openssl command line (a server
certificate for 127.0.0.1, an expired one, one for another host, an
untrusted self-signed one, a client certificate), starts real ninfd
daemons with and without tls_cert, and runs the Python client (libninf) in
subprocesses, one per client configuration (NINF_TLS_CA, NINF_TLS_CERT,
NINF_TLS_KEY are read once per process), over TCP (NINF_TRANSPORT=tcp).
Each check is a function named after what it checks; all run, failures are
listed at the end.

    tls_test.py NINFD          (PYTHONPATH: the build tree's python folder)
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

REQUEST_TIMEOUT = 2  # seconds, the daemons' request_timeout_seconds
# A non-loopback address of the metrics check's own network namespace.
METRICS_HOST = "10.231.0.1"
# A recognisable array: if these bytes show on the wire, the arrays travel
# in the clear.
PATTERN = b"SECRET-ARRAY-PATTERN-0123456789!"  # 32 bytes = 4 doubles


# ---------------------------------------------------------------- client side
# Run as `tls_test.py --client JSON`: one client process, its TLS settings
# in the environment; prints one JSON line per operation.

def client_main(spec):
    import numpy as np
    import ninf
    ninf.set_server(spec["server"])
    out = []
    for op in spec["ops"]:
        try:
            out.append({"op": op, "ok": True, "value": run_op(np, ninf, op)})
        except Exception as e:  # the error's text is what is checked
            out.append({"op": op, "ok": False, "error": str(e)})
        print(json.dumps(out[-1]), flush=True)


def pattern_array(np, n):
    raw = (PATTERN * (n * 8 // len(PATTERN) + 1))[:n * 8]
    return np.frombuffer(bytearray(raw), dtype=np.float64).copy()


def run_op(np, ninf, op):
    if op == "null":
        ninf.call("null")
        return "done"
    if op.startswith("echo"):
        n = int(op.split()[1])
        a = pattern_array(np, n)
        before = a.tobytes()
        ninf.call("echo", n, a)
        return "same" if a.tobytes() == before else "differs"
    if op == "dgesv":
        n = 200
        rng = np.random.default_rng(7)
        a0 = rng.standard_normal((n, n)) + n * np.eye(n)
        b0 = rng.standard_normal(n)
        a = np.asfortranarray(a0.copy())
        b = np.array(b0, order="F")
        ipiv = np.empty(n, dtype=np.int32)
        info = ninf.call("dgesv", n, 1, a, n, ipiv, b, n, None)
        x = np.linalg.solve(a0, b0)
        return {"info": int(info), "max_error": float(np.max(np.abs(b - x)))}
    if op.startswith("ep "):
        q = np.zeros(10)
        sx, sy = ninf.call("ep", int(op.split()[1]), None, None, q)
        return "done"
    if op.startswith("handle "):
        calls = int(op.split()[1])
        results = []
        with ninf.Handle("echo") as h:
            for i in range(calls):
                a = pattern_array(np, 1000 + i)
                before = a.tobytes()
                h.call(1000 + i, a)
                results.append(a.tobytes() == before)
        return "same" if all(results) else "differs"
    if op == "handle-paused":
        # One call, then wait for the test's go (a line on stdin), then two more.
        with ninf.Handle("echo") as h:
            a = pattern_array(np, 100)
            h.call(100, a)
            print(json.dumps({"op": "paused"}), flush=True)
            sys.stdin.readline()
            for n in (200, 300):
                a = pattern_array(np, n)
                before = a.tobytes()
                h.call(n, a)
                if a.tobytes() != before:
                    return "differs"
        return "same"
    raise ValueError("unknown op " + op)


# ---------------------------------------------------------------- test side

def sh(*cmd, cwd):
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_certificates(d):
    """The site CA and the certificates the checks need, in folder d."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    sh("openssl", "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
       "-subj", "/CN=Test Site CA", cwd=d)

    def signed(name, subject, san, days="30", usage="serverAuth"):
        sh("openssl", "req", *ec, "-keyout", name + ".key", "-out", name + ".csr",
           "-subj", subject, cwd=d)
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write(f"subjectAltName={san}\nextendedKeyUsage={usage}\n" if san else
                    f"extendedKeyUsage={usage}\n")
        sh("openssl", "x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
           "-CAcreateserial", "-out", name + ".pem", "-days", days, "-extfile", name + ".ext",
           cwd=d)

    signed("server", "/CN=ninfd-test", "IP:127.0.0.1")
    signed("server2", "/CN=ninfd-test-renewed", "IP:127.0.0.1")
    signed("expired", "/CN=ninfd-expired", "IP:127.0.0.1", days="-1")
    signed("wronghost", "/CN=elsewhere", "DNS:elsewhere.example,IP:10.9.9.9")
    signed("metricshost", "/CN=ninfd-metrics", f"IP:127.0.0.1,IP:{METRICS_HOST}")
    signed("alice", "/O=site/CN=alice", None, usage="clientAuth")
    signed("bob", "/O=site/CN=bob", None, usage="clientAuth")
    signed("carol", "/O=site/CN=carol", None, usage="clientAuth")
    sh("openssl", "req", "-x509", *ec, "-keyout", "selfsigned.key", "-out", "selfsigned.pem",
       "-days", "30", "-subj", "/CN=self", "-addext", "subjectAltName=IP:127.0.0.1", cwd=d)
    # A second CA that signed nothing the server trusts.
    sh("openssl", "req", "-x509", *ec, "-keyout", "other-ca.key", "-out", "other-ca.pem",
       "-days", "30", "-subj", "/CN=Other CA", cwd=d)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    def __init__(self, ninfd, workdir, name, *flags):
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log_path = os.path.join(workdir, f"ninfd-{name}.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [ninfd, "--port", str(self.port), "--request-timeout-seconds", str(REQUEST_TIMEOUT),
             "--log-level", "debug", *flags],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"ninfd {name} exited:\n" + self.text())
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"ninfd {name} did not listen:\n" + self.text())

    def text(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def client_env(certs, ca=None, cert=None, key=None):
    env = dict(os.environ)
    env["NINF_TRANSPORT"] = "tcp"
    env["NINF_TIMEOUT"] = "20"
    for var in ("NINF_TLS_CA", "NINF_TLS_CERT", "NINF_TLS_KEY", "NINF_SERVER"):
        env.pop(var, None)
    if ca:
        env["NINF_TLS_CA"] = os.path.join(certs, ca)
    if cert:
        env["NINF_TLS_CERT"] = os.path.join(certs, cert)
        env["NINF_TLS_KEY"] = os.path.join(certs, key)
    return env


def run_client(server, ops, env, timeout=60):
    spec = json.dumps({"server": server, "ops": ops})
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--client", spec], env=env,
                       capture_output=True, text=True, timeout=timeout)
    results = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    if len(results) != len(ops):
        raise AssertionError(f"client ended early (status {p.returncode}):\n{p.stdout}\n{p.stderr}")
    return results


def expect_ok(results):
    for r in results:
        assert r["ok"], f"{r['op']} failed: {r.get('error')}"
    return [r["value"] for r in results]


def expect_error(results, *words):
    assert len(results) == 1
    r = results[0]
    assert not r["ok"], f"{r['op']} succeeded, expected an error naming {words}"
    for w in words:
        assert w in r["error"], f"error does not say {w!r}: {r['error']}"
    return r["error"]


class Forwarder:
    """A TCP forwarder on 127.0.0.1 that records the bytes of both directions."""

    def __init__(self, target_port):
        self.target = target_port
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.to_server = bytearray()
        self.to_client = bytearray()
        self.lock = threading.Lock()
        self.threads = []
        t = threading.Thread(target=self.accept_loop, daemon=True)
        t.start()

    def accept_loop(self):
        while True:
            try:
                c, _ = self.listener.accept()
            except OSError:
                return
            s = socket.create_connection(("127.0.0.1", self.target))
            for src, dst, buf in ((c, s, self.to_server), (s, c, self.to_client)):
                t = threading.Thread(target=self.pump, args=(src, dst, buf), daemon=True)
                t.start()
                self.threads.append(t)

    def pump(self, src, dst, buf):
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                with self.lock:
                    buf.extend(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self):
        self.listener.close()


# ---------------------------------------------------------------- the checks

def check_calls_over_tls_equal_plaintext(ctx):
    ops = ["null", "echo 1000", "echo 300000", "dgesv", "handle 3"]
    plain = expect_ok(run_client(ctx.plain.address, ops, client_env(ctx.certs)))
    secure = expect_ok(run_client(ctx.tls.address, ops, client_env(ctx.certs, "ca.pem")))
    assert plain[:3] == ["done", "same", "same"], plain
    assert secure[:3] == ["done", "same", "same"], secure
    for res in (plain[3], secure[3]):
        assert res["info"] == 0 and res["max_error"] < 1e-9, res
    assert plain[4] == secure[4] == "same"
    # The calls really went through TLS: handshakes in ninfd's log.
    assert "event=tls_established" in ctx.tls.text()


def check_one_shot_calls_resume_the_session(ctx):
    before = ctx.tls.text().count("resumed=1")
    expect_ok(run_client(ctx.tls.address, ["null", "null", "null"], client_env(ctx.certs, "ca.pem")))
    time.sleep(0.2)
    after = ctx.tls.text().count("resumed=1")
    # The first connection of the process is a full handshake; the next two
    # resume with the ticket the one before brought.
    assert after - before >= 2, f"{after - before} resumed handshakes"


def check_wire_capture_holds_no_array_and_no_frame(ctx):
    fwd = Forwarder(ctx.tls.port)
    try:
        expect_ok(run_client(f"127.0.0.1:{fwd.port}", ["echo 200000", "handle 2", "null"],
                             client_env(ctx.certs, "ca.pem")))
    finally:
        fwd.close()
    time.sleep(0.3)
    wire = bytes(fwd.to_server) + bytes(fwd.to_client)
    assert len(fwd.to_server) > 200000 * 8, f"only {len(fwd.to_server)} bytes captured"
    assert PATTERN[:16] not in wire, "array content on the wire"
    # Every frame, HANDOVER and its key included, went encrypted: not one
    # plaintext frame header on the wire.
    assert b"NINF\x01" not in wire, "a plaintext frame on the wire"
    assert fwd.to_server[:2] == b"\x16\x03", "the client did not start with a TLS ClientHello"
    # The private key of the server never travels either.
    with open(os.path.join(ctx.certs, "server.key"), "rb") as f:
        key_pem = f.read()
    assert key_pem[40:80] not in wire
    # The same capture of a plaintext server sees the pattern (the check can fail).
    fwd = Forwarder(ctx.plain.port)
    try:
        expect_ok(run_client(f"127.0.0.1:{fwd.port}", ["echo 1000"], client_env(ctx.certs)))
    finally:
        fwd.close()
    time.sleep(0.3)
    assert PATTERN[:16] in bytes(fwd.to_server), "the plaintext capture misses the pattern"


def check_mutual_tls_requires_a_client_certificate(ctx):
    err = expect_error(run_client(ctx.mtls.address, ["null"], client_env(ctx.certs, "ca.pem")),
                       "certificate")
    assert "NINF_TLS_CERT" in err or "tls_cert" in err, err
    ok = expect_ok(run_client(ctx.mtls.address, ["null", "echo 5000", "handle 2"],
                              client_env(ctx.certs, "ca.pem", "alice.pem", "alice.key")))
    assert ok == ["done", "same", "same"]
    assert 'subject="CN=alice,O=site"' in ctx.mtls.text(), "the client's subject is not seen"


def check_expired_certificate_is_refused_naming_it(ctx):
    d = ctx.daemon("expired", "--tls-cert", ctx.path("expired.pem"), "--tls-key",
                   ctx.path("expired.key"))
    expect_error(run_client(d.address, ["null"], client_env(ctx.certs, "ca.pem")), "expired",
                 d.address, "tls_cert")


def check_wrong_host_certificate_is_refused_naming_it(ctx):
    d = ctx.daemon("wronghost", "--tls-cert", ctx.path("wronghost.pem"), "--tls-key",
                   ctx.path("wronghost.key"))
    expect_error(run_client(d.address, ["null"], client_env(ctx.certs, "ca.pem")),
                 "another host", d.address)


def check_untrusted_certificate_is_refused_naming_it(ctx):
    d = ctx.daemon("selfsigned", "--tls-cert", ctx.path("selfsigned.pem"), "--tls-key",
                   ctx.path("selfsigned.key"))
    expect_error(run_client(d.address, ["null"], client_env(ctx.certs, "ca.pem")), "untrusted",
                 "NINF_TLS_CA")
    # And a good server under a CA the client does not trust.
    expect_error(run_client(ctx.tls.address, ["null"], client_env(ctx.certs, "other-ca.pem")),
                 "untrusted")


def check_plaintext_client_to_tls_server_is_told_to_set_tls_ca(ctx):
    expect_error(run_client(ctx.tls.address, ["null"], client_env(ctx.certs)), "requires TLS",
                 "NINF_TLS_CA")


def check_tls_client_to_plaintext_server_is_told_it_does_not_speak_tls(ctx):
    expect_error(run_client(ctx.plain.address, ["null"], client_env(ctx.certs, "ca.pem")),
                 "does not speak TLS", ctx.plain.address)


def check_stalled_handshake_is_closed_and_others_served(ctx):
    s = socket.create_connection(("127.0.0.1", ctx.tls.port))
    # The first bytes of a ClientHello record announcing more than follows.
    s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
    started = time.monotonic()
    # Served meanwhile.
    expect_ok(run_client(ctx.tls.address, ["echo 1000"], client_env(ctx.certs, "ca.pem")))
    s.settimeout(REQUEST_TIMEOUT + 5)
    try:
        data = s.recv(100)
    except ConnectionResetError:
        data = b""
    waited = time.monotonic() - started
    s.close()
    assert data == b"", f"got {data!r} instead of a close"
    assert REQUEST_TIMEOUT - 0.5 <= waited <= REQUEST_TIMEOUT + 3, f"closed after {waited:.1f} s"
    assert "event=tls_handshake_timeout" in ctx.tls.text()


def check_garbage_instead_of_client_hello_is_closed(ctx):
    for junk in (b"\x00" * 64, os.urandom(300), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                 b"\x16\x03\x01\x00\x05hello"):
        s = socket.create_connection(("127.0.0.1", ctx.tls.port))
        s.sendall(junk)
        s.settimeout(REQUEST_TIMEOUT + 3)
        started = time.monotonic()
        try:
            while s.recv(4096):  # an alert at most, then the close
                pass
        except ConnectionResetError:
            pass
        assert time.monotonic() - started < REQUEST_TIMEOUT + 2
        s.close()
    assert ctx.tls.alive()
    expect_ok(run_client(ctx.tls.address, ["null"], client_env(ctx.certs, "ca.pem")))


def check_sighup_reloads_certificate_while_a_handle_goes_on(ctx):
    import shutil
    import ssl
    cert, key = ctx.path("live.pem"), ctx.path("live.key")
    shutil.copy(ctx.path("server.pem"), cert)
    shutil.copy(ctx.path("server.key"), key)
    d = ctx.daemon("reload", "--tls-cert", cert, "--tls-key", key)
    client = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--client",
         json.dumps({"server": d.address, "ops": ["handle-paused"]})],
        env=client_env(ctx.certs, "ca.pem"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True)
    try:
        line = client.stdout.readline()
        assert json.loads(line)["op"] == "paused", line
        shutil.copy(ctx.path("server2.pem"), cert)
        shutil.copy(ctx.path("server2.key"), key)
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "event=tls_reloaded" not in d.text():
            assert time.monotonic() < deadline, "no reload logged"
            time.sleep(0.05)
        # A new connection gets the new certificate.
        context = ssl.create_default_context(cafile=ctx.path("ca.pem"))
        with socket.create_connection(("127.0.0.1", d.port)) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as t:
                subject = dict(x[0] for x in t.getpeercert()["subject"])
        assert subject["commonName"] == "ninfd-test-renewed", subject
        client.stdin.write("go\n")
        client.stdin.flush()
        result = json.loads(client.stdout.readline())
        assert result["ok"] and result["value"] == "same", result
        assert client.wait(timeout=30) == 0
    finally:
        if client.poll() is None:
            client.kill()
    # A reload with a broken certificate keeps the one in use.
    with open(cert, "w") as f:
        f.write("not a certificate\n")
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while "event=reload_failed settings=tls" not in d.text():
        assert time.monotonic() < deadline, "no reload_failed logged"
        time.sleep(0.05)
    expect_ok(run_client(d.address, ["echo 100"], client_env(ctx.certs, "ca.pem")))


def check_status_and_list_speak_tls(ctx):
    # `ninfd --status` / `--list` against a TLS ninfd: with NINF_TLS_CA (the
    # client's variable, which is also ninfd's tls_ca) they answer; without
    # it the daemon's refusal says what to set. Against a ninfd that wants a
    # client certificate, NINF_TLS_CERT/NINF_TLS_KEY are shown.
    def tool(flag, server, env):
        return subprocess.run([ctx.ninfd, flag, "--server", server.address], env=env,
                              capture_output=True, text=True, timeout=30)

    for flag, answer in (("--status", "completed:"), ("--list", "dgesv(")):
        ok = tool(flag, ctx.tls, client_env(ctx.certs, "ca.pem"))
        assert ok.returncode == 0 and answer in ok.stdout, (flag, ok.stdout, ok.stderr)
        blind = tool(flag, ctx.tls, client_env(ctx.certs))
        assert blind.returncode == 1 and "requires TLS" in blind.stderr, (flag, blind.stderr)
    with_cert = tool("--status", ctx.mtls, client_env(ctx.certs, "ca.pem", "alice.pem",
                                                      "alice.key"))
    assert with_cert.returncode == 0 and "completed:" in with_cert.stdout, with_cert.stderr
    no_cert = tool("--status", ctx.mtls, client_env(ctx.certs, "ca.pem"))
    assert no_cert.returncode == 1, no_cert.stdout
    # A plaintext ninfd asked over TLS: the tool says to unset tls_ca.
    wrong = tool("--status", ctx.plain, client_env(ctx.certs, "ca.pem"))
    assert wrong.returncode == 1 and "does not speak TLS" in wrong.stderr, wrong.stderr


def check_one_shot_tls_calls_reuse_their_executable(ctx):
    # A one-shot call over TLS lasts longer than an executable's start, so
    # the replacement started at its hand-off was idle before the call's own
    # process came back, and the pool (one idle process per call slot) kept
    # the new one: every call started a process and none was reused (1651
    # started, 0 reused in 1650 calls). The pool now keeps the one that
    # comes back.
    d = ctx.daemon("reuse", "--tls-cert", ctx.path("server.pem"), "--tls-key",
                   ctx.path("server.key"), "--slots", "1", "--warm-executables", "1")
    expect_ok(run_client(d.address, ["null"] * 12, client_env(ctx.certs, "ca.pem")))
    status = subprocess.run([ctx.ninfd, "--status", "--server", d.address],
                            env=client_env(ctx.certs, "ca.pem"), capture_output=True, text=True,
                            timeout=30)
    stats = dict(line.split(":", 1) for line in status.stdout.splitlines() if ":" in line)
    started, reused = int(stats["executables_started"]), int(stats["executables_reused"])
    # A next call may come before the last one's process is back in the pool
    # (the client has its result first), and then takes or starts another:
    # under load a few more start (4 started, 10 reused was seen). The old
    # churn reused none.
    assert reused >= 6, (started, reused)


def check_loadtest_samples_a_tls_server(ctx):
    # ninf-loadtest's statistics queries reach a TLS ninfd as its calls do,
    # with the clients' NINF_TLS_CA: the run samples the server.
    tool = os.environ.get("NINF_LOADTEST")
    assert tool and os.path.exists(tool), "NINF_LOADTEST names no program"
    summary = os.path.join(ctx.workdir, "loadtest-tls-summary.csv")
    run = subprocess.run([tool, "--server", ctx.tls.address, "--workload", "linpack", "--size",
                          "32", "-c", "1", "--steps", "3", "--summary", summary],
                         env=client_env(ctx.certs, "ca.pem"), capture_output=True, text=True,
                         timeout=120)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "cannot sample" not in out, out
    with open(summary) as f:
        header, row = f.read().splitlines()[:2]
    fields = dict(zip(header.split(","), row.split(",")))
    assert fields["calls"] == "3", fields
    assert fields["load_mean"] not in ("", "-"), fields  # sampled: the server's load average


def check_silent_and_stalled_handshakes_make_room(ctx):
    # An address that fills its connections with sockets that say nothing,
    # or stall inside the TLS handshake, does not lock its good client out:
    # those make room as silent plaintext ones do (the hostile finding: 3 of
    # 3 good clients were refused).
    d = ctx.daemon("flood", "--tls-cert", ctx.path("server.pem"), "--tls-key",
                   ctx.path("server.key"), "--max-connections-per-client", "4")
    hello = client_hello(ctx)  # half of it is sent, then nothing more
    holders = []
    try:
        for i in range(4):
            s = socket.create_connection(("127.0.0.1", d.port))
            if i % 2:
                s.sendall(hello[:len(hello) // 2])  # stalls inside the handshake
            holders.append(s)
        time.sleep(1.5)  # past the grace a socket that sent nothing gets
        for _ in range(3):
            expect_ok(run_client(d.address, ["null"], client_env(ctx.certs, "ca.pem")))
        assert "event=connection_replaced" in d.text(), d.text()
    finally:
        for s in holders:
            s.close()


def check_refusal_on_a_tls_port_is_a_tls_alert_reported_as_such(ctx):
    # No room for another connection (a handle holds the only one this
    # address may have): the refusal is a TLS alert, and the client says the
    # server refused it. It used to be a plaintext FRAME_ERROR, which the
    # client reported as "does not speak TLS".
    d = ctx.daemon("full", "--tls-cert", ctx.path("server.pem"), "--tls-key",
                   ctx.path("server.key"), "--max-connections-per-client", "1")
    env = client_env(ctx.certs, "ca.pem")
    holder = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--client",
         json.dumps({"server": d.address, "ops": ["handle-paused"]})],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = holder.stdout.readline()
        assert json.loads(line)["op"] == "paused", line
        error = expect_error(run_client(d.address, ["null"], env), "refused the connection",
                             "TLS alert", "max_connections_per_client")
        assert "does not speak TLS" not in error, error
        assert "event=connection_refused" in d.text(), d.text()
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert json.loads(holder.stdout.readline())["value"] == "same"
    finally:
        holder.kill()
        holder.wait()
    expect_ok(run_client(d.address, ["null"], env))


def check_metrics_beyond_loopback_is_https_or_refused(ctx):
    # Plain HTTP beyond loopback is refused at start, naming what to set.
    p = subprocess.run([ctx.ninfd, "--port", "0", "--metrics", f"{METRICS_HOST}:0"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert f"refusing to serve metrics on {METRICS_HOST} over plain HTTP" in p.stderr + p.stdout
    assert "tls_cert" in p.stderr + p.stdout
    # With the daemon's certificate it is HTTPS, in a namespace of this
    # check's own where METRICS_HOST is an address (a veth pair).
    ns = f"ninf-tls-metrics-{os.getpid()}"
    sh("ip", "netns", "add", ns, cwd=ctx.certs)
    log_path = os.path.join(ctx.workdir, "ninfd-metrics.log")
    proc = None
    try:
        for cmd in (["link", "add", "v0", "type", "veth", "peer", "name", "v1"],
                    ["addr", "add", f"{METRICS_HOST}/24", "dev", "v0"],
                    ["link", "set", "v0", "up"], ["link", "set", "v1", "up"],
                    ["link", "set", "lo", "up"]):
            sh("ip", "-n", ns, *cmd, cwd=ctx.certs)
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                ["ip", "netns", "exec", ns, ctx.ninfd, "--port", "0", "--unix-socket", "",
                 "--tls-cert", ctx.path("metricshost.pem"), "--tls-key",
                 ctx.path("metricshost.key"), "--metrics", f"{METRICS_HOST}:0",
                 "--log-level", "debug"], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        port = None
        while port is None:
            assert time.monotonic() < deadline, open(log_path).read()
            for line in open(log_path):
                if "event=metrics_listening" in line:
                    assert "scheme=https" in line, line
                    port = int(line.split(f"address={METRICS_HOST}:")[1].split()[0])
            time.sleep(0.05)
        fetch = (
            "import ssl, sys, urllib.request\n"
            "ctx = ssl.create_default_context(cafile=sys.argv[1])\n"
            "print(urllib.request.urlopen(sys.argv[2], context=ctx, timeout=10).read()"
            ".decode())\n")
        url = f"https://{METRICS_HOST}:{port}/metrics"
        got = subprocess.run(["ip", "netns", "exec", ns, "/usr/bin/python3", "-c", fetch,
                              ctx.path("ca.pem"), url], capture_output=True, text=True,
                             timeout=30)
        assert got.returncode == 0 and "ninf_" in got.stdout, got.stderr[-2000:]
        # Plain HTTP gets no metrics there.
        plain = subprocess.run(["ip", "netns", "exec", ns, "/usr/bin/python3", "-c",
                                "import sys, urllib.request\n"
                                "print(urllib.request.urlopen(sys.argv[1], timeout=10).read())",
                                f"http://{METRICS_HOST}:{port}/metrics"],
                               capture_output=True, text=True, timeout=30)
        assert plain.returncode != 0 and "ninf_" not in plain.stdout, plain.stdout[-500:]
    finally:
        if proc:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        left = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        for pid in left.stdout.split():
            os.kill(int(pid), signal.SIGKILL)
        subprocess.run(["ip", "netns", "del", ns], check=False)


def check_unreadable_certificate_is_a_configuration_error(ctx):
    # Exit 2 (the units do not restart it) and one line that says which file
    # and why, not OpenSSL's "system lib; system lib".
    missing = ctx.path("absent.pem")
    for flags, named in ((["--tls-cert", missing, "--tls-key", ctx.path("server.key")],
                          f"tls_cert {missing}: No such file or directory"),
                         (["--tls-cert", ctx.path("server.pem"), "--tls-key", missing],
                          f"tls_key {missing}: No such file or directory")):
        run = subprocess.run([ctx.ninfd, "--port", str(free_port()), *flags],
                             capture_output=True, text=True, timeout=30)
        out = run.stdout + run.stderr
        assert run.returncode == 2, (run.returncode, out)
        assert named in out and "system lib" not in out, out
        assert len([l for l in out.splitlines() if "startup_failed" in l]) == 1, out


def check_failed_tls_reload_is_not_reported_as_applied(ctx):
    config = ctx.path("reload-config.toml")

    def write_config(cert):
        with open(config, "w") as f:
            f.write(f'tls_cert = "{cert}"\ntls_key = "{ctx.path("server.key")}"\n')

    write_config(ctx.path("server.pem"))
    d = ctx.daemon("reload-config", "--config", config)
    missing = ctx.path("renewed-but-absent.pem")
    write_config(missing)
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while "event=settings_reloaded" not in d.text():
        assert time.monotonic() < deadline, "no reload logged:\n" + d.text()
        time.sleep(0.05)
    lines = d.text().splitlines()
    failed = [l for l in lines if "event=reload_failed settings=tls" in l]
    assert len(failed) == 1 and "No such file or directory" in failed[0], failed
    assert "system lib" not in failed[0], failed
    summary = [l for l in lines if "event=settings_reloaded" in l]
    assert all("tls_cert" not in l for l in summary), summary
    # The certificate in use goes on serving.
    expect_ok(run_client(d.address, ["null"], client_env(ctx.certs, "ca.pem")))


def check_two_phase_submit_and_collect_over_tls(ctx):
    demo = os.environ.get("TWO_PHASE_DEMO")
    assert demo and os.path.exists(demo), "TWO_PHASE_DEMO names no program"
    fwd = Forwarder(ctx.tls.port)
    try:
        env = client_env(ctx.certs, "ca.pem")
        env["NINF_SERVER"] = f"127.0.0.1:{fwd.port}"
        sub = subprocess.run([demo, "submit", "60"], env=env, capture_output=True, text=True,
                             timeout=60)
        assert sub.returncode == 0, sub.stderr
        ticket = sub.stdout.strip()
        col = subprocess.run([demo, "collect", ticket, "60"], env=env, capture_output=True,
                             text=True, timeout=60)
        assert col.returncode == 0 and "VERIFIED" in col.stdout, col.stdout + col.stderr
    finally:
        fwd.close()
    time.sleep(0.3)
    wire = bytes(fwd.to_server) + bytes(fwd.to_client)
    assert len(wire) > 2 * 60 * 60 * 8, f"only {len(wire)} bytes captured"
    assert b"NINF\x01" not in wire, "a plaintext frame on the wire"
    # And without TLS the same program is refused with the advice.
    env = client_env(ctx.certs)
    env["NINF_SERVER"] = ctx.tls.address
    sub = subprocess.run([demo, "submit", "60"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert sub.returncode != 0 and "requires TLS" in sub.stderr, sub.stderr


def check_queued_call_gets_heartbeats_then_the_handover(ctx):
    d = ctx.daemon("oneslot", "--slots", "1", "--tls-cert", ctx.path("server.pem"), "--tls-key",
                   ctx.path("server.key"))
    env = client_env(ctx.certs, "ca.pem")
    env["NINF_HEARTBEAT"] = "0.2"
    spec = json.dumps({"server": d.address, "ops": ["ep 27"]})
    long_call = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--client", spec],
                                 env=env, stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while "event=call_start" not in d.text():
            assert time.monotonic() < deadline, "the long call did not start"
            time.sleep(0.02)
        # This one waits for the slot: ninfd's heartbeats, then HANDOVER.
        assert expect_ok(run_client(d.address, ["echo 3000"], env)) == ["same"]
        assert "event=call_queued" in d.text(), "the second call was never queued"
        out = long_call.communicate(timeout=60)[0]
        assert json.loads(out.splitlines()[-1])["ok"], out
    finally:
        if long_call.poll() is None:
            long_call.kill()


def check_executable_killed_after_handover_gets_a_close_not_plaintext(ctx):
    # call_wall_seconds kills the routine; on a plaintext connection ninfd
    # tells the client why in a frame of its own, on a TLS one (the socket
    # carries the client's session with the executable) it closes.
    flags = ["--call-wall-seconds", "1"]
    plain = ctx.daemon("wall-plain", *flags)
    err = expect_error(run_client(plain.address, ["ep 34"], client_env(ctx.certs)),
                       "wall-clock limit")
    d = ctx.daemon("wall-tls", *flags, "--tls-cert", ctx.path("server.pem"), "--tls-key",
                   ctx.path("server.key"))
    err = expect_error(run_client(d.address, ["ep 34"], client_env(ctx.certs, "ca.pem")), "closed")
    # A plaintext frame inside the TLS stream would show as a TLS error.
    assert "TLS" not in err, err
    assert d.alive()
    expect_ok(run_client(d.address, ["null"], client_env(ctx.certs, "ca.pem")))


def check_key_file_authentication_runs_inside_tls(ctx):
    key = ctx.path("shared.key")
    with open(key, "w") as f:
        f.write(os.urandom(32).hex() + "\n")
    os.chmod(key, 0o600)
    d = ctx.daemon("keyed", "--key-file", key, "--tls-cert", ctx.path("server.pem"),
                   "--tls-key", ctx.path("server.key"))
    env = client_env(ctx.certs, "ca.pem")
    env["NINF_KEY_FILE"] = key
    assert expect_ok(run_client(d.address, ["echo 2000", "handle 2"], env)) == ["same", "same"]
    # TLS alone does not replace the key: without it the call is refused.
    expect_error(run_client(d.address, ["null"], client_env(ctx.certs, "ca.pem")), "auth")


def check_transaction_block_over_tls_is_verified(ctx):
    # Over TLS the client forwards nothing (the executables' fetches are
    # plaintext, which a TLS ninfd refuses): the block still computes right.
    demo = os.environ.get("TRANSACTION_DEMO")
    assert demo and os.path.exists(demo), "TRANSACTION_DEMO names no program"
    env = client_env(ctx.certs, "ca.pem")
    env["NINF_SERVER"] = ctx.tls.address
    run = subprocess.run([demo, "60"], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "VERIFIED" in run.stdout, run.stdout + run.stderr


def check_users_by_certificate_subject_get_their_access(ctx):
    # [users.NAME] cert_subject: a verified client certificate is a user,
    # with no key file (docs/security.md#users); the allow list of `echo`
    # names alice only; carol's certificate is signed by the site CA but
    # names no user: she is anonymous, allowed only what has no allow list.
    config = os.path.join(ctx.workdir, "cert-users.toml")
    with open(config, "w") as f:
        f.write('[users.alice]\ncert_subject = "CN=alice,O=site"\n'
                '[users.bob]\ncert_subject = "CN=bob,O=site"\n'
                '[limits.echo]\nallow = ["alice"]\n')
    d = ctx.daemon("cert-users", "--tls-cert", ctx.path("server.pem"), "--tls-key",
                   ctx.path("server.key"), "--tls-client-ca", ctx.path("ca.pem"),
                   "--config", config)
    assert expect_ok(run_client(d.address, ["null", "echo 5000"],
                                client_env(ctx.certs, "ca.pem", "alice.pem", "alice.key"))) == \
        ["done", "same"]
    assert expect_ok(run_client(d.address, ["null"],
                                client_env(ctx.certs, "ca.pem", "bob.pem", "bob.key"))) == ["done"]
    expect_error(run_client(d.address, ["echo 5000"],
                            client_env(ctx.certs, "ca.pem", "bob.pem", "bob.key")), "bob", "echo")
    expect_error(run_client(d.address, ["echo 5000"],
                            client_env(ctx.certs, "ca.pem", "carol.pem", "carol.key")), "echo")
    text = d.text()
    assert "user=alice" in text and "user=bob" in text, "the users are not on the call lines"


# ------------------------------------------------- hostile TLS input (issue 29)
# Each attack must cost the daemon nothing lasting: its descriptors and
# resident memory come back to what they were before.

def daemon_resources(d):
    """(open descriptors, VmRSS in KiB) of daemon d."""
    fds = len(os.listdir(f"/proc/{d.proc.pid}/fd"))
    with open(f"/proc/{d.proc.pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return fds, rss


def expect_back_to_baseline(d, fds_before, rss_before, rss_slack_kib=8192):
    deadline = time.monotonic() + REQUEST_TIMEOUT + 5
    while True:
        fds, rss = daemon_resources(d)
        if fds <= fds_before or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert fds <= fds_before, f"ninfd holds {fds} descriptors, {fds_before} before"
    assert rss - rss_before <= rss_slack_kib, f"ninfd's RSS grew {rss - rss_before} KiB"
    assert d.alive()


def recv_until_closed(s, limit):
    """Reads until the peer closes; the seconds that took."""
    s.settimeout(limit)
    started = time.monotonic()
    try:
        while s.recv(65536):
            pass
    except (ConnectionResetError, ssl_module().SSLError):
        pass
    return time.monotonic() - started


def ssl_module():
    import ssl
    return ssl


def client_hello(ctx):
    """The bytes of a real TLS 1.3 ClientHello for the test's server."""
    ssl = ssl_module()
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.load_verify_locations(ctx.path("ca.pem"))
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = c.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = outgoing.read()
    assert hello[:1] == b"\x16" and len(hello) > 100, hello[:16]
    return hello


def check_tls12_only_client_is_refused_with_an_alert(ctx):
    # TLS 1.2 is where renegotiation lives; ninfd speaks 1.3 only, so a
    # 1.2-only client (and with it any renegotiation) is refused at its hello.
    ssl = ssl_module()
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.load_verify_locations(ctx.path("ca.pem"))
    c.maximum_version = ssl.TLSVersion.TLSv1_2
    fds0, rss0 = daemon_resources(ctx.tls)
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", ctx.tls.port), timeout=5) as raw:
            try:
                with c.wrap_socket(raw, server_hostname="127.0.0.1"):
                    raise AssertionError("a TLS 1.2 handshake succeeded")
            except ssl.SSLError as e:
                assert "PROTOCOL_VERSION" in str(e).upper(), f"not a protocol_version alert: {e}"
    expect_back_to_baseline(ctx.tls, fds0, rss0)
    assert "event=tls_handshake_failed" in ctx.tls.text()
    expect_ok(run_client(ctx.tls.address, ["null"], client_env(ctx.certs, "ca.pem")))


def make_long_chain(ctx, links=99):
    """A client certificate under `links` intermediates under the site CA:
    chain100.pem holds the 100 certificates (leaf first), chain100.key the
    leaf's key. All intermediates share one key: only the length matters."""
    d = ctx.certs
    if os.path.exists(os.path.join(d, "chain100.pem")):
        return
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    with open(os.path.join(d, "int.ext"), "w") as f:
        f.write("basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign\n")
    with open(os.path.join(d, "leaf.ext"), "w") as f:
        f.write("extendedKeyUsage=clientAuth\n")
    sh("openssl", "req", *ec, "-keyout", "int.key", "-out", "int.csr", "-subj", "/CN=int", cwd=d)
    issuer, issuer_key, chain = "ca.pem", "ca.key", []
    for i in range(links):
        sh("openssl", "req", "-new", "-key", "int.key", "-out", "int.csr", "-subj",
           f"/CN=intermediate {i}", cwd=d)
        sh("openssl", "x509", "-req", "-in", "int.csr", "-CA", issuer, "-CAkey", issuer_key,
           "-set_serial", str(1000 + i), "-out", f"int{i}.pem", "-days", "30",
           "-extfile", "int.ext", cwd=d)
        issuer, issuer_key = f"int{i}.pem", "int.key"
        chain.insert(0, f"int{i}.pem")
    sh("openssl", "req", *ec, "-keyout", "chain100.key", "-out", "leaf.csr", "-subj",
       "/O=site/CN=deep", cwd=d)
    sh("openssl", "x509", "-req", "-in", "leaf.csr", "-CA", issuer, "-CAkey", issuer_key,
       "-set_serial", "999", "-out", "leaf.pem", "-days", "30", "-extfile", "leaf.ext", cwd=d)
    with open(os.path.join(d, "chain100.pem"), "w") as out:
        for name in ["leaf.pem"] + chain:
            with open(os.path.join(d, name)) as f:
                out.write(f.read())


def check_client_chain_of_100_certificates_is_refused_quickly(ctx):
    make_long_chain(ctx)
    ssl = ssl_module()
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.load_verify_locations(ctx.path("ca.pem"))
    c.load_cert_chain(ctx.path("chain100.pem"), ctx.path("chain100.key"))
    fds0, rss0 = daemon_resources(ctx.mtls)
    for _ in range(30):
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", ctx.mtls.port), timeout=5) as raw:
            # TLS 1.3: the client's certificate goes after the server's
            # Finished, so the refusal shows on the first read.
            try:
                with c.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                    s.settimeout(5)
                    s.sendall(b"\0" * 8)
                    data = s.recv(100)
                    assert data == b"", f"the daemon answered {data!r}"
            except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
                pass
        assert time.monotonic() - started < 1.5, "the refusal took long"
    expect_back_to_baseline(ctx.mtls, fds0, rss0)
    log = ctx.mtls.text()
    assert "event=tls_handshake_failed" in log and "subject=O=site,CN=deep" not in log
    expect_ok(run_client(ctx.mtls.address, ["null"],
                         client_env(ctx.certs, "ca.pem", "alice.pem", "alice.key")))


def hostile_daemon(ctx):
    if not hasattr(ctx, "hostile"):
        ctx.hostile = ctx.daemon("hostile", "--tls-cert", ctx.path("server.pem"), "--tls-key",
                                 ctx.path("server.key"), "--max-connections-per-client", "4")
    return ctx.hostile


def check_many_stalled_handshakes_are_bounded_and_others_served(ctx):
    d = hostile_daemon(ctx)
    # A call first: the warm executables it leaves are part of the baseline.
    expect_ok(run_client(d.address, ["null", "echo 1000"], client_env(ctx.certs, "ca.pem")))
    fds0, rss0 = daemon_resources(d)
    hello = client_hello(ctx)
    stallers = []
    try:
        # From 127.0.0.2: 40 connections that send half a ClientHello and wait.
        for _ in range(40):
            s = socket.socket()
            s.bind(("127.0.0.2", 0))
            s.connect(("127.0.0.1", d.port))
            s.sendall(hello[:len(hello) // 2])
            stallers.append(s)
        time.sleep(0.3)
        fds, _ = daemon_resources(d)
        # max_connections_per_client: at most 4 of them are held at once.
        assert fds - fds0 <= 4, f"ninfd holds {fds - fds0} stalled connections"
        # Another address is served meanwhile.
        expect_ok(run_client(d.address, ["null", "echo 1000"], client_env(ctx.certs, "ca.pem")))
    finally:
        for s in stallers:
            s.close()
    expect_back_to_baseline(d, fds0, rss0)


def check_client_hello_dribbled_a_byte_at_a_time_is_closed_at_the_timeout(ctx):
    d = hostile_daemon(ctx)
    fds0, rss0 = daemon_resources(d)
    hello = client_hello(ctx)
    s = socket.create_connection(("127.0.0.1", d.port))
    started = time.monotonic()
    closed_after = None
    try:
        for b in hello:
            s.sendall(bytes([b]))
            time.sleep(0.1)
            if time.monotonic() - started > REQUEST_TIMEOUT + 3:
                break
    except (BrokenPipeError, ConnectionResetError):
        closed_after = time.monotonic() - started
    if closed_after is None:
        closed_after = time.monotonic() - started + recv_until_closed(s, 5)
    s.close()
    assert REQUEST_TIMEOUT - 0.5 <= closed_after <= REQUEST_TIMEOUT + 3, \
        f"closed after {closed_after:.1f} s, request_timeout_seconds is {REQUEST_TIMEOUT}"
    expect_back_to_baseline(d, fds0, rss0)


def check_random_bytes_after_a_good_handshake_are_closed(ctx):
    ssl = ssl_module()
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.load_verify_locations(ctx.path("ca.pem"))
    fds0, rss0 = daemon_resources(ctx.tls)
    for round_ in range(20):
        raw = socket.create_connection(("127.0.0.1", ctx.tls.port), timeout=5)
        s = c.wrap_socket(raw, server_hostname="127.0.0.1")
        # Half the rounds: junk inside TLS records (a frame of nonsense);
        # the others: junk under TLS, on the raw socket (bad records).
        if round_ % 2:
            s.sendall(os.urandom(4096))
            waited = recv_until_closed(s, REQUEST_TIMEOUT + 5)
        else:
            raw_fd = socket.socket(fileno=os.dup(s.fileno()))
            raw_fd.sendall(os.urandom(4096))
            waited = recv_until_closed(raw_fd, REQUEST_TIMEOUT + 5)
            raw_fd.close()
        s.close()
        assert waited < REQUEST_TIMEOUT + 3, f"closed after {waited:.1f} s"
    expect_back_to_baseline(ctx.tls, fds0, rss0)
    expect_ok(run_client(ctx.tls.address, ["null"], client_env(ctx.certs, "ca.pem")))


def check_resumption_can_be_turned_off(ctx):
    # NINF_TLS_RESUME=0: every connection is a full handshake.
    env = client_env(ctx.certs, "ca.pem")
    env["NINF_TLS_RESUME"] = "0"
    before = ctx.tls.text().count("resumed=1")
    expect_ok(run_client(ctx.tls.address, ["null"] * 4, env))
    assert ctx.tls.text().count("resumed=1") == before, "a session was resumed"
    env["NINF_TLS_RESUME"] = "maybe"
    expect_error(run_client(ctx.tls.address, ["null"], env), "NINF_TLS_RESUME")


CHECKS = [v for k, v in list(globals().items()) if k.startswith("check_")]


class Context:
    def __init__(self, ninfd, workdir):
        self.ninfd = ninfd
        self.workdir = workdir
        self.certs = os.path.join(workdir, "certs")
        os.mkdir(self.certs)
        make_certificates(self.certs)
        self.daemons = []
        self.plain = self.daemon("plain")
        self.tls = self.daemon("tls", "--tls-cert", self.path("server.pem"), "--tls-key",
                               self.path("server.key"))
        self.mtls = self.daemon("mtls", "--tls-cert", self.path("server.pem"), "--tls-key",
                                self.path("server.key"), "--tls-client-ca", self.path("ca.pem"))

    def path(self, name):
        return os.path.join(self.certs, name)

    def daemon(self, name, *flags):
        d = Daemon(self.ninfd, self.workdir, name, *flags)
        self.daemons.append(d)
        return d

    def stop(self):
        for d in self.daemons:
            d.stop()


def print_logs(ctx):
    for d in ctx.daemons:
        print(f"--- {d.log_path} (last lines)\n" + "\n".join(d.text().splitlines()[-30:]))


def run_checks(checks, ctx, only, fresh_daemons=False):
    """Runs each check (all, or those named in `only`) on ctx; a daemon that
    died fails the run. With fresh_daemons every check gets its own daemons
    (ctx.stop() after each). Returns (checks run, failures)."""
    failed = []
    ran = 0

    def deaths():
        return [f"{d.log_path} died" for d in ctx.daemons if not d.alive()]

    try:
        for check in checks:
            if only and check.__name__ not in only:
                continue
            started = time.monotonic()
            ran += 1
            try:
                check(ctx)
                print(f"ok   {check.__name__} ({time.monotonic() - started:.1f} s)", flush=True)
            except Exception:
                failed.append(check.__name__)
                print(f"FAIL {check.__name__}\n{traceback.format_exc()}", flush=True)
                if fresh_daemons:
                    print_logs(ctx)
            if fresh_daemons:
                failed += deaths()
                ctx.stop()
        failed += deaths()
    finally:
        if failed and not fresh_daemons:
            print_logs(ctx)
        ctx.stop()
    print("failed: " + ", ".join(failed) if failed else f"all {ran} checks passed")
    return 1 if failed else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--client":
        client_main(json.loads(sys.argv[2]))
        return 0
    with tempfile.TemporaryDirectory(prefix="ninf-tls-") as workdir:
        return run_checks(CHECKS, Context(sys.argv[1], workdir), sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
