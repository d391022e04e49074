#!/usr/bin/env bash
# bench/first_call.sh - the README demo's first call (issue 44, part 4): a
# fresh ninfd per trial, as scripts/demo.sh starts it, and examples/c/
# linpack_demo's one remote dgesv against its one local dgesv, with and
# without warm_at_start = "dgesv" (the executable started with ninfd instead
# of inside the first call). Then three more calls on the same daemon: the
# warm figure. Where the first call's time goes: linpack_demo's remote line
# (queued, arguments in, dgesv, results back) and the rest of its wall time
# (connect, hand-off, an executable's start-up when it is not warm).
# A third configuration, as root: warm_at_start with the kernel's shared
# memory on transparent huge pages (/sys/kernel/mm/transparent_hugepage/
# shmem_enabled = advise, which libninf's segments ask for; put back as it
# was at exit), the administrator's choice that shortens the arrays' copy
# into the same-host segment.
#
#   bash bench/first_call.sh BUILD_DIR [--out FILE] [--quick] [--n N] [--trials T]
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare first_call "The README demo's first remote dgesv against local, fresh daemons, with and without warm_at_start."
bench_option --n N n 2000 500 "matrix order"
bench_option --trials T trials 5 2 "fresh daemons per configuration"
bench_parse "$@"
bench_need server/ninfd examples/c/linpack_demo

if core=$("$build/server/ninfd" --openblas-core); then export OPENBLAS_CORETYPE=$core; fi
raw="$work/raw.txt"
{
  echo "# cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1 | tr ' ' '_') cores=$(nproc)"
  echo "# date=$(date -u +%Y-%m-%dT%H:%MZ) commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?') n=$n trials=$trials"
} >"$raw"

# One linpack_demo run: "ratio remote_s local_s queued args dgesv back".
demo_line() {
  "$build/examples/c/linpack_demo" "$n" | awk '
    /^remote threads:/ { for (i = 1; i <= NF; i++) {
        if ($i == "queued") q = $(i + 1); if ($i == "in") a = $(i + 1)
        if ($i == "dgesv") d = $(i + 1); if ($i == "back") b = $(i + 1) } }
    /^remote / && NF == 4 { r = $2 } /^local / && NF == 4 { l = $2 }
    /^remote \/ local/ { ratio = $NF }
    END { printf "%s %s %s %s %s %s %s\n", ratio, r, l, q, a, d, b }'
}

thp_knob=/sys/kernel/mm/transparent_hugepage/shmem_enabled
configs=(cold warm)
if [[ $EUID -eq 0 && -w $thp_knob ]]; then
  configs+=(thp)
  thp_was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp_knob")
  bench_on_exit sh -c "echo $thp_was > $thp_knob"
fi
for config in "${configs[@]}"; do
  if [[ $config == thp ]]; then echo advise >"$thp_knob"; else [[ -z ${thp_was:-} ]] || echo "$thp_was" >"$thp_knob"; fi
  for ((t = 1; t <= trials; t++)); do
    extra=()
    [[ $config != cold ]] && extra=(--warm-at-start dgesv)
    start_daemon -- --slots 1 "${extra[@]}"
    # warm_at_start's executable is started once the daemon is ready; give
    # it the moment a user's first call would come after starting ninfd.
    [[ $config != cold ]] && sleep 1
    for call in 1 2 3 4; do
      echo "config=$config trial=$t call=$call $(demo_line)" | tee -a "$raw" >&2
    done
    stop_daemon
  done
done

cp "$raw" "$raw_log"
/usr/bin/python3 - "$raw_log" "$out" <<'PY'
import statistics, sys
raw, out = sys.argv[1], sys.argv[2]
rows, head = [], []
for line in open(raw):
    if line.startswith('#'):
        head.append(line[2:].strip()); continue
    f = line.split()
    kv = dict(x.split('=') for x in f[:3])
    ratio, remote, local, q, a, d, b = map(float, f[3:10])
    rows.append((kv['config'], int(kv['call']), ratio, remote, local, q, a, d, b))
def med(xs): return statistics.median(xs) if xs else float('nan')
doc = ['# The README demo\'s first call (bench/first_call.sh)', '', '; '.join(head), '',
       'Each trial is a fresh `ninfd --slots 1` (as scripts/demo.sh starts it), then linpack_demo four times: '
       'call 1 is the first call the daemon serves, calls 2-4 are warm. Medians over the trials. "other" is the '
       'remote wall time less the parts the executable reports: the connect, the hand-off and, unless warm, '
       'the executable\'s start-up.', '',
       '| ninfd | call | remote / local | remote s | local s | queued s | arguments in s | dgesv s | results back s | other s |',
       '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|']
for config, label in (('cold', 'default'), ('warm', 'warm_at_start = "dgesv"'),
                      ('thp', 'warm_at_start, shmem THP "advise"')):
    for calls, name in (((1,), '1 (first)'), ((2, 3, 4), '2-4')):
        sel = [r for r in rows if r[0] == config and r[1] in calls]
        if not sel: continue
        col = lambda i: med([r[i] for r in sel])
        other = med([r[3] - r[5] - r[6] - r[7] - r[8] for r in sel])
        doc.append(f'| {label} | {name} | {col(2):.3f} | {col(3):.4f} | {col(4):.4f} | {col(5):.4f} | '
                   f'{col(6):.4f} | {col(7):.4f} | {col(8):.4f} | {other:.4f} |')
    firsts = sorted(r[2] for r in rows if r[0] == config and r[1] == 1)
    doc.append('')
    doc.append(f'{label}: first-call ratios ' + ', '.join(f'{x:.3f}' for x in firsts) + '  ')
doc.append('')
open(out, 'w').write('\n'.join(doc) + '\n')
PY
echo "first_call.sh: wrote $out and $raw_log" >&2
