#!/usr/bin/env python3
"""ninf-meta with users (issue 43, part 3): one site policy, the same
[users.NAME] and [limits.NAME] tables in ninfd's and ninf-meta's config
files, serves both daemons. Real daemons, all over TLS with client
certificates (tls_client_ca on both), the site CA of tls_test.py:

  users      alice (a key, group chem), bob (a key), carol (a certificate
             subject only); [limits.echo] allow = ["group:chem"];
             key_file (both daemons): the site's server key, "default".
  placed     alice's echo and null are placed and run; bob's null runs and
             his echo is refused by ninf-meta, naming it, the user and the
             table; carol, known by her certificate alone, is placed and
             served without a key, and refused echo the same way.
  register   a ninfd proving a user's key (alice's) cannot register a
             server: ninf-meta says what to set, and places nothing there.
  reload     bob leaves ninf-meta's file; after SIGHUP his next call is
             refused by ninf-meta (the message names it); alice is served.

    meta_users_test.py NINFD NINF_META   (PYTHONPATH: the build tree's python folder)
"""

import os
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tls_meta_test  # noqa: E402  (Meta, Context, the placed client)
import tls_test  # noqa: E402  (certificates, Daemon, client environment)
from tls_meta_test import run_meta_client, wait_for_log  # noqa: E402


def key_file(d, name):
    path = os.path.join(d, name + ".secret")
    with open(path, "w") as f:
        f.write(f"{name}-key-{os.urandom(12).hex()}\n")
    os.chmod(path, 0o600)
    return path


def policy(keys, users=("alice", "bob", "carol")):
    """The site's user tables, as both daemons' config files hold them."""
    tables = {
        "alice": f'key_file = "{keys["alice"]}"\ngroups = ["chem"]\n',
        "bob": f'key_file = "{keys["bob"]}"\n',
        "carol": 'cert_subject = "CN=carol,O=site"\n',
    }
    text = "".join(f"[users.{u}]\n{tables[u]}\n" for u in users)
    return text + '[limits.echo]\nallow = ["group:chem"]\n'


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def client(ctx, user, keys, with_key=True):
    env = tls_test.client_env(ctx.certs, ca="ca.pem", cert=f"{user}.pem", key=f"{user}.key")
    env.pop("NINF_KEY_FILE", None)
    if with_key:
        env["NINF_KEY_FILE"] = keys[user]
    return env


def errors(results):
    return [r["error"] if not r["ok"] else r["value"] for r in results]


def main(ninfd, ninf_meta):
    with tempfile.TemporaryDirectory(prefix="ninf-meta-users-") as workdir:
        ctx = tls_meta_test.Context(ninfd, ninf_meta, workdir)
        try:
            run(ctx, workdir)
        finally:
            ctx.stop()
    return 0


def run(ctx, workdir):
    keys = {u: key_file(workdir, u) for u in ("site", "alice", "bob")}
    meta_toml = write(os.path.join(workdir, "meta.toml"), policy(keys))
    ninfd_toml = write(os.path.join(workdir, "ninfd.toml"), policy(keys))
    mutual = ["--tls-client-ca", ctx.path("ca.pem")]
    meta = ctx.meta("users", "--config", meta_toml, "--key-file", keys["site"],
                    *ctx.tls_flags(), *mutual)
    server = ctx.server("users", meta, "--config", ninfd_toml, "--key-file", keys["site"],
                        *ctx.tls_flags("both"), *mutual, "--tls-ca", ctx.path("ca.pem"))
    wait_for_log(server, "event=metaserver_registered", 20)

    got = errors(run_meta_client(meta, ["echo 1000", "null"], client(ctx, "alice", keys)))
    assert got == ["same", "done"], got
    print("ok placed: alice's echo and null")

    got = errors(run_meta_client(meta, ["null", "echo 1000"], client(ctx, "bob", keys)))
    assert got[0] == "done", got
    assert "ninf-meta: user 'bob' may not call 'echo'" in got[1] and "[limits.echo]" in got[1], got
    assert "event=place_denied" in meta.text(), meta.text()
    print(f"ok placed: bob's null; his echo refused: {got[1]!r}")

    got = errors(run_meta_client(meta, ["null", "echo 1000"],
                                 client(ctx, "carol", keys, with_key=False)))
    assert got[0] == "done", got
    assert "ninf-meta: user 'carol' may not call 'echo'" in got[1], got
    print("ok placed: carol by her certificate alone; her echo refused")

    # A ninfd that proves a client's key may not offer itself as a server.
    rogue = ctx.server("rogue", meta, "--key-file", keys["alice"], *ctx.tls_flags("both"),
                       "--tls-ca", ctx.path("ca.pem"))
    wait_for_log(meta, "may not register a server", 20)
    wait_for_log(rogue, "may not register a server", 20)
    assert meta.text().count("event=server_registered") == 1, meta.text()
    print("ok register: a user's key registers no server")

    write(meta_toml, policy(keys, users=("alice", "carol")))
    meta.proc.send_signal(signal.SIGHUP)
    wait_for_log(meta, "event=users_reloaded users=2", 10)
    got = errors(run_meta_client(meta, ["null"], client(ctx, "bob", keys)))
    assert "ninf-meta" in got[0] and "key" in got[0], got
    got_alice = errors(run_meta_client(meta, ["null"], client(ctx, "alice", keys)))
    assert got_alice == ["done"], got_alice
    print(f"ok reload: bob refused by ninf-meta after SIGHUP: {got[0]!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
