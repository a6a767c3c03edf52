#!/usr/bin/env python3
"""Lists the functions of 100 lines or more in core/, widgets/ and app/ (a brace-counting scan).

    python3 tools/function_lengths.py [--limit 100] [FOLDER...]

A function is a brace block at namespace or class level whose opening line is not a namespace,
class, struct, enum or union, or a lambda or initializer list inside another function. Its
length counts from the line of its signature's start to its closing brace. String and character
literals and comments are skipped, so braces inside them do not count. Exits 1 when any function
reaches the limit, so a script or CI step can use it.
"""
import argparse
import os
import re
import sys

SCOPE_RE = re.compile(r'\b(namespace|class|struct|enum|union)\b[^;()]*$')


def strip_code(text):
    """The text with comments and literals blanked (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(''.join(ch if ch == '\n' else ' ' for ch in text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            k = text.find('(', i)
            delim = text[i + 2:k]
            j = text.find(')' + delim + '"', k)
            j = n if j < 0 else j + len(delim) + 2
            out.append(''.join(ch if ch == '\n' else ' ' for ch in text[i:j]))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(''.join(ch if ch == '\n' else ' ' for ch in text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def functions(path):
    """(name line, first line, last line) of each top-level function body in the file."""
    code = strip_code(open(path, encoding='utf-8', errors='replace').read())
    found = []
    stack = []  # for each open brace: 'scope' (namespace/class) or 'body' (a function and all inside it)
    statement_start = 0  # where the text since the last ';', '{' or '}' at scope level began
    line = 1
    start_line = 1
    for i, c in enumerate(code):
        if c == '\n':
            line += 1
            continue
        in_body = any(kind[0] == 'body' for kind in stack)
        if c == '{':
            if in_body:
                stack.append(('inner', line))
            else:
                head = code[statement_start:i]
                if SCOPE_RE.search(' '.join(head.split())) or head.strip().endswith('='):
                    stack.append(('scope', line))
                elif ')' in head:
                    leading = len(head) - len(head.lstrip())
                    first = start_line + head[:leading].count('\n')
                    stack.append(('body', first, ' '.join(head.split())[-80:]))
                else:
                    stack.append(('scope', line))
                statement_start = i + 1
                start_line = line
        elif c == '}':
            top = stack.pop() if stack else ('scope', line)
            if top[0] == 'body':
                found.append((top[2], top[1], line))
            if not any(kind[0] == 'body' for kind in stack):
                statement_start = i + 1
                start_line = line
        elif c == ';' and not in_body:
            statement_start = i + 1
            start_line = line
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--limit', type=int, default=100, help='the length that is reported (default 100)')
    parser.add_argument('folders', nargs='*', default=['core', 'widgets', 'app'])
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    long_ones = []
    for folder in args.folders:
        for directory, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if not name.endswith(('.cpp', '.h')):
                    continue
                path = os.path.join(directory, name)
                for head, first, last in functions(path):
                    length = last - first + 1
                    if length >= args.limit:
                        long_ones.append((length, os.path.relpath(path, root), first, head))
    for length, path, first, head in sorted(long_ones, reverse=True):
        print(f'{length:5d}  {path}:{first}  {head}')
    sys.stdout.flush()
    print(f'{len(long_ones)} function(s) of {args.limit} lines or more', file=sys.stderr)
    return 1 if long_ones else 0


if __name__ == '__main__':
    sys.exit(main())
