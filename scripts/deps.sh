#!/usr/bin/env bash
# Installs the Debian 12 packages the project needs, if any is missing.
# Sourced or run by scripts/demo.sh and scripts/test.sh; needs root for apt.
# clang and libclang-rt-dev (libFuzzer, the sanitizers' runtime) serve
# scripts/fuzz.sh, which .ci/run runs; python3-matplotlib draws the load
# tests' plots (loadtest/plot.py); prometheus scrapes the metrics endpoint in
# its test (tests/e2e/metrics_test.py); python3-dev, -numpy and -pytest build
# and test the Python client (python/), python3-mesonpy (with patchelf, which
# it runs on the bundled libraries), python3-pip and python3-venv install it
# with pip into a venv (pyproject.toml, tests/python/venv_install.py); scdoc writes the man pages (docs/man);
# systemd's systemd-analyze checks the units (tests/install); nftables drops
# every inbound connection of the firewalled server in the relay's test
# (tests/relay/relay_netns.sh).
set -euo pipefail

NINF_PACKAGES=(
  meson ninja-build pkg-config gcc g++ gfortran cpp python3
  libuv1-dev libprotobuf-dev protobuf-compiler catch2
  libopenblas-dev liblapacke-dev libopenmpi-dev openmpi-bin libscalapack-openmpi-dev
  slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge
  libspdlog-dev libtomlplusplus-dev libcli11-dev libssl-dev openssl libmicrohttpd-dev prometheus
  procps iproute2 util-linux clang-format git
  clang libclang-rt-dev
  python3-matplotlib
  python3-dev python3-numpy python3-pytest python3-mesonpy patchelf python3-pip python3-venv
  scdoc systemd
  nftables
  # bench/peers.sh (-Dpeers=true, which scripts/build.sh sets): the peers Ninf
  # is measured against, gRPC C++, ZeroMQ and Dask distributed (with scipy's
  # LAPACK for its dgesv), each as Debian 12 packages it.
  libgrpc++-dev protobuf-compiler-grpc libzmq3-dev python3-distributed python3-scipy
)

missing=()
for p in "${NINF_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
