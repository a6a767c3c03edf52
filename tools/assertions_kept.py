#!/usr/bin/env python3
"""Which test assertions a change removes, moves or rewrites.

Usage: tools/assertions_kept.py BASE [PATH...]   (default PATH: tests)

Reads `git diff BASE -- PATH` and sorts every removed QVERIFY/QVERIFY2/QCOMPARE/QTRY_*/newRow
line into one of:
  moved      the same line (whitespace aside) is added elsewhere in the diff;
  rewritten  its hunk adds an assertion of the same macro in its place (an API's call changed),
             printed as a pair so that a reader checks each kept its meaning;
  removed    neither: an assertion is gone.
Exits 1 when any assertion is removed, 0 otherwise.
"""
import re
import subprocess
import sys

ASSERTION = re.compile(r'\b(QVERIFY2?|QCOMPARE|QTRY_\w+|QFAIL|QSKIP|newRow)\s*\(')


def hunks(diff):
    """(file, removed lines, added lines) for each hunk of a unified diff."""
    current_file, removed, added = None, [], []
    for line in diff.splitlines():
        if line.startswith('+++ '):
            current_file = line[6:] if line.startswith('+++ b/') else line[4:]
        elif line.startswith('@@'):
            if removed or added:
                yield current_file, removed, added
            removed, added = [], []
        elif line.startswith('-') and not line.startswith('---'):
            removed.append(line[1:])
        elif line.startswith('+') and not line.startswith('+++'):
            added.append(line[1:])
    if removed or added:
        yield current_file, removed, added


def macro(line):
    match = ASSERTION.search(line)
    return match.group(1) if match else None


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    paths = sys.argv[2:] or ['tests']
    diff = subprocess.run(['git', 'diff', '-U0', sys.argv[1], '--'] + paths, check=True,
                          capture_output=True, text=True).stdout
    all_hunks = list(hunks(diff))
    added_anywhere = {' '.join(line.split()) for _, _, added in all_hunks for line in added}
    moved = rewritten = 0
    gone = []
    for name, removed, added in all_hunks:
        spare = [line for line in added if macro(line)]
        for line in removed:
            kind = macro(line)
            if not kind:
                continue
            if ' '.join(line.split()) in added_anywhere:
                moved += 1
                continue
            partner = next((a for a in spare if macro(a) == kind), None)
            if partner is None:
                gone.append((name, line.strip()))
                continue
            spare.remove(partner)
            rewritten += 1
            print(f'rewritten  {name}\n    - {line.strip()}\n    + {partner.strip()}')
    for name, line in gone:
        print(f'removed    {name}\n    - {line}')
    print(f'assertions: {moved} moved, {rewritten} rewritten, {len(gone)} removed')
    return 1 if gone else 0


if __name__ == '__main__':
    sys.exit(main())
