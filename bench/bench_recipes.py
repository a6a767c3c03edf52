#!/usr/bin/env python3
"""What each recipe gains: trains the original recipe, each technique alone and the candidate
modern recipes for the same number of images on real photographs (640x480 crops of opencv-doc's
photographs, bench/make_corpus.py) and on the demo street scenes, SEEDS seeds each, then scores
every run's last checkpoint with `streetgan metrics` (SWD, FID and KID in our feature space,
precision/recall, copy rate) against its training images. Prints, per data set, each recipe's
medians with their spread (min-max) and seconds per 1,000 images, and writes every run's raw
result as one JSON line to --out (kept under bench/results/).

  /usr/bin/python3 bench/bench_recipes.py --streetgan build/app/cli/streetgan --work /tmp/recipes \\
      --images 10000 --seeds 1,2,3 --out bench/results/recipes-DATE.jsonl

Recipes run one after another, seed by seed (each seed's recipes in turn), on the preset `demo`
networks (nz 64, ngf 32, ndf 32, batch 32) so that a run takes about a minute on 2 cores; --preset
trains on another preset's networks (and with a modern preset's recipe): `--preset modern-64
--only 0` is the modern-64 preset as it is, `--preset naive-64 --only 0` the original recipe on the
same networks.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

RECIPES = [
    ("original", {}),
    ("hinge", {"loss": "hinge"}),
    ("spectral D, hinge", {"loss": "hinge", "d_norm": "spectral"}),
    ("rpgan + R1 + R2, D without norm", {"loss": "rpgan", "r1_gamma": 1, "r2_gamma": 1, "d_norm": "none"}),
    ("TTUR (lr_d 4e-4, lr_g 1e-4)", {"lr_d": 0.0004, "lr_g": 0.0001}),
    ("EMA of G", {"ema": {"half_life_images": 2000, "rampup": 0.05}}),
    ("DiffAugment", {"augment": {"diff": "color,translation,cutout"}}),
    ("ADA", {"augment": {"ada_target": 0.6, "ada_kimg": 100}}),
    ("modern: spectral hinge + DiffAugment + EMA",
     {"loss": "hinge", "d_norm": "spectral", "augment": {"diff": "color,translation,cutout"},
      "ema": {"half_life_images": 2000, "rampup": 0.05}}),
    ("modern: spectral hinge + ADA + EMA",
     {"loss": "hinge", "d_norm": "spectral", "augment": {"ada_target": 0.6, "ada_kimg": 100},
      "ema": {"half_life_images": 2000, "rampup": 0.05}}),
    ("modern: rpgan + lazy R1 + R2 + EMA",
     {"loss": "rpgan", "r1_gamma": 1, "r2_gamma": 1, "reg_every": 4, "d_norm": "none",
      "ema": {"half_life_images": 10000, "rampup": 0.05}}),
    ("modern: rpgan + lazy R1 + R2 + DiffAugment + EMA",
     {"loss": "rpgan", "r1_gamma": 1, "r2_gamma": 1, "reg_every": 4, "d_norm": "none",
      "augment": {"diff": "color,translation,cutout"}, "ema": {"half_life_images": 10000, "rampup": 0.05}}),
    ("modern: rpgan + lazy R1 + R2 + ADA + EMA",
     {"loss": "rpgan", "r1_gamma": 1, "r2_gamma": 1, "reg_every": 4, "d_norm": "none",
      "augment": {"ada_target": 0.6, "ada_kimg": 100}, "ema": {"half_life_images": 10000, "rampup": 0.05}}),
    ("ADA + TTUR", {"lr_d": 0.0004, "lr_g": 0.0001, "augment": {"ada_target": 0.6, "ada_kimg": 100}}),
    ("ADA + TTUR + EMA",
     {"lr_d": 0.0004, "lr_g": 0.0001, "augment": {"ada_target": 0.6, "ada_kimg": 100},
      "ema": {"half_life_images": 10000, "rampup": 0.05}}),
    ("hinge + TTUR + EMA",
     {"loss": "hinge", "lr_d": 0.0004, "lr_g": 0.0001, "ema": {"half_life_images": 10000, "rampup": 0.05}}),
    ("batch 32", {"batch_size": 32}),
    ("R1, R2 gamma 0.1", {"r1_gamma": 0.1, "r2_gamma": 0.1}),
    ("TTUR (lr_d 4e-4, lr_g 1e-4) on top", {"lr_d": 0.0004, "lr_g": 0.0001}),
    ("Adam betas 0, 0.99 (R3GAN's) on top", {"beta1": 0, "beta2": 0.99}),
]
FIGURES = ["swd_e3", "fid", "kid", "precision", "recall", "copy_rate"]


def data_sets(args):
    """The training folders: real photographs (cut once) and the demo scenes (rendered once)."""
    photos, demo = os.path.join(args.work, "photos"), os.path.join(args.work, "demo")
    if not os.path.isdir(os.path.join(photos, "train_val")):
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "make_corpus.py"), photos,
                        "--count", str(args.photos)], check=True)
    if not os.path.isdir(os.path.join(demo, "train_val")):
        subprocess.run([args.streetgan, "demo-data", "--out", demo], check=True, capture_output=True)
    return [("photographs", photos, args.photos), ("demo scenes", demo, 1000)]


def train_and_score(args, data, root, size, recipe_name, recipe, seed):
    run = os.path.join(args.work, "runs", f"{data}-{args.preset}-{args.images}-{recipe_name}-{seed}".replace(" ", "_").replace(",", "")
                       .replace(":", "").replace("(", "").replace(")", "").replace("+", "p"))
    epochs = max(1, math.ceil(args.images / size))
    command = [args.streetgan, "train", "--dataroot", root, "--run-dir", run, "--preset", args.preset, "--seed", str(seed),
               "--epochs", str(epochs), "--threads", str(args.threads), "--device", "cpu", "-t", json.dumps(recipe),
               "-c", json.dumps({"save_frequency": epochs, "log_frequency": 100000})]
    started = time.monotonic()
    subprocess.run(command, check=True, capture_output=True)
    seconds = time.monotonic() - started
    scored = subprocess.run([args.streetgan, "metrics", "--checkpoint", run, "--n", str(args.samples), "--n-train",
                             str(min(size, args.samples)), "--only", "swd,fid,kid,prdc,memorisation", "--json",
                             "--threads", str(args.threads), "--device", "cpu"],
                            check=True, capture_output=True, text=True).stdout
    result = json.loads(scored)
    return {"data": data, "preset": args.preset, "recipe": recipe_name, "keys": recipe, "seed": seed, "images": epochs * size,
            "train_seconds": seconds, "seconds_per_1000_images": 1000 * seconds / (epochs * size),
            "generator": result.get("generator"), "metrics": result["metrics"], "alarms": result.get("alarms", [])}


def summary(results):
    names = [name for name, _ in RECIPES] + sorted({r["recipe"] for r in results} - {n for n, _ in RECIPES})
    for data, preset, images in sorted({(r["data"], r.get("preset", "demo"), r["images"]) for r in results}):
        print(f"\n### {data}, preset {preset}, {images} images\n")
        print("| recipe | runs | " + " | ".join(FIGURES) + " | s / 1k images |")
        print("|---|---|" + "---|" * (len(FIGURES) + 1))
        for name in names:
            rows = [r for r in results if (r["data"], r.get("preset", "demo"), r["images"], r["recipe"]) ==
                    (data, preset, images, name)]
            if not rows:
                continue
            cells = []
            for figure in FIGURES + ["seconds_per_1000_images"]:
                values = [r["metrics"].get(figure) if figure in FIGURES else r[figure] for r in rows]
                values = [v for v in values if isinstance(v, (int, float))]
                cells.append(f"{statistics.median(values):.3g} ({min(values):.3g}–{max(values):.3g})" if values else "—")
            print(f"| {name} | {len(rows)} | " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--work", default="/tmp/streetgan-recipes")
    parser.add_argument("--images", type=int, default=10000, help="training images per run")
    parser.add_argument("--photos", type=int, default=600, help="crops in the photograph set (small on purpose)")
    parser.add_argument("--samples", type=int, default=1000, help="samples and training images scored")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--preset", default="demo", help="the networks (and a modern preset's recipe) each recipe starts from")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated recipe numbers (0 = original)")
    parser.add_argument("--data", choices=["both", "photographs", "demo scenes"], default="both",
                        help="which data set to train on")
    parser.add_argument("--out", help="JSON lines file of the raw results (appended)")
    parser.add_argument("--summarise", metavar="FILE", help="print the tables of a results file and stop")
    args = parser.parse_args()
    if args.summarise:
        with open(args.summarise) as results:
            summary([json.loads(line) for line in results if line.strip()])
        return
    if not args.out:
        parser.error("--out FILE is needed to train")
    recipes = RECIPES if not args.only else [RECIPES[int(i)] for i in args.only.split(",")]
    results = []
    with open(args.out, "a") as out:
        for seed in [int(s) for s in args.seeds.split(",")]:
            for data, root, size in data_sets(args):
                if args.data not in ("both", data):
                    continue
                for name, recipe in recipes:
                    if args.preset != "demo" and not recipe:
                        name = f"preset {args.preset}"
                    result = train_and_score(args, data, root, size, name, recipe, seed)
                    out.write(json.dumps(result) + "\n")
                    out.flush()
                    print(json.dumps(result), flush=True)
                    results.append(result)
    summary(results)


if __name__ == "__main__":
    main()
