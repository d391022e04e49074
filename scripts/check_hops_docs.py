#!/usr/bin/env python3
"""docs/security.md's table of hops against the frame map and the tests.

    check_hops_docs.py SOURCE_ROOT

The frame map (protocol/frame.h, NINF_FRAME_MAP) says for each frame type
who sends it to whom; every pair of parties it names is a hop, and each must
have a row in the "## Hops" table of docs/security.md (first column "A ↔ B",
or "A ↔ B ↔ C" for a bridge). Each row's last column names the tests that
watch the hop: every `path` there must exist, and every `check_...` after a
path must be a function of that file. Prints each problem; exits 1 if any.
"""
import os
import re
import sys

# The frame map's names for the parties, as the table writes them.
PARTY = {"client": "client", "ninfd": "ninfd", "executable": "executable", "meta": "ninf-meta",
         "relay": "ninf-relay"}


def frame_pairs(frame_h):
    """Unordered pairs of parties from the map's direction comments."""
    pairs = set()
    for line in open(frame_h):
        m = re.search(r"X\(FRAME_\w+, \d+\)\s*/\* (.+?) -> (\S+)", line)
        if not m:
            continue
        for a in m.group(1).split()[-1].split("/"):
            for b in m.group(2).split("/"):
                pairs.add(frozenset((PARTY[a], PARTY[b])))
    return pairs


def hop_rows(security_md):
    text = open(security_md).read()
    section = text.split("\n## Hops\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| hop ")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


def main():
    root = sys.argv[1]
    problems = []
    rows = hop_rows(os.path.join(root, "docs", "security.md"))
    documented = set()
    for cells in rows:
        hop = cells[0].split(",")[0].split(" (")[0]
        parties = [p.strip().strip("`") for p in hop.split("↔")]
        for a, b in zip(parties, parties[1:]):
            documented.add(frozenset((a, b)))
        path = None
        for token in re.findall(r"`([^`]+)`", cells[-1]):
            if "/" in token:
                path = token
                if not os.path.exists(os.path.join(root, path)):
                    problems.append(f"hop '{hop}': no file {path}")
            elif token.startswith("check_"):
                source = open(os.path.join(root, path)).read() if path else ""
                if f"def {token}(" not in source:
                    problems.append(f"hop '{hop}': {path} has no {token}")
    for pair in sorted(frame_pairs(os.path.join(root, "protocol", "frame.h")), key=sorted):
        if pair not in documented:
            problems.append("protocol/frame.h has frames between " + " and ".join(sorted(pair)) +
                            ", docs/security.md's Hops table no row for them")
    for p in problems:
        print(f"docs/security.md: {p}")
    print(f"check_hops_docs: {len(rows)} hops, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
