#!/usr/bin/env python3
"""Checks that the code maps of docs/ name every source file, and only files
that exist.

Which doc holds which folder's code map is the last column of the layering
table of docs/CONTRIBUTING.md ("| folder | what | may include | code map |"),
the one list of our folders. A code map is the doc's "## Code map" section:
tables whose first cell names files in backticks, relative to the folder
(`connection.cc`, `connection.{h,cc}` for a pair, `ninf/_ninf.c` below it).
A doc that holds several folders' maps starts each folder's part with a
"### `folder/`" heading; in a doc of one folder the heading may be left out.

Fails, naming them, on a git-tracked source file (.c .cc .cpp .h .hpp) of
such a folder that its doc's code map does not name, on an entry naming a
file that does not exist, and on a doc without a code map section.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
CONTRIBUTING = os.path.join(ROOT, 'docs', 'CONTRIBUTING.md')
TABLE_HEAD = '| folder | what | may include | code map |'
SECTION = '## Code map'
SOURCE = re.compile(r'\.(c|cc|cpp|h|hpp)$')
FOLDER_HEADING = re.compile(r'^###\s+`([^`]+/)`\s*$')


def read_table():
    """({folder: doc or None}, [every folder of the table])."""
    lines = open(CONTRIBUTING).read().split('\n')
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith(TABLE_HEAD))
    except StopIteration:
        sys.exit(f'check_code_maps: no "{TABLE_HEAD}" table in docs/CONTRIBUTING.md')
    docs = {}
    for line in lines[start + 2:]:
        if not line.startswith('|'):
            break
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        doc = re.findall(r'`([^`]+\.md)`', cells[3]) if len(cells) > 3 else []
        for folder in re.findall(r'`([^`]+)`', cells[0]):
            docs[folder.rstrip('/') + '/'] = doc[0] if doc else None
    return docs


def owner(path, folders):
    """The longest table folder that holds `path`, or None."""
    best = None
    for folder in folders:
        if path.startswith(folder) and (best is None or len(folder) > len(best)):
            best = folder
    return best


def expand(name):
    """`a.{h,cc}` -> [a.h, a.cc]; one level of braces is all the maps use."""
    m = re.match(r'^(.*)\{([^}]*)\}(.*)$', name)
    if not m:
        return [name]
    return [m.group(1) + part + m.group(3) for part in m.group(2).split(',')]


def read_code_map(doc, folders, problems):
    """{folder: {path relative to the tree}} from the doc's code map section."""
    path = os.path.join(ROOT, doc)
    if not os.path.isfile(path):
        problems.append(f'{doc}: holds the code map of {", ".join(folders)} but does not exist')
        return {}
    lines = open(path).read().split('\n')
    entries = {f: set() for f in folders}
    inside = False
    found = False
    current = folders[0] if len(folders) == 1 else None
    for n, line in enumerate(lines, 1):
        if line.startswith('## '):
            inside = line.rstrip() == SECTION
            found = found or inside
            continue
        if not inside:
            continue
        heading = FOLDER_HEADING.match(line)
        if heading:
            current = heading.group(1)
            if current not in entries:
                problems.append(f'{doc}:{n}: {current} is not a folder whose code map '
                                f'docs/CONTRIBUTING.md puts here')
                current = None
            continue
        if not line.startswith('|'):
            continue
        first = line.strip().strip('|').split('|')[0]
        names = re.findall(r'`([^`]+)`', first)
        if names and current is None:
            problems.append(f'{doc}:{n}: an entry before a "### `folder/`" heading '
                            f'(this doc holds {", ".join(folders)})')
            continue
        for name in names:
            for file in expand(name):
                full = current + file
                if not os.path.isfile(os.path.join(ROOT, full)):
                    problems.append(f'{doc}:{n}: `{name}` names {full}, which does not exist')
                entries[current].add(full)
    if not found:
        problems.append(f'{doc}: no "{SECTION}" section (it holds the code map of '
                        f'{", ".join(folders)})')
    return entries


def main():
    docs = read_table()
    by_doc = {}
    for folder, doc in docs.items():
        if doc:
            by_doc.setdefault(doc, []).append(folder)
    problems = []
    mapped = {}
    for doc, folders in sorted(by_doc.items()):
        mapped.update(read_code_map(doc, folders, problems))
    files = subprocess.run(['git', 'ls-files'], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    checked = 0
    for path in files:
        if not SOURCE.search(path):
            continue
        folder = owner(path, docs)
        if folder is None or docs[folder] is None:
            continue
        checked += 1
        if not os.path.isfile(os.path.join(ROOT, path)):
            continue  # deleted in the work tree and not yet committed
        if path not in mapped.get(folder, ()):
            problems.append(f'{path}: not in the code map of {docs[folder]} '
                            f'(under {folder})')
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f'check_code_maps: {len(problems)} problem(s)', file=sys.stderr)
        return 1
    print(f'check_code_maps: the code maps of {len(by_doc)} docs name all {checked} '
          f'source files of {len(mapped)} folders')
    return 0


if __name__ == '__main__':
    sys.exit(main())
