#!/usr/bin/python3
"""Compares two event logs (events.jsonl) of the same run made by two builds: every event type's
lines must have the same fields with the same JSON kinds (integer, float, text, null, ...), and the
fields that do not depend on the clock, the process or the folder must have the same values.

  tools/compare_event_logs.py OLD/events.jsonl NEW/events.jsonl [--root-old DIR --root-new DIR]

`system` events come every few seconds, so their number may differ; they are compared by shape
only. Prints each difference and exits 1 when there is one; prints a summary and exits 0 when the
logs agree.
"""
import argparse
import json
import sys

# Fields that change from run to run of the same build: clocks, processes, speeds, machines.
VOLATILE = {"time", "pid", "pid_start_time", "seconds", "images_per_s", "data_wait_fraction", "cpu_percent",
            "rss_bytes", "host_memory_available_bytes", "host_memory_total_bytes", "loader_bytes_per_s", "job",
            "version"}


def kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "array"
    return "object"


def compare(old, new, where, problems, values):
    if kind(old) != kind(new):
        problems.append(f"{where}: {kind(old)} {old!r} became {kind(new)} {new!r}")
        return
    if isinstance(old, dict):
        for key in sorted(set(old) | set(new)):
            if key not in new:
                problems.append(f"{where}.{key}: no longer written")
            elif key not in old:
                problems.append(f"{where}.{key}: newly written")
            else:
                compare(old[key], new[key], f"{where}.{key}", problems, values and key not in VOLATILE)
    elif isinstance(old, list):
        if values and len(old) != len(new):
            problems.append(f"{where}: {len(old)} items became {len(new)}")
        for i, (a, b) in enumerate(zip(old, new)):
            compare(a, b, f"{where}[{i}]", problems, values)
    elif values and old != new:
        problems.append(f"{where}: {old!r} became {new!r}")


def read(path, root):
    events = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if root:
                line = line.replace(root, "@ROOT@")
            events.append(json.loads(line))
    return events


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--root-old", default="")
    parser.add_argument("--root-new", default="")
    args = parser.parse_args()
    old, new = read(args.old, args.root_old), read(args.new, args.root_new)
    problems = []
    by_type_old, by_type_new = {}, {}
    for event in old:
        by_type_old.setdefault(event.get("type"), []).append(event)
    for event in new:
        by_type_new.setdefault(event.get("type"), []).append(event)
    for kind_name in sorted(set(by_type_old) | set(by_type_new), key=str):
        a, b = by_type_old.get(kind_name, []), by_type_new.get(kind_name, [])
        values = kind_name != "system"
        if values and len(a) != len(b):
            problems.append(f"{kind_name}: {len(a)} events became {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            compare(x, y, f"{kind_name}[{i}]", problems, values)
    for problem in problems:
        print(problem)
    counts = ", ".join(f"{k} {len(v)}" for k, v in sorted(by_type_new.items(), key=lambda kv: str(kv[0])))
    print(f"{args.new}: {len(new)} events ({counts}); {len(problems)} difference(s) from {args.old}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
