#!/usr/bin/python3
"""The demo's claim, measured: the `demo` preset on the studio's demo data shows street-like
samples within 5 minutes. Renders the demo data (as the studio does: 4 cities x 10 sequences x
25 frames = 1,000 scenes) unless --data names it, trains `streetgan train --preset demo` until
the last mark, and copies the sample grid written nearest each minute mark to --out as
demo-<m>min.png. Prints, per mark: the grid's time, step, images seen and the losses.

  bench/bench_demo.py --streetgan build/app/cli/streetgan --out /tmp/demo-grids --marks 1,3,5

The run stops (SIGINT: a checkpoint is written) after the last mark.

--recipe trains the demo preset with other recipe keys (a JSON object, as `streetgan train -t`),
e.g. modern-64's; --prefix names its grids (<prefix>-<m>min.png); --score scores the checkpoint
nearest each mark with `streetgan metrics` against the demo data (SWD x10^3, FID, KID,
precision, recall) and keeps every checkpoint for it:

  bench/bench_demo.py --out /tmp/g --data /tmp/demo --seed 1 --prefix modern --score \
      --recipe '{"loss": "rpgan", "r1_gamma": 1, "r2_gamma": 1, "reg_every": 4, "d_norm": "none"}'
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--data", help="demo data folder (rendered into a temporary folder when not given)")
    parser.add_argument("--out", required=True, help="folder for demo-<m>min.png")
    parser.add_argument("--marks", default="1,3,5", help="minutes at which to keep a sample grid")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: every core)")
    parser.add_argument("--seed", type=int, help="the run's seed (the preset's when not given)")
    parser.add_argument("--recipe", default="{}", help="recipe keys on top of the demo preset (JSON)")
    parser.add_argument("--prefix", default="demo", help="grid file names: <prefix>-<m>min.png")
    parser.add_argument("--score", action="store_true", help="score the checkpoint nearest each mark")
    args = parser.parse_args()
    marks = [float(m) for m in args.marks.split(",")]
    work = tempfile.mkdtemp(prefix="streetgan-bench-demo-")
    data = args.data or os.path.join(work, "demo-data")
    if not args.data:
        subprocess.run([args.streetgan, "demo-data", "--out", data, "--cities", "4", "--sequences", "10",
                        "--frames", "25"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run = os.path.join(work, "run")
    cmd = [args.streetgan, "train", "--preset", "demo", "--dataroot", data, "--run-dir", run,
           "--threads", str(args.threads), "--epochs", "1000", "-t", args.recipe]
    if args.seed is not None:
        cmd += ["--seed", str(args.seed)]
    if args.score:
        cmd += ["-c", json.dumps({"keep_checkpoints": 1000})]
    started = time.monotonic()
    # stderr to a file: a pipe nobody reads while training could fill and stall the run.
    err_path = os.path.join(work, "stderr.log")
    err_file = open(err_path, "w")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err_file, text=True)
    events_path = os.path.join(run, "events.jsonl")
    try:
        while time.monotonic() - started < marks[-1] * 60 + 30 and proc.poll() is None:
            time.sleep(2)
            if os.path.exists(events_path) and any_sample_past(events_path, marks[-1] * 60):
                break
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
        err_file.close()
    err = open(err_path).read()
    events = [json.loads(line) for line in open(events_path) if line.endswith("\n")]
    start = next(e["time"] for e in events if e["type"] == "run_started")
    samples = [e for e in events if e["type"] == "samples"]
    steps = {e["step"]: e for e in events if e["type"] == "step"}
    if not samples:
        sys.exit(f"bench_demo.py: the run wrote no sample grid: {err.strip()}")
    os.makedirs(args.out, exist_ok=True)
    seed = "the preset's" if args.seed is None else args.seed
    print(f"recipe {args.recipe}, seed {seed}")
    print(f"{'mark':>6} {'grid at':>8} {'step':>6} {'images seen':>12} {'loss_d':>7} {'loss_g':>7}  file")
    for mark in marks:
        best = min(samples, key=lambda e: abs(e["time"] - start - mark * 60))
        target = os.path.join(args.out, f"{args.prefix}-{mark:g}min.png")
        shutil.copyfile(os.path.join(run, best["path"]), target)
        step = steps.get(best["step"], {})
        print(f"{mark:>5g}m {best['time'] - start:>7.0f}s {best['step']:>6} {best['images_seen']:>12} "
              f"{step.get('loss_d', float('nan')):>7.3f} {step.get('loss_g', float('nan')):>7.3f}  {target}")
    if args.score:
        score_marks(args, run, data, start, marks, [e for e in events if e["type"] == "checkpoint"])
    shutil.rmtree(work, ignore_errors=True)


def score_marks(args, run, data, start, marks, checkpoints):
    """Scores the checkpoint nearest each mark against the demo data (1,000 samples, 1,000 scenes)."""
    print(f"{'mark':>6} {'ckpt at':>8} {'images seen':>12} {'SWD e3':>7} {'FID':>7} {'KID':>6} {'prec':>5} {'recall':>6}")
    for mark in marks:
        best = min(checkpoints, key=lambda e: abs(e["time"] - start - mark * 60))
        scored = subprocess.run([args.streetgan, "metrics", "--checkpoint", os.path.join(run, best["path"]),
                                 "--dataroot", data, "--n", "1000", "--n-train", "1000", "--only", "swd,fid,kid,prdc",
                                 "--json", "--device", "cpu"], check=True, capture_output=True, text=True).stdout
        m = json.loads(scored)["metrics"]
        print(f"{mark:>5g}m {best['time'] - start:>7.0f}s {best['images_seen']:>12} {m['swd_e3']:>7.1f} "
              f"{m['fid']:>7.1f} {m['kid']:>6.2f} {m['precision']:>5.2f} {m['recall']:>6.3f}")


def any_sample_past(events_path, seconds):
    start = None
    with open(events_path) as f:
        for line in f:
            if not line.endswith("\n"):
                break
            event = json.loads(line)
            if event["type"] == "run_started" and start is None:
                start = event["time"]
            if event["type"] == "samples" and start is not None and event["time"] - start >= seconds:
                return True
    return False


if __name__ == "__main__":
    main()
