#!/usr/bin/python3
"""Semantic directions' speed: `streetgan directions` beside a numpy reference on the same generator.

Trains a naive-64 checkpoint for one epoch on a small demo data set (or takes --checkpoint), exports
its generator with `streetgan export` so that numpy reads the very same weights, then times REPEATS
runs of each:
  - sefa: ours (`--method sefa --top 20`) and numpy's eigh of A^T A;
  - pca: ours (`--method pca --n N --top 20`) and what a notebook does with numpy: the first block
    (transposed convolution as a matrix product, BatchNorm with the running statistics, ReLU) of N
    latents, a full SVD of the centred outputs, the top 20 axes regressed on the latents (lstsq).
Ours is the "seconds" the command reports (the search itself, without loading the checkpoint).
Prints the medians and the ratios (reference / streetgan: above 1 means ours is faster).

  /usr/bin/python3 bench/bench_directions.py --streetgan build/app/cli/streetgan [--n 10000 --repeats 3]

Reference only: numpy and python3-torch (to read the exported state dict) are never runtime dependencies.
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
import torch


def ours(args, checkpoint, method):
    cmd = [args.streetgan, "directions", "--checkpoint", checkpoint, "--method", method, "--top", "20", "--json",
           "--threads", str(args.threads)]
    if method == "pca":
        cmd += ["--n", str(args.n)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_directions.py: {' '.join(cmd)} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)["seconds"]


def reference_sefa(state):
    start = time.perf_counter()
    w = state["main.0.weight"].numpy().astype(np.float64)
    a_t = w.reshape(w.shape[0], -1)
    values, vectors = np.linalg.eigh(a_t @ a_t.T)
    _ = vectors[:, np.argsort(values)[::-1][:20]]
    return time.perf_counter() - start


def reference_pca(state, n):
    start = time.perf_counter()
    w = state["main.0.weight"].numpy().astype(np.float64)
    nz, channels = w.shape[0], w.shape[1]
    z = np.random.default_rng(0).standard_normal((n, nz))
    h = (z @ w.reshape(nz, -1)).reshape(n, channels, -1)
    mean = state["main.1.running_mean"].numpy().reshape(1, channels, 1)
    var = state["main.1.running_var"].numpy().reshape(1, channels, 1)
    gamma = state["main.1.weight"].numpy().reshape(1, channels, 1)
    beta = state["main.1.bias"].numpy().reshape(1, channels, 1)
    h = np.maximum((h - mean) / np.sqrt(var + 1e-5) * gamma + beta, 0).reshape(n, -1)
    centred = h - h.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    u = np.linalg.lstsq(z, centred @ vt[:20].T, rcond=None)[0]
    _ = u / np.linalg.norm(u, axis=0)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--checkpoint", help="a checkpoint to use (default: train a naive-64 one here)")
    parser.add_argument("--n", type=int, default=10000, help="pca: latents (default 10000)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as work:
        checkpoint = args.checkpoint
        if not checkpoint:
            data, run = os.path.join(work, "data"), os.path.join(work, "run")
            subprocess.run([args.streetgan, "demo-data", "--out", data, "--cities", "1", "--sequences", "4",
                            "--frames", "8", "--seed", "5"], check=True, capture_output=True)
            subprocess.run([args.streetgan, "train", "--dataroot", data, "--run-dir", run, "--preset", "naive-64",
                            "--epochs", "1", "--threads", str(args.threads), "-t", '{"batch_size": 8}'],
                           check=True, capture_output=True)
            folder = os.path.join(run, "checkpoints")
            checkpoint = os.path.join(folder, sorted(os.listdir(folder))[-1])
        exported = os.path.join(work, "g.pt")
        subprocess.run([args.streetgan, "export", "--checkpoint", checkpoint, "--out", exported], check=True,
                       capture_output=True)
        state = torch.load(exported)
        rows = []
        for method in ("sefa", "pca"):
            mine = [ours(args, checkpoint, method) for _ in range(args.repeats)]
            theirs = [reference_sefa(state) if method == "sefa" else reference_pca(state, args.n)
                      for _ in range(args.repeats)]
            rows.append((method, statistics.median(mine), statistics.median(theirs), mine, theirs))
    w = state["main.0.weight"]
    print(f"generator: nz {w.shape[0]}, first block {w.shape[1]} x 4 x 4 = {w.shape[1] * 16} values; "
          f"{args.threads} threads; pca over {args.n} latents; medians of {args.repeats}")
    print(f"{'method':<8} {'streetgan s':>12} {'numpy s':>10} {'ratio':>7}")
    for method, mine, theirs, _, _ in rows:
        print(f"{method:<8} {mine:>12.4f} {theirs:>10.4f} {theirs / mine:>7.1f}")
    for method, _, _, mine, theirs in rows:
        print(f"  {method}: ours {', '.join(f'{x:.4f}' for x in mine)}; numpy {', '.join(f'{x:.4f}' for x in theirs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
