#!/usr/bin/env python3
"""Checks the protocol's documentation against its one-list tables.

Usage: check_protocol_docs.py

The frame list (NINF_FRAME_MAP in protocol/frame.h), the error list
(NINF_ERROR_MAP in protocol/ninf_errors.h) and the GridRPC error list
(GRPC_ERROR_MAP in client/grpc.h) are the truth. Fails, naming the place, when:
- docs/protocol.md's frame table lacks a frame, lists a frame the map does
  not have, gives a frame another number, or names another protobuf header
  than the map's comment does;
- a man page (docs/man/*.scd) names an error code the lists do not have, or
  writes one with another number ("*NINF_ERR_LIMIT* (20)");
- the error lists of Ninf_call(3) and grpc_call(3) (RETURN VALUE, ERRORS)
  do not name every code of their list;
- a page of docs/ names a NINF_ERR_ code NINF_ERROR_MAP does not have.
"""
import glob
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))

# X(FRAME_CALL, 3)            /* client -> ninfd      CallRequest */
FRAME_ROW = re.compile(r'X\(FRAME_(\w+), (\d+)\)\s*/\* (.*?) \*/')
# X(NINF_ERR_LIMIT, 20, "...", SESSION_FAILED, 0) and X(GRPC_RPC_REFUSED, 9, "...")
ERROR_ROW = re.compile(r'X\(((?:NINF|GRPC)_[A-Z_]+), (\d+),')
# | 3    | CALL            | client -> ninfd       | `CallRequest`     | none |
TABLE_ROW = re.compile(r'^\|\s*(\d+)\s*\|\s*([A-Z_]+)\s*\|[^|]*\|\s*`(\w+)`\s*\|', re.M)
# an error code a man page names: *NINF_ERR_LIMIT*, and its number if it
# follows: *NINF_ERR_LIMIT* (20)
NAMED_CODE = re.compile(r'\*((?:NINF_ERR|NINF_OK|GRPC)_?[A-Z_]*)\*(?: \((\d+)\))?')
# The pages that list a whole error list, and the list each must cover.
FULL_LISTS = {'docs/man/Ninf_call.3.scd': 'NINF', 'docs/man/grpc_call.3.scd': 'GRPC'}


def read(path):
    return open(os.path.join(ROOT, path)).read()


def frame_map():
    """{NAME: (value, protobuf header)} from NINF_FRAME_MAP."""
    frames = {}
    for name, value, comment in FRAME_ROW.findall(read('protocol/frame.h')):
        # the comment is "direction  Header" or "direction  Header + bytes"
        header = re.findall(r'[A-Z]\w*', comment.split('+')[0])
        frames[name] = (int(value), header[-1] if header else '')
    if not frames:
        sys.exit('check_protocol_docs: no NINF_FRAME_MAP rows in protocol/frame.h')
    return frames


def error_map():
    """{code name: number} from NINF_ERROR_MAP and GRPC_ERROR_MAP."""
    errors = {}
    for path in ('protocol/ninf_errors.h', 'client/grpc.h'):
        rows = ERROR_ROW.findall(read(path))
        if not rows:
            sys.exit(f'check_protocol_docs: no error rows in {path}')
        errors.update({name: int(value) for name, value in rows})
    return errors


def check_frame_table(frames, problems):
    path = 'docs/protocol.md'
    rows = TABLE_ROW.findall(read(path))
    listed = {}
    for value, name, header in rows:
        if name in listed:
            problems.append(f'{path}: the frame table lists {name} twice')
        listed[name] = (int(value), header)
    for name in sorted(set(frames) - set(listed)):
        problems.append(f'{path}: the frame table lacks {name} ({frames[name][0]}), '
                        f'which NINF_FRAME_MAP has')
    for name in sorted(set(listed) - set(frames)):
        problems.append(f'{path}: the frame table lists {name}, which NINF_FRAME_MAP lacks')
    for name in sorted(set(listed) & set(frames)):
        (value, header), (doc_value, doc_header) = frames[name], listed[name]
        if value != doc_value:
            problems.append(f'{path}: {name} is frame {value} in NINF_FRAME_MAP, '
                            f'the table says {doc_value}')
        if header != doc_header:
            problems.append(f'{path}: {name} carries `{header}` in NINF_FRAME_MAP, '
                            f'the table says `{doc_header}`')


def check_man_errors(errors, problems):
    for full in sorted(glob.glob(os.path.join(ROOT, 'docs/man/*.scd'))):
        path = os.path.relpath(full, ROOT)
        named = set()
        for code, number in NAMED_CODE.findall(read(path)):
            if code.startswith('GRPC_') and code not in errors:
                continue  # GRPC_SESSIONID_VOID and the like: not error codes
            if code not in errors:
                problems.append(f'{path}: names {code}, which no error list has')
                continue
            named.add(code)
            if number and int(number) != errors[code]:
                problems.append(f'{path}: {code} ({number}); the error list makes it '
                                f'{errors[code]}')
        prefix = FULL_LISTS.get(path)
        for code in sorted(c for c in errors if prefix and c.startswith(prefix + '_')):
            if code not in named:
                problems.append(f'{path}: its error list lacks {code} ({errors[code]})')


def check_md_errors(errors, problems):
    pages = glob.glob(os.path.join(ROOT, 'docs/**/*.md'), recursive=True)
    for full in sorted(pages):
        path = os.path.relpath(full, ROOT)
        for code in sorted(set(re.findall(r'\bNINF_ERR_[A-Z_]*[A-Z]', read(path)))):
            if code not in errors:
                problems.append(f'{path}: names {code}, which NINF_ERROR_MAP does not have')


def main():
    if len(sys.argv) != 1:
        sys.exit(__doc__)
    frames, errors = frame_map(), error_map()
    problems = []
    check_frame_table(frames, problems)
    check_man_errors(errors, problems)
    check_md_errors(errors, problems)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f'check_protocol_docs: {len(problems)} problems', file=sys.stderr)
        return 1
    print(f'check_protocol_docs: {len(frames)} frames and {len(errors)} error codes documented')
    return 0


if __name__ == '__main__':
    sys.exit(main())
