"""Fixtures of the Python client's tests: a real ninfd on a free loopback
port, serving the build tree's standard library.

Run by Meson (tests/python/meson.build) with NINFD and PYTHONPATH set;
by hand:

    NINFD=build/server/ninfd PYTHONPATH=build/python \\
        /usr/bin/python3 -m pytest tests/python
"""
import os
import socket
import subprocess
import time

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """One ninfd process; stopped (and checked to stop) by the fixture."""

    def __init__(self, tmp_path, *flags):
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log = open(tmp_path / f"ninfd-{self.port}.log", "w+")
        self.proc = subprocess.Popen(
            [os.environ["NINFD"], "--port", str(self.port), *flags],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log_text()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("ninfd did not start listening:\n" + self.log_text())

    def status(self, *flags):
        """`ninfd --status` of this daemon as a dict of its name: value lines."""
        out = subprocess.run([os.environ["NINFD"], "--status", "--server", self.address, *flags],
                             capture_output=True, text=True, timeout=20)
        assert out.returncode == 0, out.stderr
        return dict(line.split(":", 1) for line in out.stdout.splitlines() if ":" in line)

    def log_text(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        self.proc.terminate()
        try:
            assert self.proc.wait(timeout=20) == 0, self.log_text()
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.log.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """A ninfd with the default settings, made the default server."""
    import ninf
    d = Daemon(tmp_path_factory.mktemp("ninfd"))
    ninf.set_server(d.address)
    yield d
    d.stop()


@pytest.fixture
def small_server(tmp_path):
    """A ninfd that refuses calls over 1 MiB of arrays."""
    d = Daemon(tmp_path, "--max-call-bytes", "1M")
    yield d
    d.stop()


@pytest.fixture
def daemons(tmp_path):
    """Starts ninfd processes with the flags given (start(*flags)); each is
    stopped, and checked to stop, at the end of the test."""
    started = []

    def start(*flags):
        d = Daemon(tmp_path, *flags)
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop()
