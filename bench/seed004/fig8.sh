#!/usr/bin/env bash
# Seed 004 (fig8): WAN, four unequal sites against one, 4-PE, per-client Mflops and total MB/s (--admission both: start against arrival).
#
#   bash bench/seed004/fig8.sh BUILD_DIR [--out FILE] [--quick] [-h for the options]
#
# Root (control groups, ninf-sites). Writes FILE (default a new
# bench/results/seed004/fig8-DATE.md; the run of record is
# bench/results/seed004/fig8.md), its plot FILE.png and its raw data in
# FILE.data/ (report.py render fig8 FILE.data renders it again). The set-up
# and what each column means: bench/seed004/multi.sh and docs/loadtest.md.
item=fig8
# shellcheck source=bench/seed004/multi.sh
source "$(dirname "$0")/multi.sh"
