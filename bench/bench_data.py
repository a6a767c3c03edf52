#!/usr/bin/python3
"""Data loader benchmark: streetgan's loader from JPEG and from its cache against the reference
(torchvision ImageFolder + the reference transforms through torch.utils.data.DataLoader), side
by side in one run on the same corpus, output size 64, with 1 and 2 workers; plus the decode-only
rate at each DCT reduction. Every figure is the median of --repeats runs. Prints one table.

Usage: /usr/bin/python3 bench/bench_data.py --streetgan build/app/cli/streetgan --corpus DIR
       [--seconds 8] [--repeats 3] [--workers 1,2]
Make the corpus with bench/make_corpus.py. Needs python3-torch and python3-torchvision.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms


class AddNoise:
    def __init__(self, std):
        self.std = std

    def __call__(self, x):
        return x + torch.randn_like(x) * self.std


def reference_rate(root, workers, seconds, batch=64, img_size=64):
    transform = transforms.Compose([
        transforms.RandomAffine(degrees=0, translate=(0.2, 0)),
        transforms.CenterCrop(4 * img_size),
        transforms.Resize(img_size),
        transforms.ToTensor(),
        AddNoise(0.05),
        transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
    ])
    dataset = torchvision.datasets.ImageFolder(root, transform=transform)
    loader = DataLoader(dataset, batch_size=batch, shuffle=True, num_workers=workers, drop_last=True,
                        persistent_workers=True)
    images, start = 0, time.perf_counter()
    while True:
        for x, _ in loader:
            images += x.shape[0]
            if time.perf_counter() - start >= seconds:
                rate = images / (time.perf_counter() - start)
                del loader
                return rate


def reference_in_child(root, workers, seconds):
    """Runs the reference in a fresh process so its peak memory (main + worker processes) is its own."""
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); import bench_data, json, resource; "
            f"r = bench_data.reference_rate({root!r}, {workers}, {seconds}); "
            "m = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss; "
            "print(json.dumps({'images_per_s': r, 'peak_rss_mib': m / 1024}))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def ours(streetgan, corpus, workers, seconds, extra):
    cmd = [streetgan, "bench", "data", "--dataroot", corpus, "--img-size", "64", "--workers", str(workers),
           "--seconds", str(seconds), "--json"] + extra
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])


def median_of(fn, repeats):
    runs = [fn() for _ in range(repeats)]
    return statistics.median(r["images_per_s"] for r in runs), max(r["peak_rss_mib"] for r in runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    root = os.path.join(args.corpus, "train_val")
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "corpus.sgcache")
        subprocess.run([args.streetgan, "cache", "build", "--dataroot", args.corpus, "--out", cache],
                       check=True, capture_output=True)
        print(f"corpus: {args.corpus}; {args.repeats} runs of {args.seconds} s each, medians; "
              f"output 64x64, batch 64; torch {torch.__version__}, torchvision {torchvision.__version__}")
        print(f"{'workers':>7} {'loader':<24} {'images/s':>10} {'vs reference':>13} {'peak RSS MiB':>13}")
        for workers in [int(w) for w in args.workers.split(",")]:
            ref, ref_mem = median_of(lambda: reference_in_child(root, workers, args.seconds), args.repeats)
            jpeg, jpeg_mem = median_of(lambda: ours(args.streetgan, args.corpus, workers, args.seconds, []), args.repeats)
            cached, cache_mem = median_of(
                lambda: ours(args.streetgan, args.corpus, workers, args.seconds, ["--cache", cache]), args.repeats)
            for name, rate, mem in (("reference (torchvision)", ref, ref_mem), ("streetgan from JPEG", jpeg, jpeg_mem),
                                    ("streetgan from cache", cached, cache_mem)):
                print(f"{workers:>7} {name:<24} {rate:>10.0f} {rate / ref:>12.1f}x {mem:>13.0f}")
        print()
        print(f"{'workers':>7} {'decode only (streetgan)':<24} {'images/s':>10}")
        for reduction in (1, 2, 4, 8):
            rate, _ = median_of(lambda: ours(args.streetgan, args.corpus, 1, args.seconds,
                                             ["--decode-only", str(reduction)]), args.repeats)
            print(f"{1:>7} {'JPEG at 1/' + str(reduction):<24} {rate:>10.0f}")


if __name__ == "__main__":
    main()
