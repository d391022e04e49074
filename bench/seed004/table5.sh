#!/usr/bin/env bash
# Seed 004 (table5): an SMP server, task-parallel 1-PE Linpack, c up to the cores (scaled: c x cores / 16).
#
#   bash bench/seed004/table5.sh BUILD_DIR [--out FILE] [--quick] [-h for the options]
#
# Root (control groups, ninf-sites). Writes FILE (default a new
# bench/results/seed004/table5-DATE.md; the run of record is
# bench/results/seed004/table5.md), its plot FILE.png and its raw data in
# FILE.data/ (report.py render table5 FILE.data renders it again). The set-up
# and what each column means: bench/seed004/multi.sh and docs/loadtest.md.
item=table5
# shellcheck source=bench/seed004/multi.sh
source "$(dirname "$0")/multi.sh"
