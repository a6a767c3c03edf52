#!/usr/bin/python3
"""Parzen estimator benchmark: `streetgan parzen` against the estimators a researcher would write
today, and against the tool it replaced, side by side on the same images; then streetgan alone at
the full size from a checkpoint.

Usage: /usr/bin/python3 bench/bench_parzen.py --streetgan build/app/cli/streetgan --corpus DIR
       [--checkpoint FILE] [--repeats 3] [--threads 2] [--notebook] [--out FILE.jsonl]
       [--small-samples 1000]

The small case: 1,000 samples, 200 validation + 200 test images, 32x32 RGB (d = 3072), the
default σ grid logspace(-1, 0, 10). The images are 32x32 cuts of the corpus's
train_val/*/database/images/*.jpg written as PNG, so every side reads the same pixels; it needs
1,400 of them (--small-samples N takes N samples instead of 1,000, for a smaller corpus). The rows
are streetgan's own bits: channel-first float32 (pixel · float32(1/255)) · 2 − 1, i.e. pixel/127.5
− 1; each side widens them to its precision inside its timed call.

Every side does the same work as ours: the squared distances of the validation points to the
samples, the mean log-likelihood of every σ of the grid from them, σ chosen as the highest, then
the distances of the test points and their log-likelihood at that σ alone (mean and standard
error, n - 1 in the variance).
  ours                     `streetgan parzen --samples --valid --test --json --threads T`: its own
                           seconds.estimator (the estimator alone, not reading the images).
  numpy, vectorised        float64; ‖x‖² + ‖μ‖² − 2·x·μ by one matrix product per block of 512
                           points (fewer when points × samples × σ would pass 2^24 values), every
                           σ at once by scipy.special.logsumexp over the samples.
  torch, vectorised        the same in torch on the CPU, float64, torch.mm and torch.logsumexp,
                           torch.set_num_threads(T).
  torch, float32           the torch side in float32: faster, less exact; its mean LL is printed
                           against ours so the cost of the precision shows.
  the tool replaced        only with --notebook (about a minute a run): the original notebook's
                           loop, for each σ and each batch of 10 points the broadcast
                           (x[:,None,:] - μ[None,:,:]) / σ, squared, summed, log-sum-exp; float64.
Each repeat runs the sides one after another in that order, then measures this machine's float64
GEMM rate (bench_record.gemm_rate): the physical limit of the work is its products' FLOPs
(2·N·d·(valid + test)) at that rate, recorded as the side "limit: ..."; the tables give medians.
--threads T sets OMP/OpenBLAS/MKL threads before numpy and torch load, torch.set_num_threads(T),
and `streetgan parzen --threads T`.

The large case (with --large-corpus DIR): 10,000 samples, 1,000 validation + 1,000 test points,
64x64 (d = 12,288), cut from 12,000 demo scenes that `streetgan demo-data` renders once into
DIR/scenes; every side but the notebook's (hours there).

The full case (with --checkpoint): 10,000 samples of the checkpoint's generator, 1,000 + 1,000
held-out corpus images at 64x64 (d = 12,288), ours alone. The references cannot score the same
rows: `streetgan parzen` writes neither its generated samples nor its held-out draw, and
`streetgan sample` writes 8-bit PNG grids (not the float rows ours scores), so a reference there
would measure other numbers.

--out FILE appends one JSON line per side and case (bench/bench_record.py): runs in seconds,
σ, mean LL and standard error.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402  (imports neither numpy nor torch)

N_VALID = 200
N_TEST = 200
SMALL_SAMPLES = 1000
SIZE = 32
LARGE = (10000, 1000, 1000)  # samples, validation and test points of the large case
LARGE_SIZE = 64
BLOCK = 512  # points per distance block, as ours
LIMIT_SIDE = "limit: float64 products at the GEMM rate"
MAX_VALUES = 2 ** 24  # the most values of one (points, samples, σ) array: 128 MiB in float64

# numpy, scipy's logsumexp, torch and PIL: imported by load_libraries() once the thread counts are set.
np = logsumexp = torch = Image = None


def load_libraries(threads):
    """Sets the thread counts, then imports the libraries that read them when they load."""
    global np, logsumexp, torch, Image
    bench_record.set_threads(threads)
    import numpy as np
    from scipy.special import logsumexp
    import torch
    from PIL import Image
    torch.set_num_threads(threads)


def write_split(paths, folder, size):
    os.makedirs(folder)
    for i, path in enumerate(paths):
        Image.open(path).convert("RGB").resize((size, size), Image.BILINEAR).save(os.path.join(folder, f"{i:05d}.png"))


def load_split(folder):
    """The rows of a folder of PNGs, channel-first, as streetgan makes them: float32
    (pixel · float32(1/255)) · 2 − 1, the same bits as its rows."""
    files = sorted(glob.glob(os.path.join(folder, "*.png")))
    pixels = np.stack([np.asarray(Image.open(f), dtype=np.float32).transpose(2, 0, 1).reshape(-1) for f in files])
    return pixels * np.float32(1 / 255) * np.float32(2) - np.float32(1)


def log_norm(n, d, sigmas):
    """log N + d·log(σ√(2π)) per σ: what each log-sum-exp loses to the normalisation."""
    return np.log(n) + d * np.log(np.asarray(sigmas) * np.sqrt(2 * np.pi))


def summary(sigma, ll):
    """σ, the mean log-likelihood and its standard error (n - 1 in the variance)."""
    return float(sigma), float(ll.mean()), float(ll.std(ddof=1) / np.sqrt(len(ll)))


def block_rows(n_samples, n_sigmas):
    """Points per block: 512, fewer when a (points, samples, σ) array would pass MAX_VALUES."""
    return max(1, min(BLOCK, MAX_VALUES // (n_samples * n_sigmas)))


# The tool replaced: the original notebook's estimator, one σ at a time.

def notebook_ll(mu, x, sigma, batch=10):
    """The original notebook's estimator: per σ, per batch of points, full broadcast."""
    out = []
    n, d = mu.shape[0], mu.shape[1]
    for i in range(0, x.shape[0], batch):
        a = (x[i:i + batch, None, :] - mu[None, :, :]) / sigma
        t = -0.5 * (a ** 2).sum(2)
        m = t.max(1, keepdims=True)
        out.append((m + np.log(np.exp(t - m).sum(1, keepdims=True))).ravel() - np.log(n) - d * np.log(sigma * np.sqrt(2 * np.pi)))
    return np.concatenate(out)


def notebook(mu, valid, test, sigmas):
    mu, valid, test = (a.astype(np.float64) for a in (mu, valid, test))
    curve = [notebook_ll(mu, valid, s).mean() for s in sigmas]
    best = sigmas[int(np.argmax(curve))]
    return summary(best, notebook_ll(mu, test, best))


# numpy, vectorised: one matrix product per block, every σ at once.

def numpy_ll(mu, x, sigmas):
    """(points, σ) log-likelihoods; mu and x float64."""
    scale = -0.5 / np.asarray(sigmas) ** 2  # multiplies ‖x−μ‖²
    mu_sq = (mu * mu).sum(1)
    rows = block_rows(mu.shape[0], len(sigmas))
    out = []
    for i in range(0, x.shape[0], rows):
        xb = x[i:i + rows]
        dist = np.maximum((xb * xb).sum(1)[:, None] + mu_sq[None, :] - 2.0 * (xb @ mu.T), 0.0)
        out.append(logsumexp(dist[:, :, None] * scale, axis=1))
    return np.concatenate(out) - log_norm(mu.shape[0], mu.shape[1], sigmas)


def numpy_vectorised(mu, valid, test, sigmas):
    mu, valid, test = (a.astype(np.float64) for a in (mu, valid, test))
    best = sigmas[int(np.argmax(numpy_ll(mu, valid, sigmas).mean(0)))]
    return summary(best, numpy_ll(mu, test, [best])[:, 0])


# torch, vectorised: the same with torch.mm and torch.logsumexp on the CPU.

def torch_ll(mu, x, sigmas):
    """(points, σ) log-likelihoods; mu and x tensors of one dtype."""
    scale = -0.5 / torch.tensor(sigmas, dtype=mu.dtype) ** 2
    mu_sq = (mu * mu).sum(1)
    rows = block_rows(mu.shape[0], len(sigmas))
    out = []
    for xb in torch.split(x, rows):
        dist = ((xb * xb).sum(1, keepdim=True) + mu_sq[None, :] - 2.0 * (xb @ mu.T)).clamp_min_(0.0)
        out.append(torch.logsumexp(dist[:, :, None] * scale, dim=1))
    norm = torch.from_numpy(log_norm(mu.shape[0], mu.shape[1], sigmas)).to(mu.dtype)
    return torch.cat(out) - norm


def torch_vectorised(mu, valid, test, sigmas, dtype):
    with torch.no_grad():
        mu, valid, test = (torch.from_numpy(a).to(dtype) for a in (mu, valid, test))
        best = sigmas[int(torch.argmax(torch_ll(mu, valid, sigmas).mean(0)))]
        ll = torch_ll(mu, test, [best])[:, 0].double().numpy()
    return summary(best, ll)


# Ours.

def ours(args, folders, size):
    """seconds.estimator and (σ, mean LL, stderr) of `streetgan parzen --json`."""
    out = subprocess.run([args.streetgan, "parzen", "--samples", folders["samples"], "--valid", folders["valid"],
                          "--test", folders["test"], "--img-size", str(size), "--threads", str(args.threads),
                          "--json"], check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    return result["seconds"]["estimator"], (result["sigma"], result["mean_ll"], result["stderr"])


def timed(function, *arguments):
    """Seconds of one call and its result."""
    start = time.perf_counter()
    result = function(*arguments)
    return time.perf_counter() - start, result


def case_sides(args, folders, rows, sigmas, size, notebook):
    """(name, JSON side, settings, function → (seconds, result)) per side, in the order each repeat runs them."""
    mu, valid, test = rows
    sides = [
        ("ours (streetgan)", "ours", {"dtype": "float64"}, lambda: ours(args, folders, size)),
        ("numpy, vectorised", "numpy, vectorised", {"dtype": "float64"},
         lambda: timed(numpy_vectorised, mu, valid, test, sigmas)),
        ("torch, vectorised", "torch, vectorised", {"dtype": "float64"},
         lambda: timed(torch_vectorised, mu, valid, test, sigmas, torch.float64)),
        ("torch, float32", "torch, vectorised, float32", {"dtype": "float32"},
         lambda: timed(torch_vectorised, mu, valid, test, sigmas, torch.float32)),
    ]
    if notebook:
        sides.append(("the tool replaced", "the tool replaced", {"dtype": "float64"},
                      lambda: timed(notebook, mu, valid, test, sigmas)))
    return sides


def corpus_images(corpus, n, n_valid, n_test):
    """The corpus's JPEGs, sorted; exits saying what the case needs when there are too few."""
    images = sorted(glob.glob(os.path.join(corpus, "train_val", "*", "database", "images", "*.jpg")))
    needed = n + n_valid + n_test
    if len(images) < needed:
        hint = (f"; --small-samples {len(images) - n_valid - n_test} fits it" if len(images) > n_valid + n_test else "")
        sys.exit(f"bench_parzen: the case needs {needed:,} images ({n:,} samples + {n_valid:,} validation + "
                 f"{n_test:,} test); {corpus} has {len(images):,} in train_val/*/database/images/*.jpg{hint}")
    return images


def run_small(args):
    n = args.small_samples
    case = "small" if n == SMALL_SAMPLES else f"small, {n} samples"  # a smaller run is not the documented case
    run_case(args, case, corpus_images(args.corpus, n, N_VALID, N_TEST), (n, N_VALID, N_TEST), SIZE)


def run_large(args):
    """10,000 + 1,000 + 1,000 demo scenes at 64 px (d 12,288), rendered once by `streetgan demo-data`."""
    folder = os.path.join(args.large_corpus, "scenes")
    if not os.path.isdir(os.path.join(folder, "train_val")):
        # 8 × 50 × 31 = 12,400 scenes, of which demo-data puts 98% in train_val: 12,152.
        subprocess.run([args.streetgan, "demo-data", "--out", folder, "--cities", "8", "--sequences", "50",
                        "--frames", "31"], check=True, capture_output=True)
    run_case(args, "large", corpus_images(folder, *LARGE), LARGE, LARGE_SIZE)


def run_case(args, case, images, counts, size):
    sigmas = [float(s) for s in np.logspace(-1, 0, 10)]
    n, n_valid, n_test = counts
    with tempfile.TemporaryDirectory() as tmp:
        folders = {name: os.path.join(tmp, name) for name in ("samples", "valid", "test")}
        for name, start, count in (("samples", 0, n), ("valid", n, n_valid), ("test", n + n_valid, n_test)):
            write_split(images[start:start + count], folders[name], size)
        rows = tuple(load_split(folders[name]) for name in ("samples", "valid", "test"))
        sides = case_sides(args, folders, rows, sigmas, size, args.notebook and case != "large")
        seconds = {name: [] for name, *_ in sides}
        results = {}
        # The products' FLOPs: every point of both splits against every sample (2 FLOPs a multiply-add).
        flops = 2 * n * rows[0].shape[1] * (n_valid + n_test)
        limit = []
        for _ in range(args.repeats):
            for name, _side, _settings, run in sides:
                took, results[name] = run()
                seconds[name].append(took)
            rate, gemm = bench_record.gemm_rate(torch, torch.float64)
            limit.append(flops / rate)
    settings = {"n_samples": n, "n_valid": n_valid, "n_test": n_test, "d": rows[0].shape[1], "img_size": size,
                "sigmas": len(sigmas), "threads": args.threads, "repeats": args.repeats}
    print_case(case, settings, sides, seconds, results)
    for name, side, extra, _run in sides:
        sigma, mean_ll, stderr = results[name]
        bench_record.write(path=args.out, bench="parzen", case=case, side=side, runs=seconds[name], unit="s",
                           better="lower", settings={**settings, **extra}, streetgan=args.streetgan, sigma=sigma,
                           mean_ll=mean_ll, stderr=stderr)
    print(f"limit: the float64 products ({flops / 1e9:.0f} GFLOP) at this machine's GEMM rate ({gemm}): "
          f"{statistics.median(limit):.3f} s; ours {statistics.median(limit) / statistics.median(seconds['ours (streetgan)']):.0%} of it")
    bench_record.write(path=args.out, bench="parzen", case=case, side=LIMIT_SIDE, runs=limit, unit="s", better="lower",
                       settings={**settings, "flops": flops, "gemm": gemm})


def print_case(case, settings, sides, seconds, results):
    s = settings
    print(f"\n{case} case: N {s['n_samples']}, {s['n_valid']} valid + {s['n_test']} test, d {s['d']}, "
          f"{s['sigmas']} sigmas, {s['threads']} thread(s); medians of {s['repeats']} runs")
    print(f"{'':<20} {'seconds':>9} {'/ ours':>8} {'sigma':>8} {'test mean LL':>14} {'stderr':>9} "
          f"{'mean LL rel. diff vs ours':>26}")
    ours_s = statistics.median(seconds["ours (streetgan)"])
    ours_ll = results["ours (streetgan)"][1]
    for name, *_ in sides:
        sigma, mean_ll, stderr = results[name]
        median = statistics.median(seconds[name])
        print(f"{name:<20} {median:>9.4f} {median / ours_s:>7.2f}x {sigma:>8.4f} {mean_ll:>14.4f} {stderr:>9.4f} "
              f"{abs(mean_ll - ours_ll) / abs(ours_ll):>26.2e}")


def run_full(args):
    runs = []
    for _ in range(args.repeats):
        out = subprocess.run([args.streetgan, "parzen", "--checkpoint", args.checkpoint, "--dataroot", args.corpus,
                              "--holdout-fraction", "0.95", "--n-samples", "10000", "--n-valid", "1000",
                              "--n-test", "1000", "--threads", str(args.threads), "--json"],
                             check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out))
    estimator = [r["seconds"]["estimator"] for r in runs]
    samples = [r["seconds"]["samples"] for r in runs]
    print()
    print(f"full size: N 10000 samples of {args.checkpoint}, 1000 valid + 1000 test corpus images, d 12288, "
          f"{args.threads} thread(s); ours alone (see the docstring); medians of {args.repeats} runs")
    print(f"  sample generation {statistics.median(samples):.1f} s, estimator {statistics.median(estimator):.1f} s; "
          f"sigma {runs[-1]['sigma']:.4f}, test mean LL {runs[-1]['mean_ll']:.1f} ± {runs[-1]['stderr']:.1f}")
    settings = {"n_samples": 10000, "n_valid": 1000, "n_test": 1000, "d": 12288, "img_size": 64, "sigmas": 10,
                "threads": args.threads, "repeats": args.repeats, "dtype": "float64",
                "checkpoint": args.checkpoint, "holdout_fraction": 0.95}
    bench_record.write(path=args.out, bench="parzen", case="full", side="ours", runs=estimator, unit="s",
                       better="lower", settings=settings, streetgan=args.streetgan, sigma=runs[-1]["sigma"],
                       mean_ll=runs[-1]["mean_ll"], stderr=runs[-1]["stderr"], samples_seconds=samples)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--checkpoint", help="also run the full case (ours alone) on this checkpoint's samples")
    parser.add_argument("--large-corpus", metavar="DIR",
                        help="also run the large case on 12,000 demo scenes rendered once into DIR/scenes")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="threads of every side (default 2)")
    parser.add_argument("--notebook", action="store_true", help="also run the tool replaced (slow)")
    parser.add_argument("--out", help="append the JSON records to this file")
    parser.add_argument("--small-samples", type=int, default=SMALL_SAMPLES,
                        help=f"samples of the small case (default {SMALL_SAMPLES}; for a corpus under "
                             f"{SMALL_SAMPLES + N_VALID + N_TEST:,} images)")
    args = parser.parse_args()
    if args.repeats < 1 or args.threads < 1 or args.small_samples < 1:
        parser.error("--repeats, --threads and --small-samples must be at least 1")
    return args


def main():
    args = parse_args()
    load_libraries(args.threads)  # before anything imports numpy or torch
    run_small(args)
    if args.large_corpus:
        run_large(args)
    if args.checkpoint:
        run_full(args)


if __name__ == "__main__":
    main()
