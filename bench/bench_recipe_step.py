#!/usr/bin/env python3
"""What each recipe key costs the training step: `streetgan bench train -t JSON` for the original
recipe and for each key alone (and a combination), alternating the recipes round after round,
REPEATS rounds, on synthetic tensors; prints the median images/s of each, its ratio to the original
recipe's, and every raw result (JSON lines) so that the medians can be checked.

  bench/bench_recipe_step.py --streetgan build/app/cli/streetgan --preset demo --batch 32 --threads 2

--before OLD/streetgan adds a build from before the recipe keys (559db41) as a row of its own,
alternating with the others: the step with every key off against the step as it was.

--presets naive-64:128,modern-64:32 times presets as they are instead (each with its own recipe
and batch), per image: what a preset's recipe costs against another at equal images.

This times our own step only: it says what a key costs, not how we compare with another tool
(bench/bench_train.py does that for the original recipe).

--out FILE appends one JSON line per recipe (bench/bench_record.py): bench "recipe-step", case the
step timed (preset, batch, device, threads; with --presets: the presets at their batches), side
"ours" for the original recipe and "ours, RECIPE" for the others ("ours, preset P at batch B" with
--presets, "ours, the build before the recipe keys" for --before), every round's images/s.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402  (imports neither numpy nor torch)

BEFORE = "original, the build before the recipe keys (--before)"
RECIPES = [
    ("original (bce, batchnorm)", {}),
    ("loss hinge", {"loss": "hinge"}),
    ("loss rpgan", {"loss": "rpgan"}),
    ("lr_d, lr_g", {"lr_d": 0.0004, "lr_g": 0.0001}),
    ("r1_gamma 10 (every step)", {"r1_gamma": 10}),
    ("r1 + r2, reg_every 16", {"r1_gamma": 10, "r2_gamma": 10, "reg_every": 16}),
    ("n_critic 2", {"n_critic": 2}),
    ("d_norm none", {"d_norm": "none"}),
    ("d_norm spectral", {"d_norm": "spectral"}),
    ("R3GAN-like: rpgan, r1 + r2, d_norm none", {"loss": "rpgan", "r1_gamma": 10, "r2_gamma": 10, "d_norm": "none"}),
    ("ema half-life 10000", {"ema": {"half_life_images": 10000}}),
    ("augment.diff color,translation,cutout", {"augment": {"diff": "color,translation,cutout"}}),
    ("ADA bgc at p 0.5", {"augment": {"ada_p": 0.5}}),
    ("modern-64's recipe: rpgan, R1 + R2 every 4 steps, d_norm none, ADA (p from 0), EMA",
     {"loss": "rpgan", "r1_gamma": 1, "r2_gamma": 1, "reg_every": 4, "d_norm": "none",
      "augment": {"ada_target": 0.6, "ada_kimg": 100}, "ema": {"half_life_images": 10000, "rampup": 0.05}}),
]


def run_once(args, recipe, streetgan=None):
    preset, batch = (recipe["preset"], recipe["batch"]) if recipe and "preset" in recipe else (args.preset, args.batch)
    command = [streetgan or args.streetgan, "bench", "train", "--preset", preset, "--batch", str(batch), "--steps",
               str(args.steps), "--threads", str(args.threads), "--device", args.device, "--json"]
    if streetgan is None and not (recipe and "preset" in recipe):  # a build from before the recipe keys has no -t
        command += ["-t", json.dumps(recipe)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--preset", default="demo")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", metavar="STREETGAN",
                        help="a build from before the recipe keys: its original recipe is timed as a row of its own")
    parser.add_argument("--only", default="", help="comma-separated recipe numbers (0 = original)")
    parser.add_argument("--presets", metavar="P:BATCH,...", help="time these presets as they are instead of recipes")
    parser.add_argument("--out", metavar="FILE", help="append one bench_record.py line per recipe")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    recipes = RECIPES if not args.only else [RECIPES[int(i)] for i in args.only.split(",")]
    if args.presets:
        rows = [item.split(":") for item in args.presets.split(",")]
        recipes = [(f"preset {p} at batch {b}", {"preset": p, "batch": int(b)}) for p, b in rows]
    if args.before:
        recipes = [(BEFORE, None)] + recipes
    print(f"# streetgan bench train --preset {args.preset} --batch {args.batch} --steps {args.steps} "
          f"--threads {args.threads} --device {args.device}, {args.repeats} rounds, recipes alternating")
    rates = {name: [] for name, _ in recipes}
    for round_index in range(args.repeats):
        for name, recipe in recipes:
            result = run_once(args, recipe, args.before if recipe is None else None)
            print(json.dumps({"round": round_index, "recipe": name, "keys": recipe, "result": result}), flush=True)
            rates[name].append(result["images_per_s"])
    first = recipes[0][0] if args.presets else RECIPES[0][0]
    base = statistics.median(rates[first]) if first in rates else None
    print(f"\n| recipe | images/s (median of {args.repeats}) | min–max | of the first row's |")
    print("|---|---|---|---|")
    for name, _ in recipes:
        median = statistics.median(rates[name])
        ratio = f"{median / base:.2f}" if base else "—"
        print(f"| {name} | {median:.1f} | {min(rates[name]):.1f}–{max(rates[name]):.1f} | {ratio} |")
    for name, recipe in recipes if args.out else []:
        write_record(args, name, recipe, rates[name])


def side_of(name):
    """The record's side: "ours" for the original recipe, "ours, NAME" for every other row."""
    if name == RECIPES[0][0]:
        return "ours"
    return "ours, the build before the recipe keys" if name == BEFORE else f"ours, {name}"


def write_record(args, name, recipe, runs):
    """One bench_record line for a row: its images/s in the order of the rounds."""
    what = "presets at their batch" if args.presets else f"{args.preset} batch {args.batch}"
    case = f"{what}, {args.steps} steps, {args.device}, {args.threads} threads"
    if args.presets and recipe:
        settings = {"preset": recipe["preset"], "batch": recipe["batch"]}
    else:  # keys null: the build before the recipe keys, run without -t
        settings = {"preset": args.preset, "batch": args.batch, "keys": recipe}
    settings.update(steps=args.steps, threads=args.threads, device=args.device, rounds=args.repeats)
    bench_record.write(args.out, bench="recipe-step", case=case, side=side_of(name), runs=runs, unit="img/s",
                       better="higher", settings=settings, streetgan=args.before if recipe is None else args.streetgan)


if __name__ == "__main__":
    sys.exit(main())
