#!/usr/bin/python3
"""Parzen estimator benchmark: `streetgan parzen` against the reference algorithm as the original
tool ran it (per σ, per batch of points, broadcasting x[:,None,:] - mu[None,:,:], in numpy), side
by side on the same images, then streetgan alone at the full size from a checkpoint.

Usage: /usr/bin/python3 bench/bench_parzen.py --streetgan build/app/cli/streetgan --corpus DIR
       [--checkpoint FILE] [--repeats 3]
The small case: 1,000 samples, 200 validation + 200 test images, 32x32 RGB (d = 3072), the
default σ grid; images are 32x32 cuts of the corpus written as PNG (so both sides read the same
pixels). The full case (with --checkpoint): 10,000 samples of the checkpoint's generator,
1,000 + 1,000 held-out corpus images at 64x64 (d = 12,288).
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
from PIL import Image


def write_split(paths, folder, size):
    os.makedirs(folder)
    for i, path in enumerate(paths):
        Image.open(path).convert("RGB").resize((size, size), Image.BILINEAR).save(os.path.join(folder, f"{i:05d}.png"))


def load_split(folder):
    files = sorted(glob.glob(os.path.join(folder, "*.png")))
    # channel-first flattening, x = pixel/127.5 - 1, as streetgan does
    return np.stack([np.asarray(Image.open(f), dtype=np.float64).transpose(2, 0, 1).reshape(-1) / 127.5 - 1 for f in files])


def reference_ll(mu, x, sigma, batch=10):
    """The original notebook's estimator: per σ, per batch of points, full broadcast."""
    out = []
    n, d = mu.shape[0], mu.shape[1]
    for i in range(0, x.shape[0], batch):
        a = (x[i:i + batch, None, :] - mu[None, :, :]) / sigma
        t = -0.5 * (a ** 2).sum(2)
        m = t.max(1, keepdims=True)
        out.append((m + np.log(np.exp(t - m).sum(1, keepdims=True))).ravel() - np.log(n) - d * np.log(sigma * np.sqrt(2 * np.pi)))
    return np.concatenate(out)


def reference(mu, valid, test, sigmas):
    curve = [reference_ll(mu, valid, s).mean() for s in sigmas]
    best = sigmas[int(np.argmax(curve))]
    ll = reference_ll(mu, test, best)
    return best, ll.mean(), ll.std(ddof=1) / np.sqrt(len(ll))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--checkpoint")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    images = sorted(glob.glob(os.path.join(args.corpus, "train_val", "*", "database", "images", "*.jpg")))
    sigmas = list(np.logspace(-1, 0, 10))
    with tempfile.TemporaryDirectory() as tmp:
        for name, start, count in (("samples", 0, 1000), ("valid", 1000, 200), ("test", 1200, 200)):
            write_split(images[start:start + count], os.path.join(tmp, name), 32)
        mu, valid, test = (load_split(os.path.join(tmp, n)) for n in ("samples", "valid", "test"))
        ours_s, ref_s, ours_result, ref_result = [], [], None, None
        for _ in range(args.repeats):
            t = time.perf_counter()
            ref_result = reference(mu, valid, test, sigmas)
            ref_s.append(time.perf_counter() - t)
            out = subprocess.run([args.streetgan, "parzen", "--samples", os.path.join(tmp, "samples"),
                                  "--valid", os.path.join(tmp, "valid"), "--test", os.path.join(tmp, "test"),
                                  "--img-size", "32", "--json"], check=True, capture_output=True, text=True).stdout
            ours_result = json.loads(out)
            ours_s.append(ours_result["seconds"]["estimator"])
        print(f"small case: N 1000, 200 valid + 200 test, d 3072, 10 sigmas; medians of {args.repeats} runs")
        print(f"{'':<22} {'seconds':>9} {'sigma':>8} {'test mean LL':>14} {'stderr':>8}")
        r_sigma, r_mean, r_err = ref_result
        print(f"{'reference (numpy)':<22} {statistics.median(ref_s):>9.2f} {r_sigma:>8.4f} {r_mean:>14.4f} {r_err:>8.4f}")
        print(f"{'streetgan':<22} {statistics.median(ours_s):>9.2f} {ours_result['sigma']:>8.4f} "
              f"{ours_result['mean_ll']:>14.4f} {ours_result['stderr']:>8.4f}")
        print(f"speed-up {statistics.median(ref_s) / statistics.median(ours_s):.0f}x; "
              f"relative difference of the mean LL {abs(ours_result['mean_ll'] - r_mean) / abs(r_mean):.2e}")
    if args.checkpoint:
        runs = []
        for _ in range(args.repeats):
            out = subprocess.run([args.streetgan, "parzen", "--checkpoint", args.checkpoint, "--dataroot", args.corpus,
                                  "--holdout-fraction", "0.95", "--n-samples", "10000", "--n-valid", "1000",
                                  "--n-test", "1000", "--json"], check=True, capture_output=True, text=True).stdout
            runs.append(json.loads(out))
        print()
        print(f"full size: N 10000 samples of {args.checkpoint}, 1000 valid + 1000 test corpus images, d 12288; "
              f"medians of {args.repeats} runs")
        print(f"  sample generation {statistics.median(r['seconds']['samples'] for r in runs):.1f} s, "
              f"estimator {statistics.median(r['seconds']['estimator'] for r in runs):.1f} s; "
              f"sigma {runs[-1]['sigma']:.4f}, test mean LL {runs[-1]['mean_ll']:.1f} ± {runs[-1]['stderr']:.1f}")


if __name__ == "__main__":
    main()
