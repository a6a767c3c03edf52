#!/usr/bin/python3
"""Runs the benchmarks that write bench_record.py's JSON lines, keeps their raw results under
bench/results/, and regenerates the tables of bench/README.md from those files.

  /usr/bin/python3 bench/run_all.py --streetgan build/app/cli/streetgan [--only parzen,metrics] [--quick]
  /usr/bin/python3 bench/run_all.py --tables-only

Each benchmark writes bench/results/NAME-DATE.jsonl (one line per side and case: every run's
figure, the median, the command, machine and versions). A table in bench/README.md is the block

  <!-- results: results/NAME-DATE.jsonl -->
  ...
  <!-- end results -->

and is rewritten from the file it names: per case, one row per side with the median, the runs and
ours' lead over that side (above 1: ours is faster; for a side named "limit: …", a physical
limit, ours' share of it; for a side named "target: …", whether ours met it). A run of NAME points every block that names
an earlier NAME-*.jsonl at the new file. --quick runs each benchmark on a small case with one
repeat, into /tmp (it checks that they run; its figures are not kept). Needs what
`packaging/install-deps.sh --bench` installs.
"""
import argparse
import datetime
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_record  # noqa: E402

README = os.path.join(HERE, "README.md")
RESULTS = os.path.join(HERE, "results")
BLOCK = re.compile(r"<!-- results: (results/[\w.-]+\.jsonl) -->\n.*?<!-- end results -->", re.S)


def benches(args, work):
    """name → (the command without --out, the extra arguments of --quick)."""
    python, sg = "/usr/bin/python3", args.streetgan
    corpus = os.path.join(work, "corpus")
    return {
        "metrics": ([python, f"{HERE}/bench_metrics.py", "--streetgan", sg],
                    ["--n", "1000", "--n-train", "1000", "--nn-train", "5000", "--repeats", "1"]),
        "parzen": ([python, f"{HERE}/bench_parzen.py", "--streetgan", sg, "--corpus", corpus,
                    "--large-corpus", work], ["--repeats", "1"]),
        "data": ([python, f"{HERE}/bench_data.py", "--streetgan", sg, "--corpus", corpus],
                 ["--seconds", "2", "--repeats", "1"]),
        "serve": ([python, f"{HERE}/bench_serve.py", "--streetgan", sg, "--checkpoint", checkpoint_in(work),
                   "--queue", "64"], ["--seconds", "2", "--repeats", "1"]),
        "publish": ([python, f"{HERE}/bench_publish.py", "--streetgan", sg, "--run", os.path.join(work, "serve-run"),
                     "--npm", os.path.join(os.path.dirname(os.path.abspath(sg)), "..", "..", "npm", "node_modules")],
                    ["--repeats", "1"]),
        "layers": ([python, f"{HERE}/bench_layers.py"], ["--quick", "--repeats", "1"]),
        "train": ([python, f"{HERE}/bench_train.py", "--streetgan", sg, "--preset", "naive-64", "--batch", "64",
                   "--steps", "10", "--repeats", "5"], ["--batch", "16", "--steps", "2", "--repeats", "1"]),
        "directions": ([python, f"{HERE}/bench_directions.py", "--streetgan", sg], ["--n", "500", "--repeats", "1"]),
        "recipe-step": ([python, f"{HERE}/bench_recipe_step.py", "--streetgan", sg, "--preset", "demo", "--batch", "32",
                         "--threads", "2", "--repeats", "3"],
                        ["--batch", "8", "--steps", "2", "--only", "0,13", "--repeats", "1"]),
        "walk": ([python, f"{HERE}/bench_walk.py", "--streetgan", sg, "--checkpoint", checkpoint_in(work),
                  "--repeats", "3"], ["--seeds", "1,2", "--frames-per-key", "2", "--size", "64", "--repeats", "1"]),
        "project": ([python, f"{HERE}/bench_project.py", "--streetgan", sg, "--checkpoint", checkpoint_in(work),
                     "--threads", "2", "--repeats", "3"], ["--steps", "5", "--restarts", "2", "--repeats", "1"]),
        "live-metrics": ([python, f"{HERE}/bench_live_metrics.py", "--streetgan", sg, "--epochs", "16", "--threads", "2",
                          "--repeats", "3"], ["--frames", "2", "--epochs", "2", "--repeats", "1"]),
        "targets": ([python, f"{HERE}/bench_targets.py", "--streetgan", sg, "--build", build_of(sg), "--repeats", "3"],
                    ["--repeats", "1"]),
        "distributed": ([python, f"{HERE}/bench_distributed.py", "--streetgan", sg, "--presets", "naive-64", "--world", "2",
                         "--batch", "32", "--steps", "5", "--threads", "1", "--repeats", "5"],
                        ["--batch", "8", "--steps", "2", "--repeats", "1"]),
    }


def build_of(streetgan):
    """The build folder of BUILD/app/cli/streetgan (bench_targets.py finds bench_gui_stall there)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(streetgan))))


def checkpoint_in(work):
    found = sorted(glob.glob(os.path.join(work, "serve-run", "checkpoints", "*.pt")))
    return found[-1] if found else os.path.join(work, "serve-run", "checkpoints", "(not trained yet)")


def prepare(args, work, names):
    """The photograph corpus (3,000 crops) and, for serve, publish, walk and project, a naive-64
    checkpoint of one epoch on it."""
    corpus = os.path.join(work, "corpus")
    if not os.path.isdir(os.path.join(corpus, "train_val")):
        subprocess.run(["/usr/bin/python3", f"{HERE}/make_corpus.py", corpus, "--count", "3000"], check=True)
    needs_checkpoint = {"serve", "publish", "walk", "project"} & set(names)
    if needs_checkpoint and not glob.glob(os.path.join(work, "serve-run", "checkpoints", "*.pt")):
        subprocess.run([args.streetgan, "train", "--dataroot", corpus, "--run-dir", os.path.join(work, "serve-run"),
                        "--preset", "naive-64", "--epochs", "1", "--device", "cpu"], check=True, capture_output=True)


def run(args):
    work = args.work
    os.makedirs(work, exist_ok=True)
    table = benches(args, work)
    names = args.only.split(",") if args.only else list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        sys.exit(f"run_all.py: no benchmark named {', '.join(unknown)} (there are {', '.join(table)})")
    prepare(args, work, names)
    table = benches(args, work)  # the checkpoint exists now
    day = datetime.date.today().isoformat()
    written = {}
    for name in names:
        command, quick = table[name]
        out = os.path.join(work if args.quick else RESULTS, f"{name}-{day}.jsonl")
        command = command + (quick if args.quick else []) + ["--out", out]
        print(f"run_all.py: {' '.join(command)}", flush=True)
        subprocess.run(command, check=True)
        written[name] = out
    if not args.quick:
        regenerate(written)


def lead(record, ours):
    """Ours' lead over `record` (above 1: ours is faster), or None for ours' own sides or without a
    comparable median."""
    if record["side"].startswith(("ours", "limit")) or not ours or not ours["median"] or not record["median"]:
        return None
    if record.get("better") == "higher":
        return ours["median"] / record["median"]
    return record["median"] / ours["median"]


def share(ours, limit):
    """Ours' share of a physical limit (a side named "limit: ..."), as a fraction."""
    if limit.get("better") == "higher":
        return ours["median"] / limit["median"]
    return limit["median"] / ours["median"]


def met(ours, target):
    """Whether ours met a target (a side named "target: ..."), as bench_targets.py judges it."""
    if target.get("better") == "higher":
        return ours["median"] >= target["median"]
    return ours["median"] < target["median"]


def figure(value):
    """Four significant digits, thousands in full: 93,553 rather than 9.355e+04."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def render(path):
    """The markdown table of a results file: per case, one row per side (the last record of each)."""
    latest = {}
    for item in bench_record.read(path):
        latest[(item["case"], item["side"])] = item
    lines = [f"Raw results: `bench/{os.path.relpath(path, HERE)}`.", "",
             "| case | side | median | runs | ours' lead |", "|---|---|---|---|---|"]
    for case in dict.fromkeys(case for case, _ in latest):
        rows = [r for (c, _), r in latest.items() if c == case]
        ours = next((r for r in rows if r["side"] == "ours"), None)
        for r in rows:
            runs = ", ".join(figure(v) for v in r["runs"])
            ratio = lead(r, ours)
            if r["side"].startswith("limit") and ours and r["median"]:
                cell = f"ours: {share(ours, r):.0%} of it"
            elif r["side"].startswith("target") and ours:
                cell = "met" if met(ours, r) else "not met"
            else:
                cell = "—" if ratio is None else f"{ratio:.2f}×"
            lines.append(f"| {case} | {r['side']} | {figure(r['median'])} {r['unit']} | {runs} | {cell} |")
    return "\n".join(lines)


def regenerate(written):
    """Rewrites every results block of README.md; blocks of a benchmark just run point at its new file."""
    with open(README) as f:
        text = f.read()

    def replace(match):
        name = match.group(1)
        bench = os.path.basename(name).rsplit("-", 3)[0]
        if bench in written:
            name = os.path.relpath(written[bench], HERE)
        path = os.path.join(HERE, name)
        if not os.path.isfile(path):
            sys.exit(f"run_all.py: bench/README.md names {name}, which does not exist")
        return f"<!-- results: {name} -->\n{render(path)}\n<!-- end results -->"

    new = BLOCK.sub(replace, text)
    if new != text:
        with open(README, "w") as f:
            f.write(new)
        print("run_all.py: bench/README.md's tables regenerated")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--only", default="", help="comma-separated benchmark names (default: all)")
    parser.add_argument("--quick", action="store_true", help="small cases, one repeat, results in --work only")
    parser.add_argument("--tables-only", action="store_true", help="regenerate README's tables and stop")
    parser.add_argument("--work", default="/tmp/streetgan-bench", help="corpus, checkpoint and quick results")
    args = parser.parse_args()
    if args.tables_only:
        regenerate({})
        return
    run(args)


if __name__ == "__main__":
    main()
