#!/usr/bin/env python3
"""README's "Registering a library", run as written: its IDL block and its
two commands, with /srv/ninf a temporary folder and build/ this build
tree. The daemon they start must serve the new function and the standard
library beside it (before, the README's `--registry /srv/ninf` served the
folder alone, and dgesv was gone).

    readme_registry_test.py README BUILD_DIR
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np

import ninf


def section(readme, title):
    text = open(readme).read()
    start = text.index("## " + title)
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def blocks(text):
    """The fenced blocks of `text`, in order: (language, body)."""
    return re.findall(r"```(\w*)\n(.*?)```", text, re.S)


def main():
    readme, build = sys.argv[1], os.path.abspath(sys.argv[2])
    found = blocks(section(readme, "Registering a library"))
    idl = next(body for lang, body in found if lang == "")
    commands = [line for lang, body in found if lang == "sh"
                for line in body.splitlines() if line.strip()]
    assert len(commands) == 2, commands
    with tempfile.TemporaryDirectory() as tmp:
        registry = os.path.join(tmp, "srv-ninf")
        ready = os.path.join(tmp, "ready")
        with open(os.path.join(tmp, "mylib.idl"), "w") as f:
            f.write(idl)

        def words(line):
            return [w.replace("/srv/ninf", registry) for w in shlex.split(line)]

        gen = words(commands[0])
        assert gen[0] == "build/idl/ninf-gen", gen
        gen[0] = os.path.join(build, "idl", "ninf-gen")
        subprocess.run(gen, cwd=tmp, check=True, timeout=120)

        serve = words(commands[1])
        assert serve[0] == "build/server/ninfd", serve
        serve[0] = os.path.join(build, "server", "ninfd")
        serve += ["--port", "0", "--ready-file", ready, "--unix-socket", "", "--log-level", "warn"]
        daemon = subprocess.Popen(serve, cwd=tmp)
        try:
            for _ in range(200):
                if os.path.exists(ready) and open(ready).read().strip():
                    break
                assert daemon.poll() is None, "ninfd exited"
                time.sleep(0.05)
            server = "127.0.0.1:" + open(ready).read().split()[0]
            x = np.arange(1.0, 5.0)
            ninf.call("dscal_all", 4, 2.5, x, server=server)
            assert list(x) == [2.5, 5.0, 7.5, 10.0], x
            # The standard library is served beside it.
            a = np.array([[2.0, 0.0], [0.0, 4.0]], order="F")
            b = np.array([2.0, 8.0])
            ipiv = np.zeros(2, dtype=np.int32)
            info = ninf.call("dgesv", 2, 1, a, 2, ipiv, b, 2, None, server=server)
            assert info == 0 and list(b) == [1.0, 2.0], (info, b)
        finally:
            daemon.terminate()
            daemon.wait(timeout=20)
    print("readme_registry: the README's registry example serves its function and dgesv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
