#!/usr/bin/python3
"""Merges the one-row markdown tables that `bench_train.py --table-out FILE` writes into one table.

Each file holds a header, a separator and one row. Rows may have different columns (the headline
configuration of packaging/gpu-check.sh adds torch.compile and real-data columns): the merged
table has every column, in the order they first appear, and an empty cell where a row has none.
A column named twice in one file (the two "ratio" columns) is told apart by its position among
the columns of that name.

  bench/bench_table.py bench-naive-64-256-fp32.md bench-naive-64-256-bf16.md ... > table.md

Exit status 2, with one line naming the file, when a file is not such a table.
"""
import os
import stat
import sys

MAX_BYTES = 1 << 20  # a table of bench_train.py is a few hundred bytes


def cells(line):
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")) or len(line) < 2:
        return None
    return [c.strip() for c in line[1:-1].split("|")]


def read_table(path):
    try:
        # Opened without blocking and checked before reading: a FIFO or a device is not a table.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ValueError("not a regular file")
            if info.st_size > MAX_BYTES:
                raise ValueError(f"{info.st_size} bytes; a table of bench_train.py is far below {MAX_BYTES}")
            text = f.read(MAX_BYTES + 1).decode("utf-8-sig")
    except OSError as e:
        raise ValueError(f"cannot read it ({e.strerror})")
    except UnicodeDecodeError:
        raise ValueError("cannot read it (not UTF-8)")
    lines = [l for l in text.splitlines() if l.strip()]
    if len(lines) != 3:
        raise ValueError(f"not a table of bench_train.py (a header, a separator and one row; it has {len(lines)} lines)")
    header, separator, row = (cells(l) for l in lines)
    if header is None or separator is None or row is None or not all(set(c) <= set("-:") and c for c in separator):
        raise ValueError("not a table of bench_train.py (a header, a separator and one row)")
    if not (len(header) == len(separator) == len(row)):
        raise ValueError(f"its header has {len(header)} cells, its row {len(row)}")
    if not all(header) or any(not c.isprintable() for c in header + row):
        raise ValueError("a column without a name, or a cell with control characters")
    keys, seen = [], {}
    for name in header:
        seen[name] = seen.get(name, 0) + 1
        keys.append((name, seen[name]))
    return keys, dict(zip(keys, row))


def merge(tables):
    columns = []
    for keys, _ in tables:
        previous = -1
        for key in keys:
            if key in columns:
                previous = columns.index(key)
            else:
                previous += 1
                columns.insert(previous, key)
    lines = ["| " + " | ".join(name for name, _ in columns) + " |", "|" + "---|" * len(columns)]
    for _, values in tables:
        lines.append("| " + " | ".join(values.get(key, "") for key in columns) + " |")
    return "\n".join(lines) + "\n"


def main(paths):
    if not paths:
        print("bench_table.py: give the tables to merge (bench_train.py --table-out files)", file=sys.stderr)
        return 2
    tables = []
    for path in paths:
        try:
            tables.append(read_table(path))
        except ValueError as e:
            print(f"bench_table.py: {path}: {e}", file=sys.stderr)
            return 2
    try:
        sys.stdout.write(merge(tables))
        sys.stdout.flush()
    except (OSError, AttributeError) as e:  # stdout closed or full
        print(f"bench_table.py: cannot write the table ({getattr(e, 'strerror', None) or 'no standard output'})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
