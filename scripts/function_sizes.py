#!/usr/bin/env python3
"""Function and class sizes of the product code, for the issues' size goals.

Usage: python3 scripts/function_sizes.py [--list] [--over N] [PATH...]

Counts, in the C and C++ files git tracks (PATHs: only those under them),
leaving out tests, fuzzers, benchmarks, examples and generated files
(EXCLUDED below):
- functions over 100 lines, and how many are over 60 (--over changes 60);
- classes and structs with more than 40 member functions.
A function's lines run from the first line of its signature to its closing
brace, blank and comment lines included (as clang-tidy's
readability-function-size LineThreshold counts them); a lambda counts in the
function around it. A class's member functions are those its body declares
or defines: constructors, destructor and operators included, the
`= default` / `= delete` ones too. --list prints every function over the
threshold, longest first.

A lexical scan, no compiler: it needs nothing but Python and runs in a
second, so the figures can be taken on any checkout. It reads comments,
strings and preprocessor lines out first, then follows the braces, so a
function a macro expands to is not seen. Debian's pmccabe prints nothing for
a file with a C++17 nested namespace (`namespace a::b {`: most of ours), and
clang-tidy's readability-function-size took about 12 s for one file of
server/ here, so the whole tree would take an hour on these machines.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
SOURCE = re.compile(r'\.(c|cc|cpp|h|hh|hpp)$')
EXCLUDED = re.compile(r'^(tests|fuzz|bench|examples)/|\.pb\.(h|cc)$|_generated\.|/generated/')
LONG, CLASS_METHODS = 100, 40

# Comments, strings, character literals (raw strings are not used in the tree).
LEXEMES = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
# A signature's tail after its parameter list: qualifiers, a trailing return
# type, or a constructor's initializer list (its last member's braces were
# a block of their own, so it may end in "}" or ")").
FUNCTION_TAIL = re.compile(
    r'\)\s*(?:(?:const|noexcept(?:\([^)]*\))?|override|final|mutable|&&?|->\s*[^{;]+?)\s*)*$'
    r'|\)\s*(?:noexcept\s*)?:\s*[\w:]+\s*[({].*[)}]$', re.S)
TYPE_HEAD = re.compile(r'(?:^|\s)(class|struct|union|enum|namespace)\b(?:\s+(?:class|struct))?'
                       r'(?:\s+\[\[[^\]]*\]\])?\s*([\w:]*)')
NOT_A_METHOD = re.compile(r'^(?:using|typedef|friend|static_assert|return|template\s*<[^>]*>\s*friend)\b')
# "name(" of a declaration, template arguments removed first
DECLARED_CALL = re.compile(r'(?:operator\s*(?:\(\)|[^\s(]+)|~?\b\w+)\s*\($')


def blank_out(text):
    """Comments, literals and preprocessor lines as spaces, newlines kept."""
    text = LEXEMES.sub(lambda m: re.sub(r'[^\n]', ' ', m.group(0))
                       if not m.group(0).startswith('"') else '""', text)
    lines, out, continued = text.split('\n'), [], False
    for line in lines:
        directive = continued or line.lstrip().startswith('#')
        continued = directive and line.rstrip().endswith('\\')
        out.append('' if directive else line)
    return '\n'.join(out)


def without_templates(text):
    text = re.sub(r'operator\s*(<<=?|>>=?|<=>|<=|>=|<|>)', 'operator_', text)
    previous = None
    while previous != text:
        previous, text = text, re.sub(r'<[^<>;{}]*>', '', text)
    return text


def is_function_head(head):
    head = head.strip()
    if '(' not in head or re.match(r'^(if|for|while|switch|catch|do|else)\b', head):
        return False
    before_call = head[:head.index('(')]
    if '=' in before_call.replace('operator=', '').replace('==', '') or 'return' in before_call:
        return False
    return bool(FUNCTION_TAIL.search(head))


def is_method_declaration(segment):
    segment = re.sub(r'^(?:public|private|protected)\s*:', '', segment.strip()).strip()
    if '(' not in segment or NOT_A_METHOD.match(segment):
        return False
    flat = without_templates(segment)
    if '(' not in flat:
        return False  # std::function<void(int)> member
    before_call = flat[:flat.index('(') + 1]
    if '=' in before_call.replace('operator=', ''):
        return False  # a data member with an initializer
    return bool(DECLARED_CALL.search(before_call))


class Scope:
    def __init__(self, kind, name, start_line, first_line):
        self.kind, self.name = kind, name  # file, namespace, class, function, block
        self.start_line, self.first_line = start_line, first_line
        self.head_start = 0  # where the next declaration of this scope begins
        self.methods = 0


def scan(path, text):
    """(functions [(lines, where, name)], classes [(methods, where, name)])."""
    functions, classes = [], []
    stack = [Scope('file', '', 1, 1)]
    line = 1
    for i, ch in enumerate(text):
        if ch == '\n':
            line += 1
            continue
        if ch not in '{};':
            continue
        scope = stack[-1]
        head = text[scope.head_start:i]
        if ch == ';':
            if scope.kind == 'class' and is_method_declaration(head):
                scope.methods += 1
            if scope.kind in ('file', 'namespace', 'class'):
                scope.head_start = i + 1
            continue
        if ch == '{':
            # the signature's first line: where the text before the brace begins
            signature = re.sub(r'^\s*(?:(?:public|private|protected)\s*:\s*)?', '', head)
            first = line - signature.count('\n')
            kind, name = 'block', ''
            if scope.kind in ('file', 'namespace', 'class'):
                t = TYPE_HEAD.search(without_templates(head))
                if t and '(' not in head[:head.find(t.group(1))]:
                    kind = 'namespace' if t.group(1) == 'namespace' else (
                        'enum' if t.group(1) == 'enum' else 'class')
                    name = t.group(2)
                elif is_function_head(head):
                    kind = 'function'
                    name = re.sub(r'\s+', ' ', head[:head.index('(')].strip()).split(' ')[-1]
                    if scope.kind == 'class':
                        scope.methods += 1
            stack.append(Scope(kind, name, line, first))
            stack[-1].head_start = i + 1
            continue
        # '}'
        closed = stack.pop() if len(stack) > 1 else stack[-1]
        if closed.kind == 'function':
            functions.append((line - closed.first_line + 1, f'{path}:{closed.first_line}',
                              closed.name))
        elif closed.kind == 'class' and closed.methods:
            classes.append((closed.methods, f'{path}:{closed.start_line}', closed.name))
        if closed.kind != 'block' and stack[-1].kind in ('file', 'namespace', 'class'):
            stack[-1].head_start = i + 1
    return functions, classes


def tracked_sources(paths):
    files = subprocess.run(['git', '-C', ROOT, 'ls-files', '--', *paths], capture_output=True,
                           text=True, check=True).stdout.split()
    return [f for f in files if SOURCE.search(f) and not EXCLUDED.search(f)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--list', action='store_true', help='every function over --over lines')
    p.add_argument('--over', type=int, default=60)
    p.add_argument('paths', nargs='*')
    args = p.parse_args()
    functions, classes = [], []
    files = tracked_sources(args.paths)
    for path in files:
        f, c = scan(path, blank_out(open(os.path.join(ROOT, path), errors='replace').read()))
        functions += f
        classes += c
    functions.sort(reverse=True)
    over = [f for f in functions if f[0] > args.over]
    long = [f for f in functions if f[0] > LONG]
    big = sorted((c for c in classes if c[0] > CLASS_METHODS), reverse=True)
    print(f'{len(files)} files, {len(functions)} functions, {len(classes)} classes with member '
          f'functions (tests, fuzzers, benchmarks, examples and generated files left out)')
    print(f'functions over {LONG} lines: {len(long)}')
    for n, where, name in long:
        print(f'  {n:4d}  {name}  {where}')
    print(f'functions over {args.over} lines: {len(over)}')
    if args.list:
        for n, where, name in over:
            print(f'  {n:4d}  {name}  {where}')
    print(f'classes with more than {CLASS_METHODS} member functions: {len(big)}')
    for n, where, name in big:
        print(f'  {n:4d}  {name}  {where}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
