"""`pip install .` into a fresh venv, offline, then import the package and
call a real ninfd with it: the path of docs/python.md for a python that is
not the one Meson built for (a venv's, a pyenv's).

    venv_install.py SOURCE_DIR PROJECT_VERSION     (NINFD names ninfd)

Run by Meson (tests/python/meson.build). The build is pyproject.toml's
(-Dclient_only: libninf and the package), at -O0 to keep it short. Exits
non-zero, saying why, when any step fails."""
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conftest import Daemon  # noqa: E402

CHECK = r"""
import sys
import numpy as np
import ninf

# The venv's copy, not a build tree's.
assert ninf.__file__.startswith(sys.prefix), ninf.__file__
ninf.set_server(sys.argv[1])
a = np.arange(5.0)
ninf.call("echo", 5, a)
print(ninf.__version__, list(a), ninf.linalg.solve([[2.0]], [4.0])[0])
"""


def run(cmd, env, what):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        sys.exit(f"venv_install: {what} failed ({r.returncode}):\n{r.stdout[-6000:]}\n"
                 f"{r.stderr[-6000:]}")
    return r.stdout


def main():
    source, version = sys.argv[1], sys.argv[2]
    for module in ("mesonpy", "venv", "pip"):
        try:
            __import__(module)
        except ImportError:
            sys.exit(f"venv_install: {sys.executable} has no {module}: "
                     f"run scripts/deps.sh (python3-mesonpy, python3-venv, python3-pip)")
    # The venv must see nothing of the build tree, and pip nothing online.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NINF_SERVER", "NINF_KEY_FILE")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    with tempfile.TemporaryDirectory(prefix="ninf-venv-") as tmp:
        venv = os.path.join(tmp, "venv")
        run([sys.executable, "-m", "venv", "--system-site-packages", venv], env, "python -m venv")
        py = os.path.join(venv, "bin", "python")
        run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
             "--config-settings=setup-args=-Doptimization=0", source], env,
            "pip install --no-build-isolation .")
        d = Daemon(pathlib.Path(tmp))
        try:
            out = run([py, "-c", CHECK, d.address], env, "import ninf and call from the venv")
        finally:
            d.stop()
    want = f"{version} [0.0, 1.0, 2.0, 3.0, 4.0] 2.0"
    if out.strip() != want:
        sys.exit(f"venv_install: the venv's ninf printed {out.strip()!r}, not {want!r}")
    print(f"venv_install: pip install . into a venv, then a call: {want}")


if __name__ == "__main__":
    main()
