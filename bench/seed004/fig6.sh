#!/usr/bin/env bash
# Seed 004 (fig6): mean per-call Mflops over clients c x threads per call t, the c x t = cores diagonal marked.
#
#   bash bench/seed004/fig6.sh BUILD_DIR [--out FILE] [--quick] [-h for the options]
#
# Root (control groups, ninf-sites). Writes FILE (default a new
# bench/results/seed004/fig6-DATE.md; the run of record is
# bench/results/seed004/fig6.md), its plot FILE.png and its raw data in
# FILE.data/ (report.py render fig6 FILE.data renders it again). The set-up
# and what each column means: bench/seed004/multi.sh and docs/loadtest.md.
item=fig6
# shellcheck source=bench/seed004/multi.sh
source "$(dirname "$0")/multi.sh"
