#!/usr/bin/env python3
"""TLS between ninfd and ninf-meta, and between the client and ninf-meta
(docs/metaserver.md, docs/security.md).

Starts real ninf-meta and ninfd daemons with the site CA of tls_test.py
(its certificate helpers are reused) and checks:
  - a TLS ninfd (tls_ca) registers with a TLS ninf-meta and reports its
    load, and a client with NINF_TLS_CA and NINF_METASERVER gets a call
    placed by that metaserver on that ninfd, over TLS both ways;
  - a TLS ninf-meta refuses a plaintext ninfd, whose log says to set tls_ca;
  - a ninfd with tls_ca facing a plaintext ninf-meta says it does not
    speak TLS, and does not fall back to plaintext;
  - a ninf-meta asking for client certificates (tls_client_ca) takes
    ninfd's tls_cert (serverAuth + clientAuth, as scripts/site_ca.sh
    issues them) and refuses a ninfd whose certificate is not for clients;
  - a ninf-meta whose certificate another CA signed is refused by ninfd;
  - its tools (--status, --servers, --links, --list) speak TLS with its
    own tls_ca (NINF_META_TLS_CA, --tls-ca), and say what to set without;
  - a transaction block placed on two TLS ninfds (tls_ca, mutual TLS)
    forwards its intermediates: the executables fetch them over TLS.
    (A ninfd without tls_ca makes the client forward nothing: e2e_tls's
    transaction check.)

    tls_meta_test.py NINFD NINF_META   (PYTHONPATH: the build tree's python folder)
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tls_test  # noqa: E402  (certificates, Daemon, client environment)


def client_main(spec):
    """One client process: bare names, placed by NINF_METASERVER."""
    import numpy as np
    import ninf
    for op in spec["ops"]:
        try:
            out = {"op": op, "ok": True, "value": tls_test.run_op(np, ninf, op)}
        except Exception as e:  # the error's text is what is checked
            out = {"op": op, "ok": False, "error": str(e)}
        print(json.dumps(out), flush=True)


def run_meta_client(meta, ops, env, timeout=60):
    env = dict(env, NINF_METASERVER=meta.address)
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--client",
                        json.dumps({"ops": ops})], env=env, capture_output=True, text=True,
                       timeout=timeout)
    results = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    if len(results) != len(ops):
        raise AssertionError(f"client ended early (status {p.returncode}):\n{p.stdout}\n{p.stderr}")
    return results


class Meta:
    def __init__(self, ninf_meta, workdir, name, *flags):
        self.log_path = os.path.join(workdir, f"meta-{name}.log")
        ready = os.path.join(workdir, f"meta-{name}.ready")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([ninf_meta, "--port", "0", "--ready-file", ready,
                                      "--log-level", "debug", *flags],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"ninf-meta {name} exited:\n" + self.text())
            if os.path.exists(ready):
                with open(ready) as f:
                    text = f.read().strip()
                if text:
                    self.port = int(text)
                    self.address = f"127.0.0.1:{self.port}"
                    return
            time.sleep(0.05)
        raise AssertionError(f"ninf-meta {name} did not listen:\n" + self.text())

    def text(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        tls_test.Daemon.stop(self)


def wait_for_log(daemon, pattern, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pattern in daemon.text():
            return
        time.sleep(0.1)
    raise AssertionError(f"no '{pattern}' in {daemon.log_path} within {seconds} s:\n" +
                         "\n".join(daemon.text().splitlines()[-20:]))


def make_both_usages_certificate(d):
    """A ninfd certificate for 127.0.0.1 that serves and identifies a client
    (what scripts/site_ca.sh issues), from tls_test's site CA."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    tls_test.sh("openssl", "req", *ec, "-keyout", "both.key", "-out", "both.csr",
                "-subj", "/CN=ninfd-both", cwd=d)
    with open(os.path.join(d, "both.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n")
    tls_test.sh("openssl", "x509", "-req", "-in", "both.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", "both.pem", "-days", "30", "-extfile", "both.ext", cwd=d)
    tls_test.sh("openssl", "req", "-x509", *ec, "-keyout", "other-meta.key", "-out",
                "other-meta.pem", "-days", "30", "-subj", "/CN=other-meta", "-addext",
                "subjectAltName=IP:127.0.0.1", cwd=d)


class Context:
    def __init__(self, ninfd, ninf_meta, workdir):
        self.ninfd = ninfd
        self.ninf_meta = ninf_meta
        self.workdir = workdir
        self.certs = os.path.join(workdir, "certs")
        os.mkdir(self.certs)
        tls_test.make_certificates(self.certs)
        make_both_usages_certificate(self.certs)
        self.daemons = []

    def path(self, name):
        return os.path.join(self.certs, name)

    def tls_flags(self, cert="server"):
        return ["--tls-cert", self.path(cert + ".pem"), "--tls-key", self.path(cert + ".key")]

    def meta(self, name, *flags):
        m = Meta(self.ninf_meta, self.workdir, name, *flags)
        self.daemons.append(m)
        return m

    def server(self, name, meta, *flags):
        d = tls_test.Daemon(self.ninfd, self.workdir, name, "--metaserver", meta.address,
                            "--site", "lab", "--unix-socket", "", *flags)
        self.daemons.append(d)
        return d

    def stop(self):
        for d in self.daemons:
            d.stop()
        self.daemons = []


def check_tls_ninfd_registers_with_tls_meta_and_a_placed_call_runs(ctx):
    meta = ctx.meta("tls", *ctx.tls_flags())
    server = ctx.server("tls-reg", meta, *ctx.tls_flags(), "--tls-ca", ctx.path("ca.pem"))
    wait_for_log(server, "event=metaserver_registered", 20)
    wait_for_log(meta, "event=server_registered", 5)
    env = tls_test.client_env(ctx.certs, ca="ca.pem")
    values = tls_test.expect_ok(run_meta_client(meta, ["echo 1000", "null"], env))
    assert values == ["same", "done"], values
    wait_for_log(meta, "event=placed", 5)
    # The call ran on that server, and it arrived over TLS (the server
    # accepts nothing else on TCP).
    wait_for_log(server, "event=call_done", 10)
    assert "function=echo" in server.text(), server.text()
    assert "metaserver_unreachable" not in server.text(), server.text()


def check_meta_tools_speak_tls(ctx):
    # Its tools with its own tls_ca (NINF_META_TLS_CA, or --tls-ca): every
    # view answers; without it the refusal says to set tls_ca.
    meta = ctx.meta("tls-tools", *ctx.tls_flags())
    server = ctx.server("tls-tools-reg", meta, *ctx.tls_flags(), "--tls-ca", ctx.path("ca.pem"))
    wait_for_log(meta, "event=server_registered", 20)
    env = dict(os.environ)
    for var in ("NINF_TLS_CA", "NINF_META_TLS_CA", "NINF_META_CONFIG", "NINF_CONFIG"):
        env.pop(var, None)

    def tool(*args, ca=None):
        e = dict(env)
        if ca:
            e["NINF_META_TLS_CA"] = ca
        return subprocess.run([ctx.ninf_meta, *args, "--server", meta.address], env=e,
                              capture_output=True, text=True, timeout=30)

    for view, answer in (("--status", "servers:1"), ("--servers", server.address),
                         ("--links", ""), ("--list", "dgesv(")):
        ok = tool(view, ca=ctx.path("ca.pem"))
        assert ok.returncode == 0 and answer in ok.stdout, (view, ok.stdout, ok.stderr)
        blind = tool(view)
        assert blind.returncode == 1 and "requires TLS" in blind.stderr, (view, blind.stderr)
    flag = tool("--status", "--tls-ca", ctx.path("ca.pem"))
    assert flag.returncode == 0, flag.stderr


def check_meta_refusal_on_a_tls_port_is_a_tls_alert(ctx):
    # No room for another connection from this address (the registered
    # ninfd's holds the only one): ninf-meta refuses with a TLS alert, and
    # its tool says the metaserver refused it, not "does not speak TLS".
    meta = ctx.meta("tls-full", *ctx.tls_flags(), "--max-connections-per-client", "1")
    ctx.server("tls-full-reg", meta, *ctx.tls_flags(), "--tls-ca", ctx.path("ca.pem"))
    wait_for_log(meta, "event=server_registered", 20)
    env = dict(os.environ, NINF_META_TLS_CA=ctx.path("ca.pem"))
    run = subprocess.run([ctx.ninf_meta, "--status", "--server", meta.address], env=env,
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 1, (run.stdout, run.stderr)
    for said in ("refused the connection", "TLS alert", "max_connections_per_client"):
        assert said in run.stderr, run.stderr
    assert "does not speak TLS" not in run.stderr, run.stderr
    wait_for_log(meta, "event=connection_refused", 10)


def check_plaintext_client_is_refused_by_tls_meta(ctx):
    meta = ctx.meta("tls-plainclient", *ctx.tls_flags())
    results = run_meta_client(meta, ["null"], tls_test.client_env(ctx.certs))
    assert not results[0]["ok"], results


def check_plaintext_ninfd_is_refused_by_tls_meta_naming_tls_ca(ctx):
    meta = ctx.meta("tls-refuses", *ctx.tls_flags())
    server = ctx.server("plain-reg", meta)
    wait_for_log(server, "event=metaserver_unreachable", 20)
    line = [l for l in server.text().splitlines() if "event=metaserver_unreachable" in l][0]
    assert "tls_ca" in line and "requires TLS" in line, line
    assert "event=metaserver_registered" not in server.text()
    assert "event=server_registered" not in meta.text()


def check_tls_ninfd_refuses_plaintext_meta(ctx):
    meta = ctx.meta("plain")
    server = ctx.server("tls-to-plain", meta, "--tls-ca", ctx.path("ca.pem"))
    wait_for_log(server, "event=metaserver_unreachable", 20)
    line = [l for l in server.text().splitlines() if "event=metaserver_unreachable" in l][0]
    assert "does not speak TLS" in line and "tls_ca" in line, line
    assert "event=server_registered" not in meta.text()


def check_untrusted_meta_certificate_is_refused(ctx):
    meta = ctx.meta("untrusted", *ctx.tls_flags("other-meta"))
    server = ctx.server("tls-to-untrusted", meta, "--tls-ca", ctx.path("ca.pem"))
    wait_for_log(server, "event=metaserver_unreachable", 20)
    line = [l for l in server.text().splitlines() if "event=metaserver_unreachable" in l][0]
    assert "tls_ca" in line, line
    assert "event=server_registered" not in meta.text()


def check_mutual_tls_meta_takes_ninfd_certificate_for_clients(ctx):
    meta = ctx.meta("mtls", *ctx.tls_flags(), "--tls-client-ca", ctx.path("ca.pem"))
    # Without a certificate of its own, ninfd is refused.
    bare = ctx.server("mtls-nocert", meta, "--tls-ca", ctx.path("ca.pem"))
    wait_for_log(bare, "event=metaserver_unreachable", 20)
    # A certificate for servers only (serverAuth) does not identify a client.
    server_only = ctx.server("mtls-serveronly", meta, *ctx.tls_flags(), "--tls-ca",
                             ctx.path("ca.pem"))
    wait_for_log(server_only, "event=metaserver_unreachable", 20)
    assert "event=server_registered" not in meta.text(), meta.text()
    # The site CA's usual certificate (both usages) is taken.
    both = ctx.server("mtls-both", meta, *ctx.tls_flags("both"), "--tls-ca", ctx.path("ca.pem"))
    wait_for_log(both, "event=metaserver_registered", 20)
    wait_for_log(meta, "event=server_registered", 5)


def run_transaction_demo(ctx, meta):
    demo = os.environ.get("TRANSACTION_DEMO")
    assert demo and os.path.exists(demo), "TRANSACTION_DEMO names no program"
    env = dict(tls_test.client_env(ctx.certs, ca="ca.pem", cert="alice.pem", key="alice.key"),
               NINF_METASERVER=meta.address)
    run = subprocess.run([demo, "120"], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "VERIFIED" in run.stdout, run.stdout + run.stderr
    return run.stdout


def tcp_fetches(server):
    # event=fetch: a FETCH served; peer=unix... would be the same-host socket.
    return [l for l in server.text().splitlines()
            if "event=fetch " in l and "peer=127.0.0.1" in l]


def check_kept_data_is_fetched_over_tls_between_two_tls_ninfds(ctx):
    meta = ctx.meta("tls-fetch", *ctx.tls_flags())
    servers = [ctx.server(f"fetch-{i}", meta, *ctx.tls_flags("both"), "--tls-ca",
                          ctx.path("ca.pem"), "--tls-client-ca", ctx.path("ca.pem"))
               for i in range(2)]
    for s in servers:
        wait_for_log(s, "event=metaserver_registered", 20)
    out = run_transaction_demo(ctx, meta)
    fetches = sum(len(tcp_fetches(s)) for s in servers)
    # The executables fetched the block's intermediates from a ninfd over
    # TCP, which on these servers is TLS only (mutual: with ninfd's tls_cert).
    assert fetches > 0, "no kept data was fetched:\n" + out
    ran_on = sorted({l.split(" ran on ")[1].rsplit(":", 2)[0] for l in out.splitlines()
                     if " ran on " in l})
    print(f"     {fetches} kept arrays fetched over TLS; the calls ran on {ran_on}", flush=True)
    for s in servers:
        assert "event=fetch_refused" not in s.text(), s.text()


CHECKS = [
    check_tls_ninfd_registers_with_tls_meta_and_a_placed_call_runs,
    check_meta_tools_speak_tls,
    check_meta_refusal_on_a_tls_port_is_a_tls_alert,
    check_plaintext_client_is_refused_by_tls_meta,
    check_plaintext_ninfd_is_refused_by_tls_meta_naming_tls_ca,
    check_tls_ninfd_refuses_plaintext_meta,
    check_untrusted_meta_certificate_is_refused,
    check_mutual_tls_meta_takes_ninfd_certificate_for_clients,
    check_kept_data_is_fetched_over_tls_between_two_tls_ninfds,
]


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--client":
        client_main(json.loads(sys.argv[2]))
        return 0
    with tempfile.TemporaryDirectory(prefix="ninf-tls-meta-") as workdir:
        return tls_test.run_checks(CHECKS, Context(sys.argv[1], sys.argv[2], workdir),
                                   sys.argv[3:], fresh_daemons=True)


if __name__ == "__main__":
    sys.exit(main())
