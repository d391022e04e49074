#!/usr/bin/env python3
"""Checks docs/monitoring.md's tables of ninfd's and ninf-meta's metrics
against the daemons' statistics tables (server/stats_table.cc,
metaserver/meta_stats_table.cc).

Usage: check_metrics_docs.py STAT_FAMILIES_DUMP

STAT_FAMILIES_DUMP is tests/server/stat_families_dump, which prints each
family of a daemon's table ("ninfd" or "ninf-meta" as its argument) as
"name<TAB>type<TAB>label,label". A daemon's docs table is the first
"| metric | type | labels | what |" table under its section (SECTIONS):
a row names one or more families in backticks in its first cell
(`ninf_build_info{version}` counts as ninf_build_info), gives one type for
all of them or one per family (comma-separated) in the second, and the label
keys in backticks in the third (values in parentheses are prose).

Fails, naming them, on a family of the table the docs do not list, a name
the docs list that the table does not have, a family listed twice, and a
type or label set that differs.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
DOC = os.path.join(ROOT, 'docs', 'monitoring.md')
# The docs section of each daemon's table, and the source of its rows.
SECTIONS = {
    'ninfd': ('## What is exported', 'server/stats_table.cc'),
    'ninf-meta': ('## The metaserver', 'metaserver/meta_stats_table.cc'),
}
TABLE_HEAD = '| metric | type | labels | what |'


def table_families(dump, daemon):
    """{name: (type, frozenset(labels))} from the dump program."""
    out = subprocess.run([dump, daemon], check=True, capture_output=True, text=True).stdout
    families = {}
    for line in out.splitlines():
        name, kind, labels = line.split('\t')
        families[name] = (kind, frozenset(l for l in labels.split(',') if l))
    return families


def doc_rows(section):
    """[(line number, [names], [types], labels)] of the docs' table."""
    lines = open(DOC).read().split('\n')
    start = lines.index(section)
    head = next(i for i in range(start, len(lines)) if lines[i].startswith(TABLE_HEAD))
    rows = []
    for number in range(head + 2, len(lines)):
        line = lines[number]
        if not line.startswith('|'):
            break
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        names = [re.sub(r'\{.*\}$', '', n) for n in re.findall(r'`([^`]+)`', cells[0])]
        types = [t.strip() for t in cells[1].split(',') if t.strip()]
        labels = frozenset(re.findall(r'`([^`]+)`', cells[2]))
        rows.append((number + 1, names, types, labels))
    return rows


def check(dump, daemon):
    """The problems of one daemon's docs table, and its family count."""
    section, source = SECTIONS[daemon]
    families = table_families(dump, daemon)
    errors, seen = [], set()
    for number, names, types, labels in doc_rows(section):
        where = f'docs/monitoring.md:{number}'
        if len(types) not in (1, len(names)):
            errors.append(f'{where}: {len(types)} types for {len(names)} metrics')
            continue
        for i, name in enumerate(names):
            kind = types[0] if len(types) == 1 else types[i]
            if name in seen:
                errors.append(f'{where}: {name} is listed twice')
            seen.add(name)
            if name not in families:
                errors.append(f'{where}: {name} is not in {source}')
                continue
            want_kind, want_labels = families[name]
            if kind != want_kind:
                errors.append(f'{where}: {name} is a {want_kind}, the docs say {kind}')
            if labels != want_labels:
                errors.append(f'{where}: {name} has labels {sorted(want_labels)}, '
                              f'the docs say {sorted(labels)}')
    for name in sorted(set(families) - seen):
        kind, labels = families[name]
        errors.append(f'docs/monitoring.md: {name} ({kind}, labels {sorted(labels)}) is '
                      f'missing from the table under "{section}"')
    return errors, len(families)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    errors, counts = [], []
    for daemon in SECTIONS:
        found, count = check(sys.argv[1], daemon)
        errors += found
        counts.append(f'{count} of {daemon}')
    for error in errors:
        print(error)
    if errors:
        sys.exit(f'check_metrics_docs: {len(errors)} problem(s)')
    print(f'check_metrics_docs: the families ({", ".join(counts)}) listed as the tables have them')


if __name__ == '__main__':
    main()
