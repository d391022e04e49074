#!/usr/bin/env python3
"""Checks the settings' documentation against the daemons' own tables.

Usage: check_settings_docs.py NINFD NINF_META NINF_RELAY

Each daemon's `--help` is generated from its settings table (kTable: key,
default, and whether it reloads on SIGHUP; for ninfd also the keys of the
[limits.NAME] and [users.NAME] tables, named_tables.cc), so it is read as
the truth. The daemons and where each is documented are DAEMONS below.
Fails, naming the place, when:
- a daemon's settings table (docs/server.md, docs/relay.md) does not list
  exactly its keys, or gives another default;
- docs/server.md's "Applied at once" list is not exactly the keys of ninfd
  that reload on SIGHUP (plus the [limits.NAME] and [users.NAME] tables);
- a man page (docs/man/ninfd.8.scd, ninf-meta.8.scd, ninf-relay.8.scd) lacks
  a key's flag;
- an example file (config/*.toml) does not explain a key;
- ninf.toml(5) (docs/man/ninf.toml.5.scd) does not list every key of every
  daemon with its default, in the daemon's own section (## ninfd.toml ...),
  or lists one the daemon does not have; or lacks a key of a
  [TABLE.NAME] table, or names another setting it inherits than --help;
- docs/server.md's [limits.NAME] table differs from ninfd's --help;
- what a daemon's man page (SIGNALS, *SIGHUP*: its "Applied at once:"
  paragraph) or systemd unit (config/systemd/*.service.in: the comment on
  ExecReload, "SIGHUP applies at once: KEY, KEY and KEY; ...", or a pointer
  to the man page's SIGNALS) says SIGHUP applies is not exactly the keys
  its --help marks "reloads on SIGHUP" (for ninfd, plus its [TABLE.NAME]
  tables);
- a daemon with a variable prefix of its own (NINF_META_, NINF_RELAY_) does
  not list, at the end of its --help, exactly the pairs NINF_<NAME> ->
  its own name for NINF_CONFIG and each of its keys; or its doc's table of
  them, or the list in its man page, differs from that list.
"""
import os
import re
import subprocess
import sys
from dataclasses import dataclass

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
HELP_LINE = re.compile(
    r'^\s+--([a-z0-9-]+)\b.*\[(NINF_\w+), default (.*?)(, reloads on SIGHUP)?\]\s*$')
# "  limits.NAME.wall_seconds INT  ... [left out: the server's call_wall_seconds]"
TABLE_KEY_LINE = re.compile(r'^  ([a-z]+)\.NAME\.([a-z0-9_]+) .*\[left out: (.*)\]\s*$')
INHERITS = re.compile(r"^the server's ([a-z0-9_]+)$")

# "  NINF_KEY_FILE (ninfd's and the client's) -> NINF_META_KEY_FILE"
FOREIGN_HELP = re.compile(r'^  (NINF_\w+) \((.+)\) -> (NINF_\w+)$', re.M)
# docs/metaserver.md: "| `NINF_KEY_FILE` | ninfd's and the client's | `NINF_META_KEY_FILE` |"
FOREIGN_MD = re.compile(r'^\| `(NINF_\w+)` \| ([^|`]+?) \| `(NINF_\w+)` \|', re.M)
# docs/man/ninf-meta.8.scd: "*NINF_KEY_FILE* (ninfd's and the client's) -> *NINF_META_KEY_FILE*"
FOREIGN_SCD = re.compile(r'\*(NINF_\w+)\* \(([^)]+)\) -> \*(NINF_\w+)\*')


@dataclass
class Daemon:
    """One daemon and the places that document its settings."""
    name: str
    table: str | None  # the doc whose '## Settings' table lists every key
    man: str
    example: str
    foreign_doc: str  # where a daemon with its own prefix lists NINF_<NAME> it ignores
    unit: str  # its systemd unit, whose ExecReload comment says what SIGHUP applies


DAEMONS = [
    Daemon('ninfd', 'docs/server.md', 'docs/man/ninfd.8.scd', 'config/ninfd.toml', '',
           'config/systemd/ninfd.service.in'),
    Daemon('ninf-meta', None, 'docs/man/ninf-meta.8.scd', 'config/ninf-meta.toml',
           'docs/metaserver.md', 'config/systemd/ninf-meta.service.in'),
    Daemon('ninf-relay', 'docs/relay.md', 'docs/man/ninf-relay.8.scd', 'config/ninf-relay.toml',
           'docs/relay.md', 'config/systemd/ninf-relay.service.in'),
]
NINF_TOML = 'docs/man/ninf.toml.5.scd'


@dataclass
class Help:
    """What a daemon's --help says of its settings."""
    text: str
    keys: dict  # key: (default, reloads on SIGHUP)
    prefix: str  # of its environment variables: NINF_, NINF_META_, ...
    tables: dict  # table name (limits, users): {key: the setting it inherits, or None}


def unwrap(out):
    lines = []
    for line in out.splitlines():  # a long flag puts its help on the next line
        if lines and line.startswith(' ' * 8) and not line.lstrip().startswith('-'):
            lines[-1] += ' ' + line.strip()
        else:
            lines.append(line)
    return lines


def help_of(binary):
    out = subprocess.run([binary, '--help'], capture_output=True, text=True, check=True).stdout
    keys, prefixes, tables = {}, set(), {}
    for line in unwrap(out):
        m = HELP_LINE.match(line)
        if m and m.group(1) != 'config':
            key = m.group(1).replace('-', '_')
            keys[key] = (m.group(3), bool(m.group(4)))
            if m.group(2).endswith('_' + key.upper()):
                prefixes.add(m.group(2)[:-len(key)])
        t = TABLE_KEY_LINE.match(line)
        if t:
            inherited = INHERITS.match(t.group(3))
            tables.setdefault(t.group(1), {})[t.group(2)] = inherited and inherited.group(1)
    if not keys:
        sys.exit(f'check_settings_docs: no settings in {binary} --help')
    if len(prefixes) != 1:
        sys.exit(f'check_settings_docs: {binary} --help: variables of more than one prefix, '
                 f'or named apart from their keys: {sorted(prefixes)}')
    return Help(out, keys, prefixes.pop(), tables)


def read(path):
    return open(os.path.join(ROOT, path)).read()


def section(text, heading, ends=('\n## ',)):
    """From heading to the next of `ends` (a markdown doc's next ## heading)."""
    start = text.index(heading)
    found = [e for e in (text.find(end, start + len(heading)) for end in ends) if e >= 0]
    return text[start:min(found) if found else len(text)]


def plain(value):
    return '' if value in ('""', "''") else value.strip('"')


def compare_keys(where, documented, truth, problems, what='lists'):
    """documented and truth: {key: default}; a default of None is not compared."""
    for key in sorted(set(truth) - set(documented)):
        problems.append(f'{where} lacks `{key}`')
    for key in sorted(set(documented) - set(truth)):
        problems.append(f'{where} {what} `{key}`, which the daemon does not have')
    for key in sorted(set(documented) & set(truth)):
        if documented[key] is not None and plain(documented[key]) != plain(truth[key]):
            problems.append(f'{where}: `{key}` defaults to {truth[key]}, it says '
                            f'{documented[key]}')


def check_settings_table(daemon, help, problems):
    """The '## Settings' table: | `key`, `key2` | default, default2 | meaning |"""
    listed = {}
    for line in section(read(daemon.table), '## Settings').splitlines():
        if not line.startswith('| `'):
            continue
        cells = [c.strip() for c in line.strip('|').split('|')]
        keys = re.findall(r'`([a-z0-9_]+)`', cells[0])
        defaults = [d.strip() for d in cells[1].split(',')]
        for i, key in enumerate(keys):
            listed[key] = defaults[i] if i < len(defaults) else defaults[-1]
    compare_keys(f'{daemon.table}: ## Settings', listed,
                 {k: d for k, (d, _) in help.keys.items()}, problems)


def check_applied_at_once(ninfd, problems):
    signals = section(read('docs/server.md'), '## Signals')
    at_once = signals[signals.index('**Applied at once**'):signals.index('**Need a restart**')]
    documented = set(re.findall(r'`([a-z0-9_]+)`', at_once)) - set(ninfd.tables)
    live = {k for k, (_, is_live) in ninfd.keys.items() if is_live}
    for key in sorted(live - documented):
        problems.append(f'docs/server.md: `{key}` reloads on SIGHUP; "Applied at once" lacks it')
    for key in sorted(documented - live):
        problems.append(f'docs/server.md: "Applied at once" names `{key}`, which needs a restart')


def check_listed(path, keys, pattern, problems):
    text = read(path)
    for key in sorted(keys):
        if not re.search(pattern(key), text, re.M):
            problems.append(f'{path}: `{key}` is not explained')


def check_ninf_toml(daemon, help, problems):
    """The daemon's section of ninf.toml(5): its keys with their defaults in a
    code block, then one list per [TABLE.NAME] table."""
    heading = f'## {daemon.name}.toml'
    if heading not in read(NINF_TOML):
        problems.append(f'{NINF_TOML}: has no section {heading}')
        return
    text = section(read(NINF_TOML), heading, ('\n## ', '\n# '))
    block = text[text.index('```'):text.index('```', text.index('```') + 3)]
    listed = dict(re.findall(r'\b([a-z0-9_]+) = ("[^"]*"|\S+)', block))
    compare_keys(f'{NINF_TOML}: ## {daemon.name}.toml', listed,
                 {k: d for k, (d, _) in help.keys.items()}, problems)
    for table, keys in sorted(help.tables.items()):
        heading = f'*[{table}.*_NAME_*]*, one per'  # the list of a table's keys
        if heading not in text:
            problems.append(f'{NINF_TOML}: ## {daemon.name}.toml has no list of [{table}.NAME]')
            continue
        part = text[text.index(heading):]
        part = part[:part.find('\n*[', 1)] if '\n*[' in part[1:] else part
        items = dict(re.findall(r'^\*([a-z0-9_]+)\*\n((?:\t.*\n?)+)', part, re.M))
        where = f'{NINF_TOML}: [{table}.NAME]'
        compare_keys(where, {k: None for k in items}, keys, problems)
        for key, inherited in sorted(keys.items()):
            if inherited and key in items and f'[*{inherited}*]' not in items[key]:
                problems.append(f'{where}: `{key}` takes the server\'s `{inherited}` when left '
                                f'out; the page does not say [*{inherited}*]')


def check_limits_table(ninfd, problems):
    """docs/server.md's table of [limits.NAME] keys: | `key` | `inherited` | what |"""
    text = section(read('docs/server.md'), '## Function and user tables')
    rows = re.findall(r'^\| `([a-z0-9_]+)` \| ([^|]+?) \|', text, re.M)
    listed = {k: (re.fullmatch(r'`([a-z0-9_]+)`', v) or [None, None])[1] for k, v in rows}
    truth = ninfd.tables.get('limits', {})
    compare_keys('docs/server.md: ## Function and user tables', {k: None for k in listed},
                 truth, problems)
    for key in sorted(set(listed) & set(truth)):
        if listed[key] != truth[key]:
            problems.append(f'docs/server.md: [limits.NAME] `{key}` takes the server\'s '
                            f'{truth[key]} when left out, the table says {listed[key]}')


def check_foreign_variables(daemon, help, problems):
    """A daemon with its own prefix lists the NINF_<NAME> it does not read."""
    pairs = set(FOREIGN_HELP.findall(help.text))
    if help.prefix == 'NINF_':
        return  # it reads NINF_<NAME> itself (ninfd; a relay before NINF_RELAY_)
    if not pairs:
        problems.append(f'{daemon.name} --help lists no variables of ninfd or the client')
        return
    for name, _, ours in sorted(pairs):
        if ours != help.prefix + name[len('NINF_'):]:
            problems.append(f'{daemon.name} --help pairs {name} with {ours}, '
                            f'not {help.prefix}{name[len("NINF_"):]}')
    listed = {name[len('NINF_'):].lower() for name, _, _ in pairs}
    # Every setting of the daemon: ninfd's name for the shared ones, the name
    # an earlier version of the daemon read for its own.
    expected = set(help.keys) | {'config'}
    for key in sorted(expected - listed):
        problems.append(f'{daemon.name} --help: its foreign variables lack NINF_{key.upper()} '
                        f'({daemon.name} has `{key}`)')
    for key in sorted(listed - expected):
        problems.append(f'{daemon.name} --help: its foreign variables name '
                        f'NINF_{key.upper()}, not a key of {daemon.name}')
    for path, pattern in [(daemon.foreign_doc, FOREIGN_MD), (daemon.man, FOREIGN_SCD)]:
        documented = {(n, w.strip(), o) for n, w, o in pattern.findall(read(path))}
        for n, w, o in sorted(pairs - documented):
            problems.append(f'{path}: lacks {n} ({w}) -> {o}, which {daemon.name} --help lists')
        for n, w, o in sorted(documented - pairs):
            problems.append(f'{path}: lists {n} ({w}) -> {o}, which {daemon.name} --help does not')


def compare_live(where, named, help, problems):
    live = {k for k, (_, is_live) in help.keys.items() if is_live}
    for key in sorted(live - named):
        problems.append(f'{where}: `{key}` reloads on SIGHUP, and it does not say so')
    for key in sorted(named - live):
        what = 'needs a restart' if key in help.keys else 'is no setting of the daemon'
        problems.append(f'{where}: says SIGHUP applies `{key}`, which {what}')


def check_sighup(daemon, help, problems):
    """The man page's and the unit's SIGHUP texts name exactly the live keys."""
    man = read(daemon.man)
    item = re.search(r'^\*SIGHUP\*\n(.*?)(?=^\*|^# )', man, re.M | re.S)
    applied = item and re.search(r'Applied at once:(.*?)(?:\n\n|$)', item.group(1), re.S)
    if not applied:
        problems.append(f'{daemon.man}: SIGNALS has no *SIGHUP* item with an '
                        f'"Applied at once:" paragraph')
    else:
        named = set(re.findall(r'\*([a-z0-9_]+)\*', applied.group(1)))
        compare_live(f'{daemon.man}: SIGHUP', named, help, problems)
    comment = re.search(r'^# SIGHUP (.*?)\nExecReload=', read(daemon.unit), re.M | re.S)
    if not comment:
        problems.append(f'{daemon.unit}: no "# SIGHUP ..." comment above ExecReload')
        return
    text = ' '.join(line.lstrip('# ') for line in comment.group(1).splitlines())
    at_once = re.search(r'applies at once: ([^;.]*)', text)
    if at_once:
        keys = re.sub(r'\([^)]*\)', '', at_once.group(1))  # a remark in brackets names none
        named = set(re.findall(r'[a-z0-9_]+', keys)) - {'and'}
        compare_live(f'{daemon.unit}: SIGHUP', named, help, problems)
    elif f'{daemon.name}(8), SIGNALS' not in text:
        problems.append(f'{daemon.unit}: the SIGHUP comment neither lists what applies at '
                        f'once ("applies at once: KEY, ...") nor points to {daemon.name}(8), '
                        f'SIGNALS')


def check_daemon(daemon, help, problems):
    flag = lambda key: r'\*--' + re.escape(key.replace('_', '-')) + r'\*'
    toml_key = lambda key: r'^#? ?' + re.escape(key) + r' ='
    if daemon.table:
        check_settings_table(daemon, help, problems)
    check_listed(daemon.man, help.keys, flag, problems)
    check_listed(daemon.example, help.keys, toml_key, problems)
    check_ninf_toml(daemon, help, problems)
    check_foreign_variables(daemon, help, problems)
    check_sighup(daemon, help, problems)


def main():
    if len(sys.argv) != 1 + len(DAEMONS):
        sys.exit(__doc__)
    helps = [help_of(binary) for binary in sys.argv[1:]]
    problems = []
    for daemon, help in zip(DAEMONS, helps):
        check_daemon(daemon, help, problems)
    check_applied_at_once(helps[0], problems)
    check_limits_table(helps[0], problems)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f'check_settings_docs: {len(problems)} problems', file=sys.stderr)
        return 1
    counts = ', '.join(f'{len(h.keys)} {d.name}' for d, h in zip(DAEMONS, helps))
    tables = ', '.join(f'{len(k)} [{t}.NAME]' for t, k in sorted(helps[0].tables.items()))
    print(f'check_settings_docs: settings documented: {counts}; table keys: {tables}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
