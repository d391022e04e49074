#!/usr/bin/env bash
# Seed 004 (table6): WAN single site, 1-PE Linpack, c = 1..16.
#
#   bash bench/seed004/table6.sh BUILD_DIR [--out FILE] [--quick] [-h for the options]
#
# Root (control groups, ninf-sites). Writes FILE (default a new
# bench/results/seed004/table6-DATE.md; the run of record is
# bench/results/seed004/table6.md), its plot FILE.png and its raw data in
# FILE.data/ (report.py render table6 FILE.data renders it again). The set-up
# and what each column means: bench/seed004/multi.sh and docs/loadtest.md.
item=table6
# shellcheck source=bench/seed004/multi.sh
source "$(dirname "$0")/multi.sh"
