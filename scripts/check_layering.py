#!/usr/bin/env python3
"""Checks every quoted #include of the tree against the layering table of
docs/CONTRIBUTING.md ("| folder | what | may include |"), the only list of
which folder may include which.

Fails, naming file:line, on an include that its folder's row does not
allow, on a bare name that is neither a public header (installed flat) nor
the generated ninf.pb.h (or bench/peers' peers.pb.h and peers.grpc.pb.h), on a public header naming another by its folder
(they are installed side by side), on an include of a file that does not exist, and on
a source folder the table does not list.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
DOC = os.path.join(ROOT, 'docs', 'CONTRIBUTING.md')
SOURCE = re.compile(r'\.(c|cc|cpp|h|hpp)$')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# Installed flat, and written so that users include them by bare name.
PUBLIC = {'ninf.h', 'grpc.h', 'ninf_binding.h', 'ninf_errors.h', 'ninf_types.h', 'ninf_stub.h',
          'ninf_stub_mpi.h'}
GENERATED = {'ninf.pb.h', 'peers.pb.h', 'peers.grpc.pb.h'}
# Not checked: generated golden outputs (compared byte for byte elsewhere).
SKIP = ('tests/idl/golden/',)


def read_table():
    """{folder: allowed} where allowed is None (anything) or a list of
    folders ("protocol/") and files ("daemon/status_tool.h")."""
    rows = {}
    lines = open(DOC).read().split('\n')
    start = next(i for i, l in enumerate(lines) if l.startswith('| folder | what | may include |'))
    for line in lines[start + 2:]:
        if not line.startswith('|'):
            break
        cells = [c.strip() for c in line.strip('|').split('|')]
        folders = re.findall(r'`([^`]+)`', cells[0])
        may = cells[2]
        allowed = None if may == 'anything' else (
            [] if may == 'nothing of ours' else re.findall(r'`([^`]+)`', may))
        for f in folders:
            rows[f.rstrip('/') + '/'] = allowed
    return rows


def owner(path, rows):
    """The longest table folder that holds `path`, or None."""
    best = None
    for folder in rows:
        if path.startswith(folder) and (best is None or len(folder) > len(best)):
            best = folder
    return best


def allowed_by(target, folder, allowed):
    if allowed is None or target.startswith(folder):
        return True
    return any(target == a or (a.endswith('/') and target.startswith(a)) for a in allowed)


def main():
    rows = read_table()
    files = subprocess.run(['git', 'ls-files'], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    problems = []
    for path in files:
        if not SOURCE.search(path) or path.startswith(SKIP):
            continue
        folder = owner(path, rows)
        if folder is None:
            problems.append(f'{path}: its folder is not in the table of docs/CONTRIBUTING.md')
            continue
        public_file = os.path.basename(path) in PUBLIC
        for n, line in enumerate(open(os.path.join(ROOT, path), errors='replace'), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            where = f'{path}:{n}: "{target}"'
            if '/' not in target:
                if target in GENERATED or target in PUBLIC and (
                        public_file or rows[folder] is None):
                    continue
                problems.append(f'{where}: include by folder from the top of the tree')
                continue
            if public_file and os.path.basename(target) in PUBLIC:
                problems.append(f'{where}: public headers are installed flat: include '
                                f'"{os.path.basename(target)}"')
                continue
            if not os.path.isfile(os.path.join(ROOT, target)):
                problems.append(f'{where}: no such file from the top of the tree')
                continue
            if not allowed_by(target, folder, rows[folder]):
                problems.append(f'{where}: {folder} may not include {owner(target, rows)}')
    for p in problems:
        print(p, file=sys.stderr)
    checked = sum(1 for p in files if SOURCE.search(p) and not p.startswith(SKIP))
    if problems:
        print(f'check_layering: {len(problems)} problems in {checked} files', file=sys.stderr)
        return 1
    print(f'check_layering: {checked} files keep the layers of docs/CONTRIBUTING.md')
    return 0


if __name__ == '__main__':
    sys.exit(main())
