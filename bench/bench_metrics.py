#!/usr/bin/python3
"""Quality metrics' speed: `streetgan bench metrics` beside a numpy/scipy reference, same inputs.

Writes the inputs once (smooth random street-like images, seeded; raw float32 in a folder), runs
`streetgan bench metrics --inputs DIR` REPEATS times and the reference suite REFERENCE_REPEATS
times on the same numbers, and prints per-metric seconds, the medians and the ratios (reference /
streetgan: above 1 means ours is faster). The reference is what a researcher's notebook does with
numpy and scipy: Karras et al.'s SWD code path (tests/core/reference), MS-SSIM as tf computes it,
scipy's k-means for NDB, PCA by SVD, FID with scipy.linalg.sqrtm, KID and PRDC with numpy and
scipy.spatial.distance.cdist, and the memorisation check with cdist. The nearest-neighbour part
times one query set against NN_TRAIN rows of 3072 values: a per-query numpy brute force
(((R - q) ** 2).sum(1)) and the matrix-product form (‖r‖² − 2·q·r) beside ours.

  bench/bench_metrics.py --streetgan build/app/cli/streetgan [--n 10000 --n-train 10000]

Reference only: numpy and scipy are never runtime dependencies of StreetGAN.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.cluster.vq
import scipy.linalg
import scipy.spatial.distance

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "core", "reference"))
import feature_metrics_reference as feature_ref  # noqa: E402
import image_rows  # noqa: E402
import ms_ssim_reference as ms_ssim_ref  # noqa: E402
import sliced_wasserstein_reference as swd_ref  # noqa: E402


def smooth_images(n, size, seed):
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


def block_mean(images, size):
    return image_rows.downsample(images.astype(np.float64), size)


def reference_suite(samples, train, seed=0):
    seconds = {}
    rng = np.random.default_rng(seed)

    start = time.perf_counter()  # SWD: Karras' pyramid, 128 patches per image and level, 512 directions
    levels = swd_ref.resolutions(samples.shape[2], 16)
    pyr_a = swd_ref.laplacian_pyramid(train.astype(np.float64), len(levels))
    pyr_b = swd_ref.laplacian_pyramid(samples.astype(np.float64), len(levels))
    for level_a, level_b in zip(pyr_a, pyr_b):
        size = level_a.shape[2]
        descs = []
        for level in (level_a, level_b):
            n = level.shape[0]
            positions = np.stack([np.repeat(np.arange(n), 128), rng.integers(3, size - 3, n * 128),
                                  rng.integers(3, size - 3, n * 128)], axis=1)
            descs.append(swd_ref.normalise(swd_ref.descriptors(level, positions, 7)))
        for _ in range(4):
            swd_ref.sliced_wasserstein(descs[0], descs[1], rng.standard_normal((descs[0].shape[1], 128)))
    seconds["swd"] = time.perf_counter() - start

    start = time.perf_counter()  # MS-SSIM diversity: 1000 pairs of samples, 1000 of training images
    for images in (samples, train):
        pairs = rng.integers(0, len(images), (1000, 2))
        for i, j in pairs:
            ms_ssim_ref.ms_ssim(images[i].astype(np.float64), images[j].astype(np.float64), 3)
    seconds["msssim"] = time.perf_counter() - start

    start = time.perf_counter()  # NDB/JSD: k-means (100 bins) on 16x16 training rows
    train16, samples16 = block_mean(train, 16), block_mean(samples, 16)
    centres, _ = scipy.cluster.vq.kmeans2(train16, 100, iter=100, minit="++", seed=seed)
    scipy.cluster.vq.vq(train16, centres)
    scipy.cluster.vq.vq(samples16, centres)
    seconds["ndb"] = time.perf_counter() - start

    start = time.perf_counter()  # the pixel feature space: 32x32 rows, PCA to 256 by SVD
    train32, samples32 = block_mean(train, 32), block_mean(samples, 32)
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
    distances = scipy.spatial.distance.cdist(samples32, train32)
    distances.min(axis=1)
    own = scipy.spatial.distance.cdist(train32, train32)
    np.fill_diagonal(own, np.inf)
    np.percentile(own.min(axis=1), 1)
    seconds["memorisation"] = time.perf_counter() - start
    return seconds


def reference_nearest(queries, reference):
    start = time.perf_counter()
    for q in queries:
        np.argmin(((reference - q) ** 2).sum(1))
    brute = time.perf_counter() - start
    start = time.perf_counter()
    norms = (reference.astype(np.float64) ** 2).sum(1)
    for begin in range(0, len(queries), 256):
        block = queries[begin:begin + 256].astype(np.float64)
        np.argmin(norms[None, :] - 2 * block @ reference.T.astype(np.float64), axis=1)
    product = time.perf_counter() - start
    return brute, product


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--n", type=int, default=10000, help="samples (default 10000)")
    parser.add_argument("--n-train", type=int, default=10000, help="training images (default 10000)")
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--nn-train", type=int, default=100000, help="rows searched (default 100000)")
    parser.add_argument("--nn-queries", type=int, default=100, help="queries searched (default 100)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reference-repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        samples = smooth_images(args.n, args.size, 1)
        train = smooth_images(args.n_train, args.size, 2)
        nn_reference = block_mean(smooth_images(args.nn_train, 32, 3), 32).astype(np.float32)
        nn_queries = block_mean(smooth_images(args.nn_queries, 32, 4), 32).astype(np.float32)
        for name, array in (("samples", samples), ("train", train), ("nn_reference", nn_reference),
                            ("nn_queries", nn_queries)):
            array.astype("<f4").tofile(os.path.join(folder, name + ".f32"))
        with open(os.path.join(folder, "meta.json"), "w") as meta:
            json.dump({"samples": list(samples.shape), "train": list(train.shape),
                       "nn_reference": list(nn_reference.shape), "nn_queries": list(nn_queries.shape)}, meta)

        ours = []
        for rep in range(args.repeats):
            out = subprocess.run([args.streetgan, "bench", "metrics", "--inputs", folder, "--json", "--threads",
                                  str(args.threads)], check=True, capture_output=True, text=True).stdout
            ours.append(json.loads(out))
            print(f"streetgan run {rep + 1}: suite {ours[-1]['suite_seconds']:.1f} s, "
                  f"nearest neighbours {ours[-1]['nn_seconds']:.2f} s", file=sys.stderr)
        references, nearest = [], []
        os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
        for rep in range(args.reference_repeats):
            start = time.perf_counter()
            references.append(reference_suite(samples, train))
            references[-1]["total"] = time.perf_counter() - start
            nearest.append(reference_nearest(nn_queries, nn_reference))
            print(f"reference run {rep + 1}: suite {references[-1]['total']:.1f} s, nearest neighbours "
                  f"{nearest[-1][0]:.1f} s brute force, {nearest[-1][1]:.1f} s matrix product", file=sys.stderr)

    med = statistics.median
    print(f"{args.n} samples against {args.n_train} training images of {args.size} px, {args.threads} threads; "
          f"medians of {args.repeats} (streetgan) and {args.reference_repeats} (reference) runs")
    print(f"{'metric':<14} {'streetgan s':>11} {'reference s':>11} {'ratio':>7}")
    for metric in ["swd", "msssim", "ndb", "features", "fid", "kid", "prdc", "memorisation"]:
        o = med([r["seconds"].get(metric, float("nan")) for r in ours])
        r = med([r[metric] for r in references])
        print(f"{metric:<14} {o:>11.2f} {r:>11.2f} {r / o:>7.1f}")
    o, r = med([x["suite_seconds"] for x in ours]), med([x["total"] for x in references])
    print(f"{'whole suite':<14} {o:>11.2f} {r:>11.2f} {r / o:>7.1f}")
    o = med([x["nn_seconds"] for x in ours])
    brute, product = med([x[0] for x in nearest]), med([x[1] for x in nearest])
    print(f"nearest neighbour, {args.nn_queries} queries over {args.nn_train} rows of 3072: streetgan {o:.2f} s, "
          f"numpy brute force {brute:.2f} s ({brute / o:.1f}x), numpy matrix product {product:.2f} s ({product / o:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
