#!/usr/bin/python3
"""Quality metrics' speed: `streetgan bench metrics` beside the tuned reference a researcher would
run today (bench/vectorised_image_metrics_reference.py and
bench/vectorised_feature_metrics_reference.py), the same work on the same inputs.

Writes the inputs once (smooth random street-like images, seeded; raw float32 in a folder), then
runs ours and the reference REPEATS times each, alternating (ours, reference, ours, ...), and prints
each metric's median seconds, the ratio (reference / ours: above 1 means ours is faster) and the
figures each side computed, so that a reader sees they computed the same thing. Ours is the whole
QualitySuite under its default options and the exact nearest-neighbour search (NN_QUERIES rows
against NN_TRAIN rows of 3072 values), as `streetgan bench metrics --json` reports them.

  bench/bench_metrics.py --streetgan build/app/cli/streetgan [--n 10000 --n-train 10000] \\
      [--threads 2] [--repeats 3] [--out bench/results/metrics.jsonl] [--oracle]

The reference (numpy, scipy and torch on the CPU, float32, vectorised; the two modules' docstrings
say how each metric is computed) does what ours does: the same patch counts, levels and directions
(SWD), pairs (MS-SSIM), bins and Lloyd iterations (NDB), 32 px rows and 256 components (PCA), KID
subsets, PRDC's k and the memorisation check's queries. It draws its random parts itself, so its
figures agree with ours as follows (measured at 1,000 + 1,000 images, 5 seeds of the reference):
  - swd_e3 and its levels, msssim_*, ndb, jsd and spread_ratio within the noise of the draws (patch
    positions and directions, pairs, k-means++ centres, the spread's queries): the reference's own
    spread over seeds (std) was 2% of swd_e3, 0.002 to 0.004 in msssim_*, 3 bins of ndb, 12% of
    jsd and 0.003 in spread_ratio;
  - fid, precision, recall, density, coverage, copy_rate and nn_ratio_median come from the same
    features or rows with no draw (every training image is measured up to 10,000): equal to
    float32 rounding (fid within 1e-6 relative; a row exactly on a ball's or the threshold's edge
    could flip);
  - kid equal to rounding while one subset holds every row (n ≤ 1000), beyond that within the
    subsets' noise (a few kid_std/10); at n ≤ 1000 kid_std is rounding noise (1e-15) on both sides;
  - the nearest-neighbour search finds the same first 20 rows.

Thread counts are set (bench_record.set_threads) before numpy, scipy or torch are imported: they
read them when they load, so every heavy import here is inside the function that needs it.

--oracle adds the tool replaced: the slow suite this script timed before (the test oracles of
tests/core/reference in float64 with per-patch and per-pair loops, scipy's kmeans2, an SVD,
sqrtm and cdist) and a per-query numpy brute force for the search, on the first ORACLE_REPEATS
rounds only (at the full size it takes about 18 minutes).

Results: one JSON line per metric and side (bench_record.write) appended to --out: cases swd, msssim,
ndb, features, fid, kid, prdc, memorisation, suite and nearest; sides "ours", "reference: numpy
float32 vectorised" or "reference: torch float32" (ENGINES), and with --oracle
"the tool replaced"; value holds that side's figures from its last run.

Reference only: numpy, scipy and torch are never runtime dependencies of StreetGAN.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import bench_record

METRICS = ["swd", "msssim", "ndb", "features", "fid", "kid", "prdc", "memorisation"]
ORACLE_SIDE = "the tool replaced: test oracles (float64 loops, kmeans2, SVD, sqrtm, cdist)"
# What computes each metric in the reference (vectorised_*_metrics_reference.py), for its name in the results.
ENGINES = {"swd": "numpy", "msssim": "numpy", "ndb": "numpy", "features": "numpy", "fid": "numpy",
           "kid": "numpy", "prdc": "torch", "memorisation": "torch", "nearest": "torch"}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--n", type=int, default=10000, help="samples (default 10000)")
    parser.add_argument("--n-train", type=int, default=10000, help="training images (default 10000)")
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--nn-train", type=int, default=100000, help="rows searched (default 100000)")
    parser.add_argument("--nn-queries", type=int, default=100, help="queries searched (default 100)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each side, alternating (default 3)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0, help="the reference's random draws (default 0)")
    parser.add_argument("--out", help="append the results here (JSON lines, bench_record)")
    parser.add_argument("--oracle", action="store_true", help="also time the slow oracle suite it replaced")
    parser.add_argument("--oracle-repeats", type=int, default=1, help="oracle runs with --oracle (default 1)")
    return parser.parse_args()


def smooth_images(n, size, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    y = np.linspace(0, 1, size).reshape(1, 1, size, 1)
    x = np.linspace(0, 1, size).reshape(1, 1, 1, size)
    images = np.zeros((n, 3, size, size), np.float32)
    for _ in range(4):
        fy, fx = rng.random((n, 3, 1, 1)) * 6, rng.random((n, 3, 1, 1)) * 6
        phase = rng.random((n, 3, 1, 1)) * 6.283
        images += (0.3 * np.cos(fy * y * np.pi + fx * x * np.pi + phase)).astype(np.float32)
    horizon = rng.random((n, 1, 1, 1)) * 0.5 + 0.25
    images += (0.4 * (y > horizon) - 0.2).astype(np.float32)
    images += (rng.standard_normal(images.shape) * 0.05).astype(np.float32)
    return np.clip(images, -1, 1)


def write_inputs(folder, args):
    """The images and the search's rows, written for ours (raw float32 and meta.json) and returned."""
    arrays = {"samples": smooth_images(args.n, args.size, 1), "train": smooth_images(args.n_train, args.size, 2),
              "nn_reference": smooth_images(args.nn_train, 32, 3).reshape(args.nn_train, -1),
              "nn_queries": smooth_images(args.nn_queries, 32, 4).reshape(args.nn_queries, -1)}
    for name, array in arrays.items():
        array.astype("<f4").tofile(os.path.join(folder, name + ".f32"))
    with open(os.path.join(folder, "meta.json"), "w") as meta:
        json.dump({name: list(array.shape) for name, array in arrays.items()}, meta)
    return arrays


def run_ours(args, folder):
    """One `streetgan bench metrics` run: seconds per case, ours' figures and the search's first rows."""
    command = [args.streetgan, "bench", "metrics", "--inputs", folder, "--json", "--threads", str(args.threads)]
    report = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    return {"seconds": dict(report["seconds"], suite=report["suite_seconds"], nearest=report["nn_seconds"]),
            "metrics": report["metrics"], "nearest": report["nn_first_indices"]}


def run_reference(inputs, seed):
    """One run of the tuned reference: seconds per case, figures per metric, the search's first rows."""
    import numpy as np
    import vectorised_feature_metrics_reference as feature_metrics
    import vectorised_image_metrics_reference as image_metrics
    seconds, figures = {}, {}

    def timed(metric, compute):
        start = time.perf_counter()
        result = compute(np.random.default_rng(seed))
        seconds[metric] = time.perf_counter() - start
        return result

    samples, train = inputs["samples"], inputs["train"]
    figures["swd"] = timed("swd", lambda rng: image_metrics.sliced_wasserstein(train, samples, rng))
    figures["msssim"] = timed("msssim", lambda rng: image_metrics.diversity(samples, train, rng))
    figures["ndb"] = timed("ndb", lambda rng: image_metrics.ndb_jsd(samples, train, rng))
    real, fake = timed("features", lambda rng: feature_metrics.pixel_pca(train, samples))
    figures["fid"] = timed("fid", lambda rng: feature_metrics.fid(real, fake))
    figures["kid"] = timed("kid", lambda rng: feature_metrics.kid(real, fake, rng))
    figures["prdc"] = timed("prdc", lambda rng: feature_metrics.prdc(real, fake))
    figures["memorisation"] = timed("memorisation", lambda rng: feature_metrics.memorisation(samples, train, rng))
    seconds["suite"] = sum(seconds.values())
    found = timed("nearest", lambda rng: feature_metrics.nearest_indices(inputs["nn_queries"],
                                                                          inputs["nn_reference"]))
    return {"seconds": seconds, "figures": figures, "nearest": found[:20].tolist()}


def run_oracle(inputs, seed):
    """One run of the slow suite this benchmark timed before (float64 test oracles, scipy) and a
    per-query numpy brute force for the search: seconds per case."""
    import numpy as np
    import scipy.cluster.vq
    import scipy.spatial.distance
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "core", "reference"))
    import feature_metrics_reference as feature_ref
    import image_rows
    import ms_ssim_reference as ms_ssim_ref
    import sliced_wasserstein_reference as swd_ref

    samples, train = inputs["samples"], inputs["train"]
    seconds = {}
    rng = np.random.default_rng(seed)

    start = time.perf_counter()  # SWD: Karras' pyramid, 128 patches per image and level, 512 directions
    levels = swd_ref.resolutions(samples.shape[2], 16)
    n = min(len(samples), len(train))  # the first n of the larger set: equal counts, as ours subsamples
    pyr_a = swd_ref.laplacian_pyramid(train[:n].astype(np.float64), len(levels))
    pyr_b = swd_ref.laplacian_pyramid(samples[:n].astype(np.float64), len(levels))
    for level_a, level_b in zip(pyr_a, pyr_b):
        size = level_a.shape[2]
        descs = []
        for level in (level_a, level_b):
            positions = np.stack([np.repeat(np.arange(n), 128), rng.integers(3, size - 3, n * 128),
                                  rng.integers(3, size - 3, n * 128)], axis=1)
            descs.append(swd_ref.normalise(swd_ref.descriptors(level, positions, 7)))
        for _ in range(4):
            swd_ref.sliced_wasserstein(descs[0], descs[1], rng.standard_normal((descs[0].shape[1], 128)))
    seconds["swd"] = time.perf_counter() - start

    start = time.perf_counter()  # MS-SSIM diversity: 1000 pairs of samples, 1000 of training images
    for images in (samples, train):
        for i, j in rng.integers(0, len(images), (1000, 2)):
            ms_ssim_ref.ms_ssim(images[i].astype(np.float64), images[j].astype(np.float64), 3)
    seconds["msssim"] = time.perf_counter() - start

    start = time.perf_counter()  # NDB/JSD: k-means (100 bins) on 16x16 training rows
    train16, samples16 = (image_rows.downsample(x.astype(np.float64), 16) for x in (train, samples))
    centres, _ = scipy.cluster.vq.kmeans2(train16, 100, iter=100, minit="++", seed=seed)
    scipy.cluster.vq.vq(train16, centres)
    scipy.cluster.vq.vq(samples16, centres)
    seconds["ndb"] = time.perf_counter() - start

    start = time.perf_counter()  # the pixel feature space: 32x32 rows, PCA to 256 by SVD
    train32, samples32 = (image_rows.downsample(x.astype(np.float64), 32) for x in (train, samples))
    mean = train32.mean(0)
    _, _, vt = np.linalg.svd(train32 - mean, full_matrices=False)
    real, fake = (train32 - mean) @ vt[:256].T, (samples32 - mean) @ vt[:256].T
    seconds["features"] = time.perf_counter() - start

    start = time.perf_counter()
    feature_ref.fid(real, fake)
    seconds["fid"] = time.perf_counter() - start
    start = time.perf_counter()
    subsets_r = np.stack([rng.permutation(len(real))[:1000] for _ in range(100)])
    subsets_f = np.stack([rng.permutation(len(fake))[:1000] for _ in range(100)])
    feature_ref.kid(real, fake, subsets_r, subsets_f)
    seconds["kid"] = time.perf_counter() - start
    start = time.perf_counter()
    feature_ref.prdc(real, fake, 5)
    seconds["prdc"] = time.perf_counter() - start

    start = time.perf_counter()  # memorisation: every sample's nearest training image, and training's own
    scipy.spatial.distance.cdist(samples32, train32).min(axis=1)
    own = scipy.spatial.distance.cdist(train32, train32)
    np.fill_diagonal(own, np.inf)
    np.percentile(own.min(axis=1), 1)
    seconds["memorisation"] = time.perf_counter() - start
    seconds["suite"] = sum(seconds.values())

    start = time.perf_counter()
    for q in inputs["nn_queries"]:
        np.argmin(((inputs["nn_reference"] - q) ** 2).sum(1))
    seconds["nearest"] = time.perf_counter() - start
    return {"seconds": seconds}


def reference_side(case):
    """The reference's name in the results: what computes `case` (ENGINES)."""
    if case == "suite":
        return "reference: numpy and torch float32 vectorised"
    return "reference: numpy float32 vectorised" if ENGINES[case] == "numpy" else "reference: torch float32"


def figures_of(case, ours, reference):
    """The figures of `case` from each side's last run ({name: value}), or None for both."""
    if case == "nearest":
        return {"first_indices": ours[-1]["nearest"]}, {"first_indices": reference[-1]["nearest"]}
    theirs = reference[-1]["figures"].get(case)
    if theirs is None:
        return None, None
    return {name: ours[-1]["metrics"].get(name) for name in theirs}, theirs


def report(args, ours, reference, oracle):
    """Appends the records to args.out and prints the table."""
    med = statistics.median
    settings = {"n": args.n, "n_train": args.n_train, "size": args.size, "threads": args.threads,
                "nn_train": args.nn_train, "nn_queries": args.nn_queries, "reference_seed": args.seed}
    print(f"{args.n} samples against {args.n_train} training images of {args.size} px, {args.threads} "
          f"thread{'s' if args.threads != 1 else ''}; "
          f"medians of {args.repeats} run{'s' if args.repeats != 1 else ''} of each side, alternating" +
          (f"; the tool replaced: {len(oracle)} run(s)" if oracle else ""))
    print(f"{'metric':<13} {'ours s':>8} {'reference s':>11} {'ratio':>6}" +
          (f" {'replaced s':>10} {'ratio':>6}" if oracle else "") + f"  {'figure':<16} {'ours':>12} {'reference':>12}")
    for case in METRICS + ["suite", "nearest"]:
        sides = {"ours": ours, reference_side(case): reference}
        if oracle:
            sides[ORACLE_SIDE] = oracle
        ours_figures, reference_figures = figures_of(case, ours, reference)
        values = {"ours": ours_figures, reference_side(case): reference_figures}
        medians = {}
        for side, runs in sides.items():
            seconds = [run["seconds"][case] for run in runs]
            medians[side] = med(seconds)
            bench_record.write(args.out, bench="metrics", case=case, side=side, runs=seconds, unit="s",
                               better="lower", settings=settings, streetgan=args.streetgan, value=values.get(side))
        o, r = medians["ours"], medians[reference_side(case)]
        line = f"{case:<13} {o:>8.2f} {r:>11.2f} {r / o:>6.1f}"
        if oracle:
            line += f" {medians[ORACLE_SIDE]:>10.2f} {medians[ORACLE_SIDE] / o:>6.1f}"
        rows = figure_rows(case, ours_figures, reference_figures) or [""]
        print(line + rows[0])
        for row in rows[1:]:
            print(" " * len(line) + row)


def figure_rows(case, ours_figures, reference_figures):
    """One row per figure of `case`: its name, ours' value and the reference's; none without figures."""
    if ours_figures is None:
        return []
    if case == "nearest":
        same = sum(a == b for a, b in zip(ours_figures["first_indices"], reference_figures["first_indices"]))
        return [f"  {'first rows same':<16} {same:>12d} {len(ours_figures['first_indices']):>12d}"]
    return [f"  {name:<16} {number(ours_figures[name]):>12} {number(value):>12}"
            for name, value in reference_figures.items()]


def number(value):
    return "-" if value is None else f"{value:.6g}"


def main():
    args = parse_args()
    bench_record.set_threads(args.threads)
    import torch
    torch.set_num_threads(args.threads)
    ours, reference, oracle = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        inputs = write_inputs(folder, args)
        for rep in range(args.repeats):
            ours.append(run_ours(args, folder))
            reference.append(run_reference(inputs, args.seed))
            print(f"run {rep + 1}: suite ours {ours[-1]['seconds']['suite']:.2f} s, reference "
                  f"{reference[-1]['seconds']['suite']:.2f} s; nearest neighbours ours "
                  f"{ours[-1]['seconds']['nearest']:.3f} s, reference {reference[-1]['seconds']['nearest']:.3f} s",
                  file=sys.stderr)
            if args.oracle and rep < args.oracle_repeats:
                oracle.append(run_oracle(inputs, args.seed))
                print(f"run {rep + 1}: the tool replaced: suite {oracle[-1]['seconds']['suite']:.1f} s, "
                      f"nearest neighbours {oracle[-1]['seconds']['nearest']:.1f} s", file=sys.stderr)
    report(args, ours, reference, oracle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
