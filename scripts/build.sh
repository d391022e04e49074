#!/usr/bin/env bash
# Configures (once) and builds the project into ${NINF_BUILD:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
BUILD=${NINF_BUILD:-build}
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" --buildtype=release
fi
ninja -C "$BUILD"
