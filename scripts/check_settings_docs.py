#!/usr/bin/env python3
"""Checks the settings' documentation against the daemons' own tables.

Usage: check_settings_docs.py NINFD NINF_META

Each daemon's `--help` is generated from its settings table (kTable: key,
default, and whether it reloads on SIGHUP), so it is read as the truth.
Fails, naming the place, when:
- docs/server.md's settings table does not list exactly ninfd's keys, or
  gives another default;
- docs/server.md's "Applied at once" list is not exactly the keys that
  reload on SIGHUP (plus the [limits.NAME] tables);
- a man page (docs/man/ninfd.8.scd, ninf-meta.8.scd) lacks a key's flag;
- an example file (config/ninfd.toml, config/ninf-meta.toml) does not
  explain a key;
- the pairs of variables ninf-meta does not read (ninfd's and the client's
  NINF_<NAME>, each with ninf-meta's NINF_META_<NAME>; the end of its
  --help, from MetaForeignVariables) are not exactly: NINF_CONFIG and every
  key both daemons have; or docs/metaserver.md's table of them, or the
  list in docs/man/ninf-meta.8.scd, differs from them.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
HELP_LINE = re.compile(
    r'^\s+--([a-z0-9-]+)\b.*\[NINF_\w+, default (.*?)(, reloads on SIGHUP)?\]\s*$')


# "  NINF_KEY_FILE (ninfd's and the client's) -> NINF_META_KEY_FILE"
FOREIGN_HELP = re.compile(r'^  (NINF_\w+) \((.+)\) -> (NINF_\w+)$', re.M)
# docs/metaserver.md: "| `NINF_KEY_FILE` | ninfd's and the client's | `NINF_META_KEY_FILE` |"
FOREIGN_MD = re.compile(r'^\| `(NINF_\w+)` \| ([^|`]+?) \| `(NINF_\w+)` \|', re.M)
# docs/man/ninf-meta.8.scd: "*NINF_KEY_FILE* (ninfd's and the client's) -> *NINF_META_KEY_FILE*"
FOREIGN_SCD = re.compile(r'\*(NINF_\w+)\* \(([^)]+)\) -> \*(NINF_\w+)\*')


def help_of(binary):
    return subprocess.run([binary, '--help'], capture_output=True, text=True, check=True).stdout


def table_of(binary):
    """{key: (default, live)} from a daemon's --help."""
    out = help_of(binary)
    lines = []
    for line in out.splitlines():  # a long flag puts its help on the next line
        if lines and line.startswith(' ' * 8) and not line.lstrip().startswith('-'):
            lines[-1] += ' ' + line.strip()
        else:
            lines.append(line)
    keys = {}
    for line in lines:
        m = HELP_LINE.match(line)
        if m and m.group(1) != 'config':
            keys[m.group(1).replace('-', '_')] = (m.group(2), bool(m.group(3)))
    if not keys:
        sys.exit(f'check_settings_docs: no settings in {binary} --help')
    return keys


def read(path):
    return open(os.path.join(ROOT, path)).read()


def section(text, heading):
    start = text.index(heading)
    end = text.find('\n## ', start + len(heading))
    return text[start:end if end >= 0 else len(text)]


def plain(value):
    return '' if value in ('""', "''") else value.strip('"')


def check_server_md(ninfd, problems):
    settings = section(read('docs/server.md'), '## Settings')
    listed = {}
    for line in settings.splitlines():
        if not line.startswith('| `'):
            continue
        cells = [c.strip() for c in line.strip('|').split('|')]
        keys = re.findall(r'`([a-z0-9_]+)`', cells[0])
        defaults = [d.strip() for d in cells[1].split(',')]
        for i, key in enumerate(keys):
            listed[key] = defaults[i] if i < len(defaults) else defaults[-1]
    for key in sorted(set(ninfd) - set(listed)):
        problems.append(f'docs/server.md: ## Settings lacks `{key}`')
    for key in sorted(set(listed) - set(ninfd)):
        problems.append(f'docs/server.md: ## Settings lists `{key}`, which ninfd does not have')
    for key in sorted(set(listed) & set(ninfd)):
        if plain(listed[key]) != plain(ninfd[key][0]):
            problems.append(f'docs/server.md: `{key}` defaults to {ninfd[key][0]}, '
                            f'the table says {listed[key]}')
    signals = section(read('docs/server.md'), '## Signals')
    at_once = signals[signals.index('**Applied at once**'):signals.index('**Need a restart**')]
    documented = set(re.findall(r'`([a-z0-9_]+)`', at_once)) - {'limits'}
    live = {k for k, (_, is_live) in ninfd.items() if is_live}
    for key in sorted(live - documented):
        problems.append(f'docs/server.md: `{key}` reloads on SIGHUP; "Applied at once" lacks it')
    for key in sorted(documented - live):
        problems.append(f'docs/server.md: "Applied at once" names `{key}`, which needs a restart')


def check_listed(path, keys, pattern, problems):
    text = read(path)
    for key in sorted(keys):
        if not re.search(pattern(key), text, re.M):
            problems.append(f'{path}: `{key}` is not explained')


def check_foreign_variables(meta_binary, ninfd, meta, problems):
    pairs = set(FOREIGN_HELP.findall(help_of(meta_binary)))
    if not pairs:
        problems.append(f'{meta_binary} --help lists no variables of ninfd or the client')
        return
    for name, _, ours in sorted(pairs):
        if ours != 'NINF_META_' + name[len('NINF_'):]:
            problems.append(f'ninf-meta --help pairs {name} with {ours}, not NINF_META_{name[5:]}')
    listed = {name[len('NINF_'):].lower() for name, _, _ in pairs}
    # Every setting of ninf-meta: ninfd's name for the shared ones, the name
    # an earlier ninf-meta read for its own.
    expected = set(meta) | {'config'}
    for key in sorted(expected - listed):
        problems.append(f'MetaForeignVariables lacks NINF_{key.upper()} (ninf-meta has `{key}`)')
    for key in sorted(listed - expected):
        problems.append(f'MetaForeignVariables has NINF_{key.upper()}, not a key of ninf-meta')
    for path, pattern in [('docs/metaserver.md', FOREIGN_MD),
                          ('docs/man/ninf-meta.8.scd', FOREIGN_SCD)]:
        documented = {(n, w.strip(), o) for n, w, o in pattern.findall(read(path))}
        for n, w, o in sorted(pairs - documented):
            problems.append(f'{path}: lacks {n} ({w}) -> {o}, which ninf-meta --help lists')
        for n, w, o in sorted(documented - pairs):
            problems.append(f'{path}: lists {n} ({w}) -> {o}, which ninf-meta --help does not')


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ninfd, meta = table_of(sys.argv[1]), table_of(sys.argv[2])
    problems = []
    check_server_md(ninfd, problems)
    flag = lambda key: r'\*--' + re.escape(key.replace('_', '-')) + r'\*'
    toml_key = lambda key: r'^#? ?' + re.escape(key) + r' ='
    check_listed('docs/man/ninfd.8.scd', ninfd, flag, problems)
    check_listed('docs/man/ninf-meta.8.scd', meta, flag, problems)
    check_listed('config/ninfd.toml', ninfd, toml_key, problems)
    check_listed('config/ninf-meta.toml', meta, toml_key, problems)
    check_foreign_variables(sys.argv[2], ninfd, meta, problems)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f'check_settings_docs: {len(problems)} problems', file=sys.stderr)
        return 1
    print(f'check_settings_docs: {len(ninfd)} ninfd and {len(meta)} ninf-meta settings documented')
    return 0


if __name__ == '__main__':
    sys.exit(main())
