# bench/report.awk - turns the raw log of bench/run.sh (lines of
# `what key=value ...` from the benchmark programs) into the Markdown report.
# Variables from run.sh: cpu, cores, date, kernel, quick.

# The value of `key` on the current line, or "" when absent.
function field(key,    i, kv) {
  for (i = 2; i <= NF; i++) {
    split($i, kv, "=")
    if (kv[1] == key) return kv[2]
  }
  return ""
}

function human(bytes) {
  if (bytes >= 1048576) return sprintf("%d MiB", bytes / 1048576)
  return sprintf("%d KiB", bytes / 1024)
}

function verdict(ok) { return ok ? "**met**" : "**not met**" }

$1 == "raw" { n_sizes++; size[n_sizes] = field("size"); raw[field("size")] = field("mb_s") }
$1 == "raw_latency" { raw_rtt = field("rtt_us") }
$1 == "transfer" { echo[field("size")] = field("mb_s"); bulk[field("size")] = field("bulk_mb_s") }
$1 == "transfer_null" { transfer_null = field("call_us") }
$1 == "latency" {
  null_us = field("null_us"); spawn_us = field("spawn_us")
  lat_rtt = field("raw_rtt_us"); lat_ratio = field("ratio")
}
$1 == "handle_latency" {
  pl = field("placement"); h_null[pl] = field("null_us"); h_rtt[pl] = field("raw_rtt_us")
  h_lratio[pl] = field("ratio")
}
$1 == "handle_transfer" {
  pl = field("placement"); s = field("size")
  if (!((pl, s) in h_echo)) { h_n[pl]++; h_size[pl, h_n[pl]] = s }
  h_raw[pl, s] = field("raw_mbps"); h_echo[pl, s] = field("echo_mbps"); h_ratio[pl, s] = field("ratio")
}
$1 == "dgesv" {
  n_dgesv++; dn[n_dgesv] = field("n"); threads = field("threads")
  local[n_dgesv] = field("local_gflops"); remote[n_dgesv] = field("remote_gflops")
  dratio[n_dgesv] = field("ratio")
}

END {
  print "# Core benchmark: transfer, latency, remote dgesv"
  print ""
  if (quick) print "_Smoke run (`--quick`): small sizes and few loops; not a measurement._\n"
  print "| | |"
  print "|---|---|"
  print "| CPU | " cpu " |"
  print "| cores | " cores " |"
  print "| date | " date " |"
  print "| kernel | " kernel " |"
  print "| threads | OPENBLAS_NUM_THREADS=" cores " locally; for dgesv ninfd `--slots 1` (threads_per_job = " cores "), otherwise default settings |"
  print ""
  print "Produced by `bench/run.sh`; raw figures in the `.raw.txt` file next to this one."
  print "MB/s are 10^6 bytes per second per direction: size / (round trip / 2). Every figure"
  print "is a median over many runs (dgesv: best of a few), measured in the same session."
  print ""

  print "## Transfer: `Ninf_call(\"echo\", n, a)` (INOUT) against raw TCP ping-pong"
  print ""
  print "| size | raw MB/s | echo MB/s | ratio | echo MB/s without call setup |"
  print "|---:|---:|---:|---:|---:|"
  transfer_seen = 0
  for (i = 1; i <= n_sizes; i++) {
    s = size[i]
    if (!(s in echo)) continue
    ratio = raw[s] > 0 ? echo[s] / raw[s] : 0
    printf "| %s | %.1f | %.1f | %.3f | %s |\n", human(s), raw[s], echo[s], ratio, \
      (bulk[s] > 0 ? sprintf("%.1f", bulk[s]) : "n/a (within noise of the null call)")
    if (s >= 1048576 && (!transfer_seen || ratio < transfer_min)) transfer_min = ratio
    if (s >= 1048576) transfer_seen = 1
  }
  print ""
  printf "Call setup (median `Ninf_call(\"null\")` in the same program): %.0f us. The last column\n", transfer_null
  print "subtracts it, to show the array path alone."
  print ""

  print "## Latency: one-shot `Ninf_call(\"null\")`"
  print ""
  print "| null one-shot (us) | fork+exec+wait (us) | raw TCP RTT (us) | null / (fork+exec+wait + RTT) |"
  print "|---:|---:|---:|---:|"
  printf "| %.1f | %.1f | %.2f | %.3f |\n", null_us, spawn_us, lat_rtt, lat_ratio
  print ""
  printf "fork+exec+wait: posix_spawn + waitpid of the registry's `null --noop`. Raw 8-byte RTT\n"
  printf "from raw_pingpong: %.2f us.\n", raw_rtt
  print ""

  print "## Linpack: remote `dgesv` against local LAPACKE_dgesv (OpenBLAS)"
  print ""
  print "| n | local GF/s | remote GF/s | ratio |"
  print "|---:|---:|---:|---:|"
  dgesv_seen = 0
  for (i = 1; i <= n_dgesv; i++) {
    printf "| %d | %.2f | %.2f | %.3f |\n", dn[i], local[i], remote[i], dratio[i]
    if (dn[i] == 4000) { dgesv_seen = 1; dgesv_4000 = dratio[i] }
  }
  print ""
  printf "Both with %s OpenBLAS threads; GF/s count 2/3 n^3 + 2 n^2 operations, best of a few runs.\n", threads
  print ""

  print "## Function handles: calls on one persistent executable (`grpc_call`)"
  print ""
  print "Placement: the client and ninfd (hence the executable) on one vCPU (`same`) or on two"
  print "(`cross`), with the raw ping-pong's two ends placed the same way in the same run."
  print ""
  print "| placement | null through a handle (us) | raw 8-byte TCP RTT (us) | ratio |"
  print "|---|---:|---:|---:|"
  for (p = 1; p <= 2; p++) {
    pl = p == 1 ? "same" : "cross"
    if (pl in h_null) printf "| %s | %.1f | %.1f | %.2f |\n", pl, h_null[pl], h_rtt[pl], h_lratio[pl]
  }
  print ""
  print "| placement | size | raw MB/s | handle echo MB/s | ratio |"
  print "|---|---:|---:|---:|---:|"
  for (p = 1; p <= 2; p++) {
    pl = p == 1 ? "same" : "cross"
    for (i = 1; i <= h_n[pl]; i++) {
      s = h_size[pl, i]
      printf "| %s | %s | %.1f | %.1f | %.3f |\n", pl, human(s), h_raw[pl, s], h_echo[pl, s], h_ratio[pl, s]
      if (s >= 1048576 && (!(pl in h_min) || h_ratio[pl, s] < h_min[pl])) h_min[pl] = h_ratio[pl, s]
    }
  }
  print ""

  print "## Targets"
  print ""
  print "| target | measured | verdict |"
  print "|---|---|---|"
  printf "| echo >= 90%% of raw at sizes >= 1 MiB | %s | %s |\n", \
    transfer_seen ? sprintf("lowest ratio %.3f", transfer_min) : "no size >= 1 MiB run", \
    transfer_seen ? verdict(transfer_min >= 0.9) : "not measured"
  printf "| null <= 1.2 x (fork+exec+wait + one TCP round trip) | %.3f x | %s |\n", \
    lat_ratio, null_us != "" ? verdict(lat_ratio <= 1.2) : "not measured"
  for (p = 1; p <= 2; p++) {
    pl = p == 1 ? "same" : "cross"
    if (pl in h_null)
      printf "| handle null <= 2 x raw TCP round trip (%s vCPU) | %.2f x | %s |\n", pl, h_lratio[pl], verdict(h_lratio[pl] <= 2)
    if (pl in h_min)
      printf "| handle echo >= 90%% of raw at >= 1 MiB (%s vCPU) | lowest ratio %.3f | %s |\n", pl, h_min[pl], verdict(h_min[pl] >= 0.9)
  }
  printf "| remote dgesv at n = 4000 >= 90%% of local GF/s | %s | %s |\n", \
    dgesv_seen ? sprintf("ratio %.3f", dgesv_4000) : "n = 4000 not run", \
    dgesv_seen ? verdict(dgesv_4000 >= 0.9) : "not measured"
}
