#!/usr/bin/env bash
# install_test.sh - installs the build into a temporary folder (meson
# install --destdir) and runs everything from there alone: no build tree on
# any path, no LD_LIBRARY_PATH, PKG_CONFIG_PATH, NINF_* or PYTHONPATH help.
#
#   install_test.sh BUILD PREFIX PYTHON_SITE_DIR|-
#
# Checks: no installed file has a run path into the build tree; the example
# configs, man pages and systemd units are installed and the units pass
# systemd-analyze verify; the installed ninfd reads PREFIX/etc/ninf/ninfd.toml
# by default and serves its own prefix's registry; clients built with the
# installed ninfcc and with `pkg-config ninf` (only this package's .pc files
# visible) run and call it, through Ninf_call and the typed ninf_lapack.h,
# and a Fortran client of module ninf_lapack built with the installed ninffc; the installed ninf-gen --install registers a
# library without PKG_CONFIG_PATH and it is served; the installed Python
# package calls dgesv; an unmodified Fortran Linpack relinked with the
# installed ninffc --offload (and with pkg-config ninf-offload, and built
# plainly and run by the installed ninf-offload) offloads its dgesv.
set -euo pipefail
build=$(cd "$1" && pwd)
prefix=$2
python_site=$3
here=$(cd "$(dirname "$0")" && pwd)

dest=$(mktemp -d /tmp/ninf-install.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dest"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "== $*"; }

step "meson install --destdir $dest"
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null
root=$dest$prefix
libdir=$(dirname "$(find "$root" -name 'libninf.so' -print -quit)")
[[ -d "$libdir" ]] || fail "no libninf.so installed under $root"

# From here on nothing outside the installed tree may help.
unset LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_LIBDIR NINF_SERVER NINF_CONFIG NINF_METASERVER \
  PYTHONPATH CC FC
export PATH=/usr/bin:/bin

step "run paths stay inside the installation"
while IFS= read -r f; do
  if readelf -d "$f" 2>/dev/null | grep -E 'R(UN)?PATH' | grep -q "$build"; then
    fail "$f has a run path into the build tree: $(readelf -d "$f" | grep -E 'R(UN)?PATH')"
  fi
done < <(find "$root" -type f \( -perm -u+x -o -name '*.so*' \))

step "example configs, man pages, systemd units"
for f in share/ninf/examples/ninfd.toml share/ninf/examples/ninf-meta.toml \
  share/ninf/examples/client.toml share/man/man8/ninfd.8 share/man/man8/ninf-meta.8 \
  share/man/man8/ninf-relay.8 bin/ninf-relay \
  share/man/man1/ninf-gen.1 share/man/man1/ninfcc.1 share/man/man1/ninffc.1 \
  share/man/man1/ninf-loadtest.1 share/man/man3/Ninf_call.3 share/man/man3/grpc_call.3 \
  lib/systemd/system/ninfd.service lib/systemd/system/ninf-meta.service \
  lib/systemd/system/ninf-relay.service share/ninf/examples/ninf-relay.toml; do
  [[ -e "$root/$f" ]] || fail "$f is not installed"
done
grep -q '^\.TH "ninfd" "8"' "$root/share/man/man8/ninfd.8" || fail "ninfd.8 is not a man page"
# Every installed program has its page (issue 31: ninf-sites and
# ninf-linkdelay were installed without one).
for prog in "$root"/bin/*; do
  name=$(basename "$prog")
  [[ -e "$root/share/man/man1/$name.1" || -e "$root/share/man/man8/$name.8" ]] ||
    fail "bin/$name is installed without a man page (docs/man/$name.{1,8}.scd)"
done
for unit in ninfd ninf-meta ninf-relay; do
  # The unit names the final path (PREFIX/bin): verify a copy pointing into
  # the temporary tree, so that its programs exist. Unknown keys and bad
  # values are only printed, so any line about the unit fails.
  sed "s|$prefix/bin/|$root/bin/|g" "$root/lib/systemd/system/$unit.service" >"$dest/$unit.service"
  grep -q "^ExecStart=$root/bin/$unit$" "$dest/$unit.service" || fail "$unit.service ExecStart"
  grep -q '^ExecReload=/bin/kill -HUP $MAINPID$' "$dest/$unit.service" || fail "$unit.service ExecReload"
  out=$(systemd-analyze verify --man=no "$dest/$unit.service" 2>&1) ||
    fail "systemd-analyze verify $unit.service: $out"
  ! grep -F "$unit" <<<"$out" || fail "systemd-analyze verify $unit.service: $out"
done

step "installed ninfd: default config and its own registry"
etc=$root/etc/ninf
mkdir -p "$etc"
echo 'slotz = 2' >"$etc/ninfd.toml"
if out=$("$root/bin/ninfd" --port 0 2>&1); then fail "ninfd ignored its default config"; fi
grep -q "$etc/ninfd.toml:1: unknown setting 'slotz' (did you mean 'slots'?)" <<<"$out" ||
  fail "ninfd's refusal does not name its default config: $out"
cat >"$etc/ninfd.toml" <<EOF
port = 0
ready_file = "$dest/ready"
EOF
"$root/bin/ninfd" >"$dest/ninfd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -s "$dest/ready" ]] && break; sleep 0.1; done
[[ -s "$dest/ready" ]] || fail "ninfd did not start from its default config: $(cat "$dest/ninfd.log")"
port=$(head -n1 "$dest/ready")
export NINF_SERVER=127.0.0.1:$port
"$root/bin/ninfd" --list --server "$NINF_SERVER" | grep -q '^dgesv(' ||
  fail "the installed ninfd does not serve dgesv: $("$root/bin/ninfd" --list --server "$NINF_SERVER" 2>&1)"

step "a client built with the installed ninfcc"
"$root/bin/ninfcc" "$here/client.c" -o "$dest/client-ninfcc" -lm
"$root/bin/ninfcc" --showme:compile | grep -q -- "-I$root/include" || fail "ninfcc's flags"
"$dest/client-ninfcc" dgesv || fail "client built with ninfcc"
"$dest/client-ninfcc" typed || fail "typed call (ninf_lapack.h) built with ninfcc"

step "a Fortran client of the installed typed module ninf_lapack, built with the installed ninffc"
"$root/bin/ninffc" "$here/typed.f90" -o "$dest/typed-ninffc" || fail "ninffc with use ninf_lapack"
"$dest/typed-ninffc" | grep -q '^typed ok$' || fail "the typed Fortran client"

step "a client built with pkg-config ninf, only this package's .pc files visible"
export PKG_CONFIG_LIBDIR=$libdir/pkgconfig
cflags=$(pkg-config --cflags ninf) || fail "pkg-config ninf fails with only this package"
[[ "$cflags" != *-D* ]] || fail "pkg-config --cflags ninf leaks defines: $cflags"
[[ -z "$(pkg-config --print-requires-private ninf)" ]] || fail "ninf.pc has Requires.private"
# shellcheck disable=SC2046
cc "$here/client.c" $(pkg-config --cflags --libs ninf) -lm -o "$dest/client-pc"
"$dest/client-pc" dgesv || fail "client built with pkg-config ninf"
"$dest/client-pc" typed || fail "typed call (ninf_lapack.h) built with pkg-config ninf"

step "an unmodified Linpack relinked with the installed ninffc --offload, and pkg-config ninf-offload"
# docs/offload.md: its dgesv goes to the installed ninfd (a zero threshold
# sends every call), found through the installed library's run paths alone.
"$root/bin/ninffc" --offload "$here/../offload/linpack.f90" -o "$dest/linpack-offload" -llapack
NINF_OFFLOAD_MIN_FLOPS=0 NINF_OFFLOAD_LOG="$dest/offload.log" "$dest/linpack-offload" 100 \
  "$dest/linpack.bin" >"$dest/linpack.out" || fail "the relinked Linpack failed"
grep -q ' routine=dgesv where=remote ' "$dest/offload.log" ||
  fail "the relinked Linpack did not offload: $(cat "$dest/offload.log" 2>&1)"
[[ -z "$(pkg-config --print-requires-private ninf-offload)" ]] || fail "ninf-offload.pc has Requires.private"
# shellcheck disable=SC2046
gfortran "$here/../offload/linpack.f90" $(pkg-config --libs ninf-offload) -llapack \
  -o "$dest/linpack-pc" || fail "pkg-config --libs ninf-offload"
NINF_OFFLOAD_MIN_FLOPS=0 NINF_OFFLOAD_LOG="$dest/offload-pc.log" "$dest/linpack-pc" 100 \
  "$dest/linpack-pc.bin" >"$dest/linpack-pc.out" || fail "the Linpack linked with pkg-config ninf-offload failed"
grep -q ' routine=dgesv where=remote ' "$dest/offload-pc.log" ||
  fail "the Linpack linked with pkg-config ninf-offload did not offload"
# The same Linpack built without Ninf at all, run by the installed
# ninf-offload launcher (libninf_offload preloaded by its path).
gfortran "$here/../offload/linpack.f90" -llapack -o "$dest/linpack-plain" || fail "plain Linpack"
NINF_OFFLOAD_MIN_FLOPS=0 NINF_OFFLOAD_LOG="$dest/offload-launched.log" \
  "$root/bin/ninf-offload" "$dest/linpack-plain" 100 "$dest/linpack-launched.bin" \
  >"$dest/linpack-launched.out" || fail "the Linpack run by ninf-offload failed"
grep -q ' routine=dgesv where=remote ' "$dest/offload-launched.log" ||
  fail "the Linpack run by the installed ninf-offload did not offload: $(cat "$dest/offload-launched.log" 2>&1)"
# Each solved its system. (Not bit for bit against each other: the installed
# ninfd's adaptive budget may grant a dgesv it has learned is brief one
# thread where it gave an earlier one two, and OpenBLAS's factors then
# differ in the last bits; offload_programs checks bit-equality under a
# fixed one-thread budget.)
for run in linpack linpack-pc linpack-launched; do
  awk '/ info=0 max\|x - 1\|=/ { split($0, f, "="); if (f[4] + 0 < 1e-10) ok = 1 } END { exit !ok }' \
    "$dest/$run.out" || fail "$run did not solve its system: $(cat "$dest/$run.out")"
done
unset PKG_CONFIG_LIBDIR

step "the installed ninf-gen registers a library, without PKG_CONFIG_PATH"
mkdir "$dest/registry"
"$root/bin/ninf-gen" --install "$dest/registry" "$here/twice.idl" ||
  fail "the installed ninf-gen --install"
[[ -x "$dest/registry/twice" ]] || fail "ninf-gen installed no executable"
"$root/bin/ninfd" --port 0 --ready-file "$dest/ready2" --registry "$dest/registry" \
  >"$dest/ninfd2.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -s "$dest/ready2" ]] && break; sleep 0.1; done
[[ -s "$dest/ready2" ]] || fail "second ninfd: $(cat "$dest/ninfd2.log")"
NINF_SERVER=127.0.0.1:$(head -n1 "$dest/ready2") "$dest/client-ninfcc" twice ||
  fail "the routine registered by the installed ninf-gen"

if [[ "$python_site" != - ]]; then
  step "the installed Python package"
  PYTHONPATH=$dest$python_site /usr/bin/python3 - "$root" <<'EOF' || fail "Python client"
import sys
import numpy as np
import ninf
assert ninf.__file__.startswith(sys.argv[1]), ninf.__file__
a = np.asfortranarray([[4.0, 1, 2], [1, 5, 1], [2, 1, 6]])
b = a @ np.array([1.0, 2, 3])
assert ninf.call("dgesv", 3, 1, a, 3, np.empty(3, dtype=np.int32), b, 3, None) == 0
assert np.allclose(b, [1, 2, 3]), b
EOF
fi
echo "install test: all checks passed"
