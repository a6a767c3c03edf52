#!/usr/bin/python3
"""What the demo preset's live evaluations cost: `streetgan train --preset demo` on the studio's demo
data for a fixed number of epochs, with its quality metrics and Parzen off, with the metrics on (the
preset's cadence), and with both on (the preset as shipped), runs alternating, REPEATS of each.

Throughput is the images trained per second: images seen from the first `step` event to
`run_finished` over the seconds between them (the run's start is not counted; its wait at the end
for an evaluation still running is), or with --to-last-step to the last `step` event (what the
evaluations cost the steps while training goes on). It prints each mode's median, the ratio to "off", and how
many `metrics` and `parzen` events each run wrote.

  /usr/bin/python3 bench/bench_live_metrics.py --streetgan build/app/cli/streetgan [--epochs 12 --repeats 3]

--out FILE appends one JSON line per mode (bench/bench_record.py): bench "live-metrics", case the
run (demo preset, epochs, threads, where throughput ends), side "ours" (metrics and Parzen off, the
baseline), "ours, metrics on" or "ours, metrics and Parzen on (the preset)", every run's images/s,
with each run's count of metrics and parzen events and each evaluation's seconds.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402  (imports neither numpy nor torch)

MODES = {
    "off": {"metrics": {"every_epochs": 0}, "parzen": {"every_epochs": 0}},
    "metrics": {"parzen": {"every_epochs": 0}},
    "preset": {},
}
SIDES = {"off": "ours", "metrics": "ours, metrics on", "preset": "ours, metrics and Parzen on (the preset)"}


def run_once(args, data, work, mode, rep):
    run = os.path.join(work, f"run-{mode}-{rep}")
    config = os.path.join(work, f"config-{mode}.json")
    with open(config, "w") as out:
        json.dump(MODES[mode], out)
    cmd = [args.streetgan, "train", "--preset", "demo", "--config", config, "--dataroot", data, "--run-dir", run,
           "--threads", str(args.threads), "--epochs", str(args.epochs)]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_live_metrics.py: {' '.join(cmd)} failed: {done.stderr.strip()}")
    events = [json.loads(line) for line in open(os.path.join(run, "events.jsonl")) if line.endswith("\n")]
    steps = [e for e in events if e["type"] == "step"]
    finished = [e for e in events if e["type"] == "run_finished"][-1]
    # From the first step to the end: an evaluation still running when training ends is waited
    # for, and counts (the start, the same in every mode, does not). --to-last-step: to the last
    # step only, what the evaluations cost the steps while training goes on.
    last = steps[-1] if args.to_last_step else finished
    rate = (last["images_seen"] - steps[0]["images_seen"]) / (last["time"] - steps[0]["time"])
    counts = {kind: sum(1 for e in events if e["type"] == kind) for kind in ("metrics", "parzen")}
    seconds = [e.get("seconds", float("nan")) for e in events if e["type"] == "metrics"]
    shutil.rmtree(run, ignore_errors=True)
    return rate, counts, seconds


def write_records(args, rates, events):
    """One bench_record line per mode (with --out): every run's images/s and its evaluations."""
    end = "the last step" if args.to_last_step else "the end of the run"
    threads = f"{args.threads} threads" if args.threads else "every core"
    case = f"demo preset, {args.epochs} epochs, {threads}, to {end}"
    for mode in MODES if args.out else []:
        settings = {"preset": "demo", "config": MODES[mode], "epochs": args.epochs, "threads": args.threads,
                    "to_last_step": args.to_last_step, "data": args.data or f"demo-data, 4 x 10 x {args.frames} scenes",
                    "repeats": args.repeats}
        bench_record.write(args.out, bench="live-metrics", case=case, side=SIDES[mode], runs=rates[mode],
                           unit="img/s", better="higher", settings=settings, streetgan=args.streetgan,
                           metrics_events=[c["metrics"] for c, _ in events[mode]],
                           parzen_events=[c["parzen"] for c, _ in events[mode]],
                           metrics_seconds=[[None if x != x else x for x in s] for _, s in events[mode]])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--data", help="demo data folder (rendered into a temporary folder when not given)")
    parser.add_argument("--frames", type=int, default=25,
                        help="frames per sequence of the demo data rendered here (default 25: 1,000 scenes)")
    parser.add_argument("--epochs", type=int, default=12, help="epochs per run (default 12: one metrics point, six Parzen)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: every core)")
    parser.add_argument("--to-last-step", action="store_true",
                        help="throughput to the last step, leaving out the wait for an evaluation at the end")
    parser.add_argument("--out", metavar="FILE", help="append one bench_record.py line per mode")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    work = tempfile.mkdtemp(prefix="streetgan-bench-live-metrics-")
    data = args.data or os.path.join(work, "demo-data")
    if not args.data:
        subprocess.run([args.streetgan, "demo-data", "--out", data, "--cities", "4", "--sequences", "10",
                        "--frames", str(args.frames)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rates = {mode: [] for mode in MODES}
    events = {mode: [] for mode in MODES}
    for rep in range(args.repeats):
        for mode in MODES:
            rate, counts, seconds = run_once(args, data, work, mode, rep)
            rates[mode].append(rate)
            events[mode].append((counts, seconds))
            print(f"run {rep + 1} {mode:>8}: {rate:7.1f} images/s, {counts['metrics']} metrics events "
                  f"({', '.join(f'{s:.1f} s' for s in seconds) or 'none'}), {counts['parzen']} parzen events",
                  file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    base = statistics.median(rates["off"])
    print(f"demo preset, {args.epochs} epochs, medians of {args.repeats} runs, throughput to "
          f"{'the last step' if args.to_last_step else 'the end of the run'}")
    print(f"{'mode':<22} {'images/s':>9} {'of off':>7}")
    names = {"off": "metrics and Parzen off", "metrics": "metrics on", "preset": "metrics and Parzen on"}
    for mode in MODES:
        med = statistics.median(rates[mode])
        print(f"{names[mode]:<22} {med:>9.1f} {med / base:>7.1%}")
    write_records(args, rates, events)
    return 0


if __name__ == "__main__":
    sys.exit(main())
