#!/usr/bin/python3
"""Projection's speed: `streetgan project` beside the same optimisation in PyTorch eager mode.

Trains a naive-64 checkpoint for one epoch on a small demo data set (or takes --checkpoint), exports
its generator with `streetgan export` so that PyTorch runs the very same weights, and projects
PHOTOS demo photographs with each, REPEATS times:
  - ours: `streetgan project PHOTO --steps S --restarts R` (the "seconds" it records: the
    optimisation, without loading the checkpoint);
  - PyTorch: what a careful notebook writes: G frozen (requires_grad False, eval mode), the starts
    as one batch, Adam with the same learning-rate ramps, the pixel error plus (1 - MS-SSIM) with an
    11-tap Gaussian by grouped conv2d (as pytorch-msssim), the same latent-norm prior. Its target is
    the photograph exactly as ours saw it (read back from ours' --preview grid).
Prints the medians, the ratio (PyTorch / streetgan: above 1 means ours is faster) and each side's
final loss (the same objective: the two should land close).

  /usr/bin/python3 bench/bench_project.py --streetgan build/app/cli/streetgan [--steps 500 --restarts 8]

--threads T sets the OMP/OpenBLAS/MKL thread counts before numpy and torch load,
torch.set_num_threads(T) and `streetgan project --threads T`; then OPENBLAS_NUM_THREADS is set to
--openblas-threads (default 1: LibTorch's threads over a one-thread OpenBLAS, PyTorch's best setting
here; both sides run under it). --out FILE appends one JSON line per side (bench/bench_record.py):
bench "project", case the workload (photographs, starts x steps, threads), side "ours" or
"pytorch eager", every run's seconds, with every run's final loss.

Reference only: python3-torch, numpy and PIL are never runtime dependencies.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402  (imports neither numpy nor torch)

WEIGHTS = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333]
# numpy, torch, torch.nn.functional and PIL: imported by load_libraries() once the thread counts are set.
np = torch = F = Image = None


def load_libraries(threads, openblas_threads):
    """Sets the thread counts, then imports the libraries that read them when they load."""
    global np, torch, F, Image
    bench_record.set_threads(threads)
    os.environ["OPENBLAS_NUM_THREADS"] = str(openblas_threads)
    import numpy as np
    import torch
    import torch.nn.functional as F
    from PIL import Image
    torch.set_num_threads(threads)


def load_generator(meta, path):
    """The exported generator's weights in docs/model.md's layers, frozen, in eval mode."""
    from dcgan_layers import generator_layers
    net = torch.nn.Module()
    net.main = torch.nn.Sequential(*generator_layers(meta["nz"], meta["ngf"], meta["nc"], meta["img_size"]))
    net.load_state_dict(torch.load(path))
    return net.main.eval().requires_grad_(False)


def gaussian(channels):
    x = torch.arange(11, dtype=torch.float32) - 5
    g = torch.exp(-x * x / (2 * 1.5 ** 2))
    g = g / g.sum()
    return g.view(1, 1, 1, 11).repeat(channels, 1, 1, 1), g.view(1, 1, 11, 1).repeat(channels, 1, 1, 1)


def ms_ssim(a, b, scales, window):
    row, col = window
    w = torch.tensor(WEIGHTS[:scales]) / sum(WEIGHTS[:scales])
    x, y = (a + 1) / 2, (b + 1) / 2
    c = x.shape[1]
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    product = None
    for s in range(scales):
        if s > 0:
            x, y = F.avg_pool2d(x, 2), F.avg_pool2d(y, 2)
        f = torch.cat([x, y, x * y, x * x + y * y], 1)
        f = F.conv2d(F.conv2d(f, row.repeat(4, 1, 1, 1), groups=4 * c), col.repeat(4, 1, 1, 1), groups=4 * c)
        mu_x, mu_y, xy, sq = f[:, :c], f[:, c:2 * c], f[:, 2 * c:3 * c], f[:, 3 * c:]
        num0, den0 = 2 * mu_x * mu_y, mu_x * mu_x + mu_y * mu_y
        cs = ((2 * xy - num0 + c2) / (sq - den0 + c2)).mean((2, 3))
        term = cs if s + 1 < scales else (((num0 + c1) / (den0 + c1)) * (2 * xy - num0 + c2) / (sq - den0 + c2)).mean((2, 3))
        term = term.clamp_min(1e-6) ** w[s]
        product = term if product is None else product * term
    return product.mean(1)


def learning_rate(peak, step, steps):
    t = step / steps
    down = min(1.0, (1.0 - t) / 0.25)
    return peak * (0.5 - 0.5 * math.cos(math.pi * down)) * min(1.0, t / 0.05 + 1.0 / steps)


def reference(g, target, args):
    nz = g[0].weight.shape[0]
    scales = 3 if target.shape[-1] < 81 else 4
    window = gaussian(target.shape[1])
    start = time.perf_counter()
    z = torch.stack([torch.randn(nz, generator=torch.Generator().manual_seed(r)) for r in range(args.restarts)])
    z.requires_grad_(True)
    adam = torch.optim.Adam([z], lr=args.lr)

    def objective(zs, images):
        loss = (images - target).square().flatten(1).mean(1)
        loss = loss + (1 - ms_ssim(images, target.expand_as(images), scales, window))
        return loss + 0.01 * (zs.norm(dim=1) / math.sqrt(nz) - 1) ** 2

    for step in range(args.steps):
        for group in adam.param_groups:
            group["lr"] = learning_rate(args.lr, step, args.steps)
        adam.zero_grad()
        losses = objective(z, g(z.view(*z.shape, 1, 1)))
        losses.sum().backward()
        adam.step()
    with torch.no_grad():
        final = objective(z, g(z.view(*z.shape, 1, 1))).min().item()
    return time.perf_counter() - start, final


def prepare(args, work):
    """The demo photographs, the checkpoint (trained here without --checkpoint) and its exported G."""
    data = os.path.join(work, "data")
    subprocess.run([args.streetgan, "demo-data", "--out", data, "--cities", "1", "--sequences", "4",
                    "--frames", "8", "--seed", "5"], check=True, capture_output=True)
    checkpoint = args.checkpoint
    if not checkpoint:
        run = os.path.join(work, "run")
        subprocess.run([args.streetgan, "train", "--dataroot", data, "--run-dir", run, "--preset", "naive-64",
                        "--epochs", "1", "--threads", str(args.threads), "-t", '{"batch_size": 8}'],
                       check=True, capture_output=True)
        folder = os.path.join(run, "checkpoints")
        checkpoint = os.path.join(folder, sorted(os.listdir(folder))[-1])
    photos = sorted(os.path.join(root, f) for root, _, files in os.walk(data) for f in files if f.endswith(".jpg"))
    exported = os.path.join(work, "g.pt")
    subprocess.run([args.streetgan, "export", "--checkpoint", checkpoint, "--out", exported], check=True,
                   capture_output=True)
    meta = json.load(open(os.path.join(work, "g.json")))
    return photos[:args.photos], checkpoint, meta, load_generator(meta, exported)


def run_ours(args, work, photos, checkpoint):
    """`streetgan project` once: its optimisation's seconds, its mean final loss, and its preview grid."""
    out, preview = os.path.join(work, "p.json"), os.path.join(work, "p.png")
    cmd = [args.streetgan, "project", *photos, "--checkpoint", checkpoint, "--out", out, "--steps", str(args.steps),
           "--restarts", str(args.restarts), "--lr", str(args.lr), "--threads", str(args.threads),
           "--preview", preview]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_project.py: {' '.join(cmd)} failed: {done.stderr.strip()}")
    result = json.load(open(out))
    loss = statistics.mean(k["loss"] for k in result["keyframes"])
    return result["projection"]["seconds"], loss, np.asarray(Image.open(preview).convert("RGB"), dtype=np.float32)


def run_reference(args, g, grid, count, size):
    """PyTorch on each photograph as ours saw it (read back from ours' preview grid): seconds, mean loss."""
    seconds, losses = 0.0, []
    for i in range(count):
        top = 2 + i * (size + 2)
        tile = grid[top:top + size, 2:2 + size]
        target = torch.from_numpy(tile).permute(2, 0, 1).unsqueeze(0) / 127.5 - 1
        s, loss = reference(g, target, args)
        seconds += s
        losses.append(loss)
    return seconds, statistics.mean(losses)


def measure(args, work):
    """side → every run's seconds and final loss, ours then PyTorch in each repeat; and G's settings."""
    photos, checkpoint, meta, g = prepare(args, work)
    runs = {"ours": ([], []), "pytorch eager": ([], [])}
    for _ in range(args.repeats):
        seconds, loss, grid = run_ours(args, work, photos, checkpoint)
        runs["ours"][0].append(seconds)
        runs["ours"][1].append(loss)
        seconds, loss = run_reference(args, g, grid, len(photos), meta["img_size"])
        runs["pytorch eager"][0].append(seconds)
        runs["pytorch eager"][1].append(loss)
    settings = {"nz": meta["nz"], "ngf": meta["ngf"], "img_size": meta["img_size"], "photos": len(photos),
                "steps": args.steps, "restarts": args.restarts, "lr": args.lr, "threads": args.threads,
                "OPENBLAS_NUM_THREADS": args.openblas_threads, "repeats": args.repeats,
                "checkpoint": args.checkpoint or "naive-64, one epoch on demo data, trained here"}
    return runs, settings


def report(args, runs, settings):
    (mine, mine_loss), (theirs, theirs_loss) = runs["ours"], runs["pytorch eager"]
    a, b = statistics.median(mine), statistics.median(theirs)
    print(f"generator: nz {settings['nz']}, ngf {settings['ngf']}, {settings['img_size']} px; {settings['photos']} "
          f"photograph(s), {args.restarts} starts x {args.steps} steps; {args.threads} threads; medians of {args.repeats}")
    print(f"{'':<10} {'seconds':>9} {'final loss':>11}")
    print(f"{'streetgan':<10} {a:>9.2f} {statistics.median(mine_loss):>11.4f}")
    print(f"{'pytorch':<10} {b:>9.2f} {statistics.median(theirs_loss):>11.4f}")
    print(f"ratio (pytorch / streetgan): {b / a:.2f}")
    print(f"  runs: ours {', '.join(f'{x:.2f}' for x in mine)}; pytorch {', '.join(f'{x:.2f}' for x in theirs)}")
    case = f"{settings['photos']} photograph(s), {args.restarts} starts x {args.steps} steps, {args.threads} threads"
    for side, (seconds, losses) in runs.items() if args.out else []:
        bench_record.write(args.out, bench="project", case=case, side=side, runs=seconds, unit="s", better="lower",
                           settings=settings, streetgan=args.streetgan, final_loss=losses)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--checkpoint", help="a checkpoint to use (default: train a naive-64 one here)")
    parser.add_argument("--photos", type=int, default=1, help="photographs projected per run (default 1)")
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--restarts", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--openblas-threads", type=int, default=1, help="OPENBLAS_NUM_THREADS of both sides (default 1)")
    parser.add_argument("--out", metavar="FILE", help="append one bench_record.py line per side")
    args = parser.parse_args()
    if args.repeats < 1 or args.threads < 1 or args.openblas_threads < 1:
        parser.error("--repeats, --threads and --openblas-threads must be at least 1")
    load_libraries(args.threads, args.openblas_threads)  # before anything imports numpy or torch
    with tempfile.TemporaryDirectory() as work:
        runs, settings = measure(args, work)
    report(args, runs, settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
