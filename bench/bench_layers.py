#!/usr/bin/python3
"""Single-layer PyTorch timings behind the figures that bench/README.md quoted without a script.

Each part times python3-torch layers on random weights and inputs (the figures depend on shapes,
not values) and prints a table; every side of every case is also appended to --out as one JSON
line (bench/bench_record.py, bench "layers", unit ms, lower is better). A figure is the median of
--repeats runs; a run is the mean time of --iters calls, after --warmup calls of each side; within
each repeat the sides take turns (A then B, then B then A in the next repeat).

  1. first-layer: naive-64 G's first layer (nz 100 -> 512 channels, 4x4 kernel, from a 1x1 input),
     forward + backward (gradients for z and W) at batch 64, --threads threads (default 2):
     nn.ConvTranspose2d(100, 512, 4, 1, 0, bias=False) against the same as a matrix product,
     (z.view(64, 100) @ W.view(100, -1)).view(64, 512, 4, 4). Prints their max differences.
     (README "What makes the difference", item 2: "162 ms against 12 ms".)
  2. layout: each convolution of naive-64's D (Conv2d 4x4 stride 2 pad 1: 3->64 at 64 px, 64->128
     at 32, 128->256 at 16, 256->512 at 8) and G (ConvTranspose2d 4x4 stride 2 pad 1: 512->256 at
     4 px, 256->128 at 8, 128->64 at 16, 64->3 at 32), forward + backward (gradients for the input
     and the weight) at batch 64, --threads threads, in NCHW against channels-last (module, input
     and output gradient in torch.channels_last). (Item 3: "NCHW -> channels-last".)
  3. render: naive-64's whole G (nz 100, ngf 64, 64 px; bench/dcgan_layers.py) in eval mode under
     torch.no_grad at batch 16, one thread: one Samples page of 16 images; also as pages a second.
     (Direction sliders: "PyTorch eager renders the same 16 images in 60 ms".)
  4. fold: G's blocks 512->256 at 4 px, 256->128 at 8 px, 128->64 at 16 px, eval mode, no grad,
     batch 16, one thread: F.conv_transpose2d (stride 2, padding 1) against the batch product +
     col2im that core/latent/folded_generator.cpp uses (one matrix product over the whole batch,
     then F.fold with kernel 4, stride 2, padding 1). Prints their max difference, which is the
     check of the README's "equals conv_transpose2d exactly". (Direction sliders, the per-block
     table.)

Each part runs in its own Python process (the driver starts them), so that its thread count is in
the environment before torch loads. These figures replace the unscripted ones in bench/README.md;
measure on an otherwise idle machine.

  /usr/bin/python3 bench/bench_layers.py [--part all|1|2|3|4] [--repeats 5] [--threads 2]
      [--warmup N] [--iters N] [--quick] [--out bench/results/layers-DATE.jsonl]

--quick: one warm-up call and one or two timed calls per run, to check that the script runs.

Reference only: python3-torch is never a runtime dependency of StreetGAN.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import bench_record

PARTS = {1: "first-layer", 2: "layout", 3: "render", 4: "fold"}
WARMUP = {1: 5, 2: 2, 3: 5, 4: 5}   # calls of each side before the first run
ITERS = {1: 20, 2: 3, 3: 10, 4: 10}  # calls per run
QUICK_ITERS = {1: 2, 2: 1, 3: 2, 4: 2}
D_LAYERS = [(3, 64, 64), (64, 128, 32), (128, 256, 16), (256, 512, 8)]  # (in, out, input px)
G_LAYERS = [(512, 256, 4), (256, 128, 8), (128, 64, 16), (64, 3, 32)]
FOLD_BLOCKS = [(512, 256, 4), (256, 128, 8), (128, 64, 16)]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", default="all", choices=["all", "1", "2", "3", "4"])
    parser.add_argument("--repeats", type=int, default=5, help="runs per side; the figure is their median")
    parser.add_argument("--threads", type=int, default=2, help="threads for parts 1 and 2 (3 and 4 use one)")
    parser.add_argument("--warmup", type=int, help="calls of each side before timing (default per part)")
    parser.add_argument("--iters", type=int, help="calls per run (default per part)")
    parser.add_argument("--quick", action="store_true", help="few calls per run: only to check the script runs")
    parser.add_argument("--out", help="JSON lines file to append the records to")
    return parser.parse_args()


def drive(args):
    """Runs each part as its own process; returns the first failing exit status, else 0."""
    forwarded = ["--repeats", str(args.repeats), "--threads", str(args.threads)]
    for name in ("warmup", "iters", "out"):
        if getattr(args, name) is not None:
            forwarded += [f"--{name}", str(getattr(args, name))]
    if args.quick:
        forwarded.append("--quick")
    for part in PARTS:
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--part", str(part), *forwarded])
        if done.returncode != 0:
            return done.returncode
    return 0


def counts(args, part):
    """(warm-up calls, calls per run) for a part."""
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else WARMUP[part])
    iters = args.iters if args.iters is not None else (QUICK_ITERS[part] if args.quick else ITERS[part])
    return warmup, iters


def time_calls(fn, iters):
    """Mean milliseconds of one call of `fn` over `iters` calls."""
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - start) * 1000 / iters


def measure(sides, repeats, warmup, iters):
    """{side: [ms of each run]}: warm-up of each side, then the sides in turns, order flipped each repeat."""
    for fn in sides.values():
        for _ in range(warmup):
            fn()
    runs = {name: [] for name in sides}
    order = list(sides)
    for _ in range(repeats):
        for name in order:
            runs[name].append(time_calls(sides[name], iters))
        order.reverse()
    return runs


def forward_backward(fn, inputs):
    """A call of forward + backward of `fn` on `inputs` (tensors needing gradients), gradients reset."""
    grad = None

    def call():
        nonlocal grad
        for t in inputs:
            t.grad = None
        out = fn()
        if grad is None:
            grad = out.detach().clone().normal_()  # clone keeps the output's memory format
        out.backward(grad)
    return call


def save(args, case, runs, settings):
    for side, values in runs.items():
        bench_record.write(path=args.out, bench="layers", case=case, side=side, runs=values, unit="ms",
                           better="lower", settings=settings)


def print_table(title, header, rows):
    """rows: (case, {side: runs}); prints medians and side A / side B."""
    print(title)
    print(f"  {'case':<28}" + "".join(f"{h:>22}" for h in header) + ("   A/B" if len(header) == 2 else ""))
    for case, runs in rows:
        medians = [statistics.median(runs[h]) for h in header]
        ratio = f" {medians[0] / medians[1]:>6.2f}" if len(medians) == 2 else ""
        print(f"  {case:<28}" + "".join(f"{m:>19.2f} ms" for m in medians) + ratio)
    for case, runs in rows:
        print(f"  runs {case}: " + "; ".join(f"{h} " + " ".join(f"{x:.2f}" for x in runs[h]) for h in header))


def part_first_layer(args, torch):
    """Part 1: ConvTranspose2d from 1x1 against z @ W, forward + backward, batch 64."""
    torch.manual_seed(0)
    conv = torch.nn.ConvTranspose2d(100, 512, 4, 1, 0, bias=False)
    z = torch.randn(64, 100, 1, 1, requires_grad=True)
    weight = conv.weight
    as_matmul = lambda: (z.view(64, 100) @ weight.view(100, -1)).view(64, 512, 4, 4)
    check_first_layer(torch, conv, z, as_matmul)
    sides = {"conv_transpose2d": forward_backward(lambda: conv(z), [z, weight]),
             "matmul": forward_backward(as_matmul, [z, weight])}
    warmup, iters = counts(args, 1)
    runs = measure(sides, args.repeats, warmup, iters)
    settings = {"part": PARTS[1], "layer": "ConvTranspose2d(100, 512, 4, 1, 0) from 1x1", "batch": 64,
                "pass": "forward+backward", "threads": torch.get_num_threads(), "warmup": warmup, "iters": iters}
    save(args, "first-layer nz100->512", runs, settings)
    print_table(f"Part 1: G's first layer, forward + backward, batch 64, {torch.get_num_threads()} threads, "
                f"ms per call", list(sides), [("nz 100 -> 512, 1 -> 4 px", runs)])


def check_first_layer(torch, conv, z, as_matmul):
    """Prints the max differences of the output and the gradients of the two forms."""
    grad = torch.randn(64, 512, 4, 4)
    found = []
    for fn in (lambda: conv(z), as_matmul):
        z.grad, conv.weight.grad = None, None
        out = fn()
        out.backward(grad)
        found.append((out.detach(), z.grad.clone(), conv.weight.grad.clone()))
    diffs = [(a - b).abs().max().item() for a, b in zip(*found)]
    print(f"Part 1 check: max |difference| output {diffs[0]:.3g}, grad z {diffs[1]:.3g}, grad W {diffs[2]:.3g}")


def layout_case(torch, kind, cin, cout, px):
    """{'nchw': call, 'channels_last': call} for one layer, forward + backward at batch 64."""
    sides = {}
    for side, fmt in (("nchw", torch.contiguous_format), ("channels_last", torch.channels_last)):
        torch.manual_seed(0)
        cls = torch.nn.Conv2d if kind == "D" else torch.nn.ConvTranspose2d
        layer = cls(cin, cout, 4, 2, 1, bias=False).to(memory_format=fmt)
        x = torch.randn(64, cin, px, px).contiguous(memory_format=fmt).requires_grad_()
        sides[side] = forward_backward(lambda layer=layer, x=x: layer(x), [x, layer.weight])
    return sides


def part_layout(args, torch):
    """Part 2: each D and G convolution in NCHW against channels-last, forward + backward, batch 64."""
    warmup, iters = counts(args, 2)
    rows = []
    for kind, layers in (("D", D_LAYERS), ("G", G_LAYERS)):
        for cin, cout, px in layers:
            out_px = px // 2 if kind == "D" else px * 2
            case = f"{kind} {cin}->{cout} {px}->{out_px} px"
            runs = measure(layout_case(torch, kind, cin, cout, px), args.repeats, warmup, iters)
            settings = {"part": PARTS[2], "layer": f"{'Conv2d' if kind == 'D' else 'ConvTranspose2d'}"
                        f"({cin}, {cout}, 4, 2, 1)", "input_px": px, "batch": 64, "pass": "forward+backward",
                        "threads": torch.get_num_threads(), "warmup": warmup, "iters": iters}
            save(args, f"layout {case}", runs, settings)
            rows.append((case, runs))
    print_table(f"Part 2: memory layout per convolution, forward + backward, batch 64, "
                f"{torch.get_num_threads()} threads, ms per call", ["nchw", "channels_last"], rows)


def part_render(args, torch):
    """Part 3: naive-64's G, eval mode, no grad, batch 16 (one Samples page)."""
    import dcgan_layers
    torch.manual_seed(0)
    g = torch.nn.Sequential(*dcgan_layers.generator_layers(100, 64, 3, 64)).eval()
    z = torch.randn(16, 100, 1, 1)

    def render():
        with torch.no_grad():
            g(z)
    warmup, iters = counts(args, 3)
    runs = measure({"pytorch-eager": render}, args.repeats, warmup, iters)
    settings = {"part": PARTS[3], "model": "naive-64 G (nz 100, ngf 64, 64 px)", "mode": "eval, no_grad",
                "batch": 16, "threads": torch.get_num_threads(), "warmup": warmup, "iters": iters}
    save(args, "render naive-64 G batch 16", runs, settings)
    print_table(f"Part 3: naive-64 G forward, eval, no grad, batch 16, {torch.get_num_threads()} thread(s), "
                f"ms per page", ["pytorch-eager"], [("G, 16 images", runs)])
    print(f"  pages a second: {1000 / statistics.median(runs['pytorch-eager']):.1f}")


def batch_product(torch, x, weight):
    """conv_transpose2d(x, weight, stride 2, padding 1, kernel 4) as folded_generator.cpp computes it."""
    n, cin, h, w = x.shape
    cout = weight.shape[1]
    columns = torch.mm(x.permute(0, 2, 3, 1).reshape(n * h * w, cin), weight.reshape(cin, cout * 16))
    return torch.nn.functional.fold(columns.view(n, h * w, cout * 16).transpose(1, 2), (2 * h, 2 * w),
                                    kernel_size=4, padding=1, stride=2)


def part_fold(args, torch):
    """Part 4: G's blocks as conv_transpose2d against the batch product + col2im, eval, no grad, batch 16."""
    warmup, iters = counts(args, 4)
    rows = []
    for cin, cout, px in FOLD_BLOCKS:
        torch.manual_seed(0)
        weight = torch.nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False).weight.detach()
        x = torch.randn(16, cin, px, px).relu()  # a block's input follows a ReLU
        direct = lambda: torch.nn.functional.conv_transpose2d(x, weight, stride=2, padding=1)
        folded = lambda: batch_product(torch, x, weight)
        with torch.no_grad():
            expected, got = direct(), folded()
            diff = (expected - got).abs().max().item()
            scale = expected.abs().max().item()
            runs = measure({"conv_transpose2d": direct, "batch-product-col2im": folded}, args.repeats, warmup, iters)
        case = f"{cin}->{cout} {px} px"
        print(f"Part 4 check {case}: max |conv_transpose2d - batch product + col2im| = {diff:.3g} "
              f"(largest |output| {scale:.3g}){' exactly equal' if diff == 0 else ''}")
        settings = {"part": PARTS[4], "block": f"ConvTranspose2d({cin}, {cout}, 4, 2, 1)", "input_px": px,
                    "batch": 16, "mode": "no_grad", "threads": torch.get_num_threads(), "warmup": warmup,
                    "iters": iters, "max_abs_difference": diff}
        save(args, f"fold {case}", runs, settings)
        rows.append((case, runs))
    print_table(f"Part 4: G's blocks, no grad, batch 16, {torch.get_num_threads()} thread(s), ms per call",
                ["conv_transpose2d", "batch-product-col2im"], rows)


def run_part(args, part):
    threads = args.threads if part in (1, 2) else 1
    bench_record.set_threads(threads)  # before torch loads
    import torch
    torch.set_num_threads(threads)
    print(f"== part {part} ({PARTS[part]}): torch {torch.__version__}, threads used "
          f"torch.get_num_threads() = {torch.get_num_threads()}, repeats {args.repeats}", flush=True)
    {1: part_first_layer, 2: part_layout, 3: part_render, 4: part_fold}[part](args, torch)
    sys.stdout.flush()
    return 0


def main():
    args = parse_args()
    if args.part == "all":
        return drive(args)
    return run_part(args, int(args.part))


if __name__ == "__main__":
    sys.exit(main())
