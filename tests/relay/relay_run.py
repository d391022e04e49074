"""Real daemons for the relay's Python tests (relay_identity.py, relay_tls.py,
which import it from their own folder): a work folder, processes started
with their logs in it, a failure that shows those logs, and the clean-up."""
import os
import subprocess
import sys
import tempfile
import time


class Run:
    def __init__(self, prefix):
        self.work = tempfile.mkdtemp(prefix=prefix)
        self.procs = []

    def path(self, name):
        return os.path.join(self.work, name)

    def fail(self, why):
        """Prints FAIL, the last lines of every log, and exits 1."""
        print(f"FAIL {why}")
        for name in sorted(os.listdir(self.work)):
            if name.endswith(".log"):
                print(f"--- {name}")
                with open(self.path(name), errors="replace") as f:
                    print("".join(f.readlines()[-15:]))
        sys.exit(1)

    def key_file(self, name, secret):
        """A key file as the daemons accept it (mode 0600)."""
        with open(self.path(name), "w") as f:
            f.write(secret + "\n")
        os.chmod(self.path(name), 0o600)
        return self.path(name)

    def start(self, args, log):
        """A process whose output goes to the log `log` of the work folder."""
        out = open(self.path(log), "a")
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def log_text(self, log):
        with open(self.path(log), errors="replace") as f:
            return f.read()

    def wait_log(self, log, text, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if os.path.exists(self.path(log)) and text in self.log_text(log):
                return True
            time.sleep(0.05)
        return False

    def start_relay(self, relay, *flags):
        """A ninf-relay on a free loopback port (log relay.log); its port."""
        self.start([relay, "--port", "0", "--log-level", "debug", *flags], "relay.log")
        if not self.wait_log("relay.log", "event=listening", 10):
            self.fail("ninf-relay did not start")
        return int(self.log_text("relay.log").split(" port=")[1].split()[0])

    def close(self):
        """Stops every process (SIGTERM, then SIGKILL) and removes the folder."""
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        subprocess.run(["rm", "-rf", self.work], check=False)
