# shellcheck shell=bash
# bench/lib.sh - what every benchmark driver (bench/*.sh) shares: its
# command line, its temporary folder, the processes and sites it makes, and
# the one cleanup path that undoes all of them. Sourced, never run.
#
# Command line. A driver declares its own options, then parses:
#
#   bench_declare NAME "what the script measures"
#       NAME names the default report, bench/results/NAME-DATE.md
#   bench_option FLAG METAVAR VAR DEFAULT QUICK "help"
#       --FLAG METAVAR sets VAR; DEFAULT without it, QUICK under --quick
#       ("" for the same as DEFAULT)
#   bench_parse "$@"
#       BUILD_DIR first (an already built tree; no driver builds), then
#       --out FILE, --quick and the declared options in any order. Sets
#       build, here (bench/), out, raw_log (FILE with .raw.txt), quick (0/1)
#       and work (a new temporary folder), and installs the cleanup trap.
#       --out never writes over an existing file (nor over its raw log);
#       without it the report is a new dated file under bench/results/.
#       The usage text (-h) is made from the declarations.
#   bench_need PROGRAM...  each BUILD_DIR/PROGRAM must be executable
#   bench_need_root WHY    exits unless root
#
# Cleanup. `trap bench_cleanup EXIT` (set by bench_parse; INT and TERM
# exit 130 through it) first stops every process still tracked, newest
# first, then runs the registered actions, newest first:
#
#   bench_on_exit COMMAND...   registers an action (run with its words as given)
#   bench_track PID            a background process of ours, stopped at exit
#   bench_stop PID             TERM, wait, untrack; safe when it has ended
#   wait_ready FILE PID WHAT [SECONDS]
#                              until FILE has content (default 10 s); exits
#                              with the logs in $work if PID dies first
#   start_bg WHAT READY LOG COMMAND...
#                              COMMAND in the background, stderr appended to
#                              LOG, tracked, then wait_ready READY (none when
#                              READY is ""); sets bg_pid. COMMAND is a program
#                              or in_site WHERE PROGRAM..., so that bg_pid is
#                              the program's own pid
#
# Daemons on loopback:
#
#   start_daemon [CPUS] -- [ninfd arguments]
#       a fresh ninfd on a free loopback port, pinned (taskset) when CPUS is
#       given; sets daemon_pid and port and exports NINF_SERVER=127.0.0.1:PORT;
#       its log ($work/ninfd.log) at BENCH_LOG_LEVEL (default warn; info
#       logs every call with its recv/compute/send seconds)
#   stop_daemon             the last one started; safe when none runs
#
# Emulated sites, only through ninf-sites (BUILD_DIR/sites/ninf-sites;
# NINF_SITES names another), which makes the namespaces, links, shaping and
# delay relays, and takes them down at exit:
#
#   sites_up PREFIX [ninf-sites up options]    a set named PREFIX + our pid
#   in_site WHERE COMMAND...                   COMMAND in hub or a site (in the
#                                              background through start_bg)
#   site_netns WHERE / site_addr WHERE         its namespace / address
#
# BENCH_KEEP_WORK=1 keeps the temporary folder (its path is printed), to look
# at logs or re-render a report from the raw files in it.

bench_name=""
bench_about=""
bench_flags=()
bench_specs=()
bench_pids=()
bench_actions=()
daemon_pid=""
daemon_count=0
sites_set=""
quick=0

bench_declare() {
  bench_name=$1
  bench_about=$2
}

bench_option() {
  [[ $# -eq 6 ]] || { echo "bench_option: FLAG METAVAR VAR DEFAULT QUICK HELP" >&2; exit 2; }
  bench_flags+=("$1")
  bench_specs+=("$2"$'\x1f'"$3"$'\x1f'"$4"$'\x1f'"$5"$'\x1f'"$6")
  printf -v "$3" '%s' "$4"
}

bench_usage() {
  local i metavar var default fast help line="usage: bash bench/$bench_name_script BUILD_DIR [--out FILE] [--quick]"
  for i in "${!bench_flags[@]}"; do
    IFS=$'\x1f' read -r metavar var default fast help <<<"${bench_specs[i]}"
    line+=" [${bench_flags[i]} $metavar]"
  done
  {
    echo "$line"
    [[ -z $bench_about ]] || echo "$bench_about"
    printf '  %-22s %s\n' "BUILD_DIR" "an already built tree (nothing is built here)"
    printf '  %-22s %s\n' "--out FILE" "the report, never over an existing file (default bench/results/$bench_name-DATE.md; its raw log FILE with .raw.txt)"
    printf '  %-22s %s\n' "--quick" "a smoke run: the smallest settings, numbers that mean little"
    for i in "${!bench_flags[@]}"; do
      IFS=$'\x1f' read -r metavar var default fast help <<<"${bench_specs[i]}"
      help+=" (default \"$default\""
      [[ -z $fast || $fast == "$default" ]] || help+="; --quick \"$fast\""
      printf '  %-22s %s)\n' "${bench_flags[i]} $metavar" "$help"
    done
  } >&2
}

bench_parse() {
  local i metavar var default fast help given=() seen f
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  # bench/seed004/table3.sh's usage names it so, not bench/table3.sh.
  bench_name_script=$(realpath --relative-to="$here" "$0")
  if [[ $# -lt 1 || $1 == -* ]]; then
    bench_usage
    [[ ${1:-} == -h || ${1:-} == --help ]] && exit 0
    exit 2
  fi
  build=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: $1 is not a folder" >&2; bench_usage; exit 2; }
  shift
  out=""
  while [[ $# -gt 0 ]]; do
    case $1 in
      --quick) quick=1; shift; continue ;;
      -h | --help) bench_usage; exit 0 ;;
      --out)
        [[ $# -ge 2 ]] || { bench_usage; exit 2; }
        out=$2; shift 2; continue ;;
    esac
    seen=""
    for i in "${!bench_flags[@]}"; do
      [[ $1 == "${bench_flags[i]}" ]] || continue
      [[ $# -ge 2 ]] || { echo "$0: $1 needs a value" >&2; bench_usage; exit 2; }
      IFS=$'\x1f' read -r metavar var default fast help <<<"${bench_specs[i]}"
      printf -v "$var" '%s' "$2"
      given+=("$var")
      seen=1
      break
    done
    [[ -n $seen ]] || { echo "$0: unknown argument '$1'" >&2; bench_usage; exit 2; }
    shift 2
  done
  # --quick changes only what was not given explicitly.
  if [[ $quick -eq 1 ]]; then
    for i in "${!bench_flags[@]}"; do
      IFS=$'\x1f' read -r metavar var default fast help <<<"${bench_specs[i]}"
      [[ -n $fast && " ${given[*]} " != *" $var "* ]] && printf -v "$var" '%s' "$fast"
    done
  fi
  # A new file by default: committed results are never overwritten by accident.
  [[ -n $out ]] || out="$here/results/$bench_name-$(date -u +%Y%m%d-%H%M%S).md"
  raw_log="${out%.md}.raw.txt"
  for f in "$out" "$raw_log"; do
    [[ ! -e $f ]] || { echo "$0: $f exists; choose another --out" >&2; exit 2; }
  done
  mkdir -p "$(dirname "$out")"
  # Local baselines run the OpenBLAS kernels the executables run: ninfd
  # raises them on a CPU the library does not know (docs/server.md), and a
  # ratio must compare calls, not kernels. Every program below inherits it.
  if [[ -z ${OPENBLAS_CORETYPE:-} && -x $build/server/ninfd ]]; then
    OPENBLAS_CORETYPE=$("$build/server/ninfd" --openblas-core 2>/dev/null) || OPENBLAS_CORETYPE=""
    [[ -n $OPENBLAS_CORETYPE ]] && export OPENBLAS_CORETYPE || unset OPENBLAS_CORETYPE
  fi
  # A name may hold a folder (seed004/table3): the temporary folder flattens it.
  work=$(mktemp -d "/tmp/ninf-bench-${bench_name//\//-}.XXXXXX")
  bench_on_exit bench_remove_work
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_remove_work() {
  if [[ ${BENCH_KEEP_WORK:-0} == 1 ]]; then
    echo "$0: kept $work" >&2
  else
    rm -rf "$work"
  fi
}

bench_need() {
  local prog
  for prog in "$@"; do
    [[ -x "$build/$prog" ]] || { echo "$0: $build/$prog is missing: build first" >&2; exit 1; }
  done
}

bench_need_root() {
  [[ $(id -u) -eq 0 ]] || { echo "$0: must run as root ($1)" >&2; exit 1; }
}

# ---- the one cleanup path ------------------------------------------------

bench_on_exit() {
  local words
  printf -v words '%q ' "$@"
  bench_actions+=("$words")
}

bench_track() { bench_pids+=("$1"); }

bench_stop() {
  local pid=$1 i
  [[ -n $pid ]] || return 0
  if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
  wait "$pid" 2>/dev/null || true
  for i in "${!bench_pids[@]}"; do
    [[ ${bench_pids[i]} == "$pid" ]] && unset 'bench_pids[i]'
  done
  bench_pids=("${bench_pids[@]}")
  return 0
}

bench_cleanup() {
  local i
  # Only the script itself: a background child that is ended before it has
  # exec'd its program inherits the trap and must not clean up for us.
  [[ $BASHPID == "$$" ]] || return 0
  set +e
  for ((i = ${#bench_pids[@]} - 1; i >= 0; i--)); do bench_stop "${bench_pids[i]}"; done
  daemon_pid=""
  for ((i = ${#bench_actions[@]} - 1; i >= 0; i--)); do eval "${bench_actions[i]}"; done
  bench_actions=()
}

wait_ready() {
  local file=$1 pid=$2 what=$3 tenths=$((${4:-10} * 10))
  for _ in $(seq "$tenths"); do
    [[ -s $file ]] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -s $file ]] && return 0
  echo "$0: $what did not become ready; logs in $work:" >&2
  tail -n 5 "$work"/*.log >&2 2>/dev/null
  exit 1
}

start_bg() {
  local what=$1 ready=$2 log=$3
  shift 3
  [[ -z $ready ]] || rm -f "$ready"
  if [[ $1 == in_site ]]; then
    shift
    set -- "$ninf_sites" exec "$sites_set" "$@"
  fi
  "$@" 2>>"$log" &
  bg_pid=$!
  bench_track "$bg_pid"
  [[ -z $ready ]] || wait_ready "$ready" "$bg_pid" "$what"
}

# ---- ninfd on loopback -----------------------------------------------------

start_daemon() {
  local pin=() ready
  if [[ $1 != "--" ]]; then pin=(taskset -c "$1"); shift; fi
  shift
  daemon_count=$((daemon_count + 1))
  ready="$work/ninfd-$daemon_count.ready"
  start_bg ninfd "$ready" "$work/ninfd.log" "${pin[@]}" "$build/server/ninfd" --port 0 \
    --ready-file "$ready" --registry "$build/stubs/registry" --log-level "${BENCH_LOG_LEVEL:-warn}" "$@"
  daemon_pid=$bg_pid
  port=$(head -n1 "$ready")
  export NINF_SERVER="127.0.0.1:$port"
  echo "$0: ninfd pid $daemon_pid on $NINF_SERVER ${pin[*]} $*" >&2
}

stop_daemon() {
  [[ -z $daemon_pid ]] || bench_stop "$daemon_pid"
  daemon_pid=""
}

# ---- emulated sites (ninf-sites) ---------------------------------------------

sites_up() {
  local prefix=$1
  shift
  ninf_sites=${NINF_SITES:-$build/sites/ninf-sites}
  [[ -x $ninf_sites ]] || { echo "$0: $ninf_sites is missing: build first" >&2; exit 1; }
  sites_set="$prefix$$"
  bench_on_exit sites_down
  "$ninf_sites" up "$sites_set" "$@" >&2
}

sites_down() {
  [[ -z $sites_set ]] || "$ninf_sites" down "$sites_set" >/dev/null 2>&1 || true
  sites_set=""
}

in_site() {
  local where=$1
  shift
  "$ninf_sites" exec "$sites_set" "$where" "$@"
}

site_netns() { "$ninf_sites" netns "$sites_set" "$1"; }
site_addr() { "$ninf_sites" addr "$sites_set" "$1"; }
