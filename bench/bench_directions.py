#!/usr/bin/python3
"""Semantic directions: `streetgan directions` against torch references doing the same work on the
same generator and the same latents, with a check that the axes agree.

Trains a checkpoint for one epoch on a small demo data set for each network (or takes
--checkpoint, repeatable: use real runs), exports its generator with `streetgan export` so that
torch reads the very same weights, and times REPEATS runs of each side, alternating:
  - sefa: ours (`--method sefa --top 20`) against torch's `eigh` of AᵀA (exact against exact);
  - pca: ours (`--method pca --n N --top 20`) against the same search in torch: the first block
    (transposed convolution as a product, BatchNorm with the running statistics, ReLU) of the same
    N latents (ours' draw, reproduced: LibTorch's CPU generator with --seed 0), centred, the top 20
    axes, each axis' projections regressed on the latents (lstsq, gelsd).
    Ours is exact (a Gram matrix and its eigenpairs) up to 4,096 values a row (the demo networks)
    and a randomized subspace iteration above (naive-64: 8,192): the reference of the same kind is
    `exact` (float64 Gram + eigh) and `randomized` (Halko, Martinsson and Tropp 2011 in float32,
    as GANSpace runs fbpca: k + 10 columns and 6 power steps like ours). Both are run and timed.
    --notebook adds a full numpy SVD of the outputs (what the tool we replace did; minutes).
Agreement: |cos| between each of ours' 20 latent directions and the exact reference's (and the
randomized reference's against the exact), printed per axis with their minimum; beside them the
sampling floor: the exact search on another draw of N latents against the first. An axis that
moves with the draw is not determined by N latents, by any method.

  /usr/bin/python3 bench/bench_directions.py --streetgan build/app/cli/streetgan [--n 10000 --repeats 3]
      [--checkpoint RUN_OR_PT ...] [--out bench/results/directions-DATE.jsonl]

Reference only: python3-torch is never a runtime dependency.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402

TOP = 20


def ours(args, checkpoint, method):
    cmd = [args.streetgan, "directions", "--checkpoint", checkpoint, "--method", method, "--top", str(TOP), "--json",
           "--threads", str(args.threads)]
    if method == "pca":
        cmd += ["--n", str(args.n), "--seed", "0"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_directions.py: {' '.join(cmd)} failed: {done.stderr.strip()}")
    found = json.loads(done.stdout)
    return found["seconds"], [d["vector"] for d in found["directions"]]


def first_block(torch, state, z):
    w = state["main.0.weight"].to(torch.float64)
    channels = w.shape[1]
    h = (z @ w.flatten(1)).view(z.shape[0], channels, -1)
    column = {name: state[f"main.1.{name}"].to(torch.float64).view(1, channels, 1)
              for name in ("running_mean", "running_var", "weight", "bias")}
    normed = (h - column["running_mean"]) / (column["running_var"] + 1e-5).sqrt() * column["weight"] + column["bias"]
    return normed.clamp_min(0).flatten(1)


def exact_axes(torch, centred):
    values, vectors = torch.linalg.eigh(centred.T @ centred)
    return vectors[:, -TOP:].flip(1)


def randomized_axes(torch, centred):
    rows = centred.to(torch.float32)
    generator = torch.Generator().manual_seed(1)
    y = rows @ torch.randn(rows.shape[1], TOP + 10, generator=generator)
    for _ in range(6):
        q, _ = torch.linalg.qr(y)
        y = rows @ (rows.T @ q)
    q, _ = torch.linalg.qr(y)
    _, _, vt = torch.linalg.svd(q.T @ rows, full_matrices=False)
    return vt[:TOP].T.to(torch.float64)


def notebook_axes(torch, centred):
    import numpy as np
    _, _, vt = np.linalg.svd(centred.numpy(), full_matrices=False)
    return torch.from_numpy(vt[:TOP].T.copy())


def reference_pca(torch, state, n, kind, seed=0):
    """The whole search as ours does it; returns (seconds, unit latent directions as rows)."""
    start = time.perf_counter()
    nz = state["main.0.weight"].shape[0]
    z = torch.randn(n, nz, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    centred = first_block(torch, state, z)
    centred -= centred.mean(0, keepdim=True)
    axes = {"exact": exact_axes, "randomized": randomized_axes, "notebook": notebook_axes}[kind](torch, centred)
    u = torch.linalg.lstsq(z, centred @ axes, driver="gelsd").solution
    directions = (u / u.norm(dim=0, keepdim=True)).T
    return time.perf_counter() - start, directions


def reference_sefa(torch, state):
    start = time.perf_counter()
    a = state["main.0.weight"].to(torch.float64).flatten(1)
    values, vectors = torch.linalg.eigh(a @ a.T)
    directions = vectors[:, -TOP:].flip(1).T
    return time.perf_counter() - start, directions


def agreement(torch, mine, theirs):
    """|cos| of each row of `mine` (a tensor or ours' JSON lists) with the same row of `theirs`."""
    mine = torch.as_tensor(mine, dtype=torch.float64)
    return [abs(float(a @ b)) / float(a.norm() * b.norm()) for a, b in zip(mine, theirs)]


def trained_checkpoints(args, work):
    """One epoch of each network on a small demo data set: demo (exact PCA) and naive-64 (randomized)."""
    data = os.path.join(work, "data")
    subprocess.run([args.streetgan, "demo-data", "--out", data, "--cities", "1", "--sequences", "4",
                    "--frames", "8", "--seed", "5"], check=True, capture_output=True)
    found = []
    for preset in ("demo", "naive-64"):
        run = os.path.join(work, preset)
        subprocess.run([args.streetgan, "train", "--dataroot", data, "--run-dir", run, "--preset", preset,
                        "--epochs", "1", "--threads", str(args.threads), "-t", '{"batch_size": 8}'],
                       check=True, capture_output=True)
        found.append(run)
    return found


def measure(torch, args, checkpoint, state, out):
    """Alternates ours and each reference REPEATS times; records and returns the rows to print."""
    w = state["main.0.weight"]
    values = w.shape[1] * w.shape[2] * w.shape[3]
    case = f"nz {w.shape[0]}, {values} values a row"
    kinds = ["exact", "randomized"] + (["notebook"] if args.notebook else [])
    rows = []
    for method, sides in (("sefa", ["eigh"]), ("pca", kinds)):
        times = {side: [] for side in ["ours"] + sides}
        vectors = {}
        for _ in range(args.repeats):
            seconds, vectors["ours"] = ours(args, checkpoint, method)
            times["ours"].append(seconds)
            for side in sides:
                seconds, vectors[side] = (reference_sefa(torch, state) if method == "sefa"
                                          else reference_pca(torch, state, args.n, side))
                times[side].append(seconds)
        truth = vectors[sides[0]]
        cosines = {side: agreement(torch, vectors[side], truth) for side in ["ours"] + sides[1:]}
        if method == "pca":  # the sampling floor: how far the exact axes move with another draw of latents
            cosines["exact, another draw"] = agreement(torch, reference_pca(torch, state, args.n, "exact", 1)[1], truth)
        settings = {"method": method, "top": TOP, "threads": args.threads, "values_a_row": values,
                    "ours": "exact" if method == "sefa" or values <= 4096 else "randomized"}
        if method == "pca":
            settings["n"] = args.n
        for side, runs in times.items():
            bench_record.write(out, bench="directions", case=f"{method}, {case}", side="ours" if side == "ours"
                               else f"torch {side}", runs=runs, unit="s", better="lower", settings=settings,
                               streetgan=args.streetgan if side == "ours" else None,
                               agreement_with_exact=cosines.get(side),
                               sampling_floor=cosines.get("exact, another draw"))
        rows.append((method, case, settings["ours"], times, cosines))
    return rows


def report(rows, args):
    print(f"{args.threads} threads; pca over {args.n} latents (the same draw on both sides); medians of {args.repeats}")
    for method, case, mine, times, cosines in rows:
        print(f"\n{method}, {case} (ours: {mine})")
        ours_median = statistics.median(times["ours"])
        for side, runs in times.items():
            median = statistics.median(runs)
            lead = "" if side == "ours" else f"  ours leads {median / ours_median:.2f}x"
            print(f"  {side:<11} {median:>9.4f} s  runs {', '.join(f'{x:.4f}' for x in runs)}{lead}")
        for side, values in cosines.items():
            print(f"  |cos| {side} against {list(times)[1]}: min {min(values):.6f}; per axis "
                  + " ".join(f"{v:.4f}" for v in values))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--checkpoint", action="append", help="a checkpoint or run to use, repeatable "
                        "(default: train a demo and a naive-64 one here for one epoch)")
    parser.add_argument("--n", type=int, default=10000, help="pca: latents (default 10000)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--notebook", action="store_true", help="also time numpy's full SVD (minutes)")
    parser.add_argument("--out", help="JSON lines file of the records (appended)")
    args = parser.parse_args()
    bench_record.set_threads(args.threads)
    import torch
    torch.set_num_threads(args.threads)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for number, checkpoint in enumerate(args.checkpoint or trained_checkpoints(args, work)):
            exported = os.path.join(work, f"g{number}.pt")
            subprocess.run([args.streetgan, "export", "--checkpoint", checkpoint, "--out", exported], check=True,
                           capture_output=True)
            rows += measure(torch, args, checkpoint, torch.load(exported), args.out)
    report(rows, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
