#!/usr/bin/env bash
# Seed 004 (table8): EP at m = 28, LAN and single-site WAN, 1-PE, c = 1..16.
#
#   bash bench/seed004/table8.sh BUILD_DIR [--out FILE] [--quick] [-h for the options]
#
# Root (control groups, ninf-sites). Writes FILE (default a new
# bench/results/seed004/table8-DATE.md; the run of record is
# bench/results/seed004/table8.md), its plot FILE.png and its raw data in
# FILE.data/ (report.py render table8 FILE.data renders it again). The set-up
# and what each column means: bench/seed004/multi.sh and docs/loadtest.md.
item=table8
# shellcheck source=bench/seed004/multi.sh
source "$(dirname "$0")/multi.sh"
