#!/usr/bin/python3
"""Training-step speed: StreetGAN's C++ engine against PyTorch eager mode, side by side.

Runs `streetgan bench train` and the same DCGAN step written in PyTorch (Debian's python3-torch,
the reference implementation) alternately, REPEATS times each, on synthetic tensors, and prints
the median images/s of both and their ratio (C++ / PyTorch; above 1 means the engine is faster).
Neither side copies the step's statistics to the host each step (the engine copies them at log
points; the reference keeps them on the device and copies them once at the end).

  bench/bench_train.py --streetgan build/app/cli/streetgan --preset naive-64 --batch 64 --threads 2

On a GPU host, one command gives the GPU table (PyTorch eager and torch.compile of the same step,
and real batches from a cache as a share of synthetic ones):

  bench/bench_train.py --device cuda --precision bf16 --compile --cuda-graphs --batch 256 \
      --data CACHE --dataroot DIR

(--cuda-graphs also times the engine's step recorded as a CUDA graph: `bench train --cuda-graphs on`.)

Reference only: python3-torch is never a runtime dependency of StreetGAN.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PRESETS = {  # nz, ngf, ndf, img_size (as core/config/train_config.cpp)
    "naive-64": (100, 64, 64, 64),
    "safe-64": (256, 256, 64, 64),
    "safe-128": (256, 256, 128, 128),
}


def reference_step_speed(preset, batch, steps, warmup, threads, device, precision, compile_step=False):
    import torch
    import torch.nn as nn

    torch.set_num_threads(threads)
    nz, ngf, ndf, img = PRESETS[preset]
    nc = 3

    from dcgan_layers import discriminator_layers, generator_layers

    def generator():
        return nn.Sequential(*generator_layers(nz, ngf, nc, img))

    def discriminator():
        return nn.Sequential(*discriminator_layers(ndf, nc, img))

    def init(m):
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.normal_(m.weight, 1.0, 0.02)
            nn.init.zeros_(m.bias)

    dev = torch.device(device)
    if dev.type == "cuda":
        torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    g, d = generator().to(dev), discriminator().to(dev)
    g.apply(init)
    d.apply(init)
    if compile_step:
        if not hasattr(torch, "compile"):
            sys.exit(f"--compile needs PyTorch 2 (torch.compile); this is PyTorch {torch.__version__}")
        g, d = torch.compile(g), torch.compile(d)
    opt_g = torch.optim.AdamW(g.parameters(), lr=2e-4, betas=(0.5, 0.999), weight_decay=0.05)
    opt_d = torch.optim.AdamW(d.parameters(), lr=2e-4, betas=(0.5, 0.999), weight_decay=0.05)
    bce = nn.BCEWithLogitsLoss()
    real = torch.rand(batch, nc, img, img, device=dev) * 2 - 1
    ones = torch.ones(batch, device=dev)
    zeros = torch.zeros(batch, device=dev)
    use_amp = precision != "fp32"
    amp_dtype = torch.float16 if precision == "fp16" else torch.bfloat16
    scaler = (torch.amp.GradScaler(dev.type, enabled=precision == "fp16") if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler")
              else torch.cuda.amp.GradScaler(enabled=precision == "fp16"))
    stats = []

    def step():
        d.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=amp_dtype, enabled=use_amp):
            out_real = d(real).view(-1).float()
            fake = g(torch.randn(batch, nz, 1, 1, device=dev))
            out_fake = d(fake.detach()).view(-1).float()
        err_real = bce(out_real, ones)
        err_fake = bce(out_fake, zeros)
        scaler.scale(err_real).backward()
        scaler.scale(err_fake).backward()
        scaler.step(opt_d)
        g.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=amp_dtype, enabled=use_amp):
            out = d(fake).view(-1).float()
        err_g = bce(out, ones)
        scaler.scale(err_g).backward()
        scaler.step(opt_g)
        scaler.update()
        # The same statistics the engine reports each step, kept on the device as the engine does.
        stats.append(torch.stack([err_real + err_fake, err_g, torch.sigmoid(out_real).mean(),
                                  torch.sigmoid(out_fake).mean(), torch.sigmoid(out).mean()]).double())

    for _ in range(warmup):
        step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.stack(stats).cpu()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    rate = batch * steps / (time.perf_counter() - start)
    peak = torch.cuda.max_memory_allocated(dev) / 2**20 if dev.type == "cuda" else 0.0
    return rate, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan", help="path to the streetgan program")
    parser.add_argument("--preset", default="naive-64", choices=sorted(PRESETS))
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "bf16"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--compile", action="store_true",
                        help="also time torch.compile of the same step (PyTorch 2 only)")
    parser.add_argument("--cuda-graphs", action="store_true",
                        help="also time the engine's step as a CUDA graph (the cuda_graphs key; CUDA only)")
    parser.add_argument("--data", metavar="CACHE",
                        help="also time the engine on real batches from this image cache (needs --dataroot)")
    parser.add_argument("--dataroot", metavar="DIR", help="the data folder the cache was built from")
    parser.add_argument("--table-out", metavar="FILE", help="also write the result as a markdown table (header and row)")
    parser.add_argument("--reference-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.reference_only:
        rate, peak = reference_step_speed(args.preset, args.batch, args.steps, args.warmup, args.threads,
                                          args.device, args.precision, args.compile)
        print(json.dumps({"images_per_s": rate, "peak_mib": peak}))
        return 0
    if args.data and not args.dataroot:
        parser.error("--data needs --dataroot DIR (the folder the cache was built from)")
    if args.cuda_graphs and not args.device.startswith("cuda"):
        parser.error("--cuda-graphs needs --device cuda (CUDA graphs are a GPU feature)")

    common = ["--preset", args.preset, "--batch", str(args.batch), "--steps", str(args.steps),
              "--warmup", str(args.warmup), "--threads", str(args.threads), "--device", args.device,
              "--precision", args.precision]
    reference_args = [a for a in common]
    engine_args = common + (["--data", args.data, "--dataroot", args.dataroot] if args.data else [])
    engine, real, reference, reference_tuned, compiled, graphed = [], [], [], [], [], []
    peak = 0.0

    def run_reference(extra, env=None):
        out = subprocess.run([sys.executable, __file__, "--reference-only"] + reference_args + extra,
                             check=True, capture_output=True, text=True, env=env).stdout
        result = json.loads(out)
        return result["images_per_s"], result["peak_mib"]

    for rep in range(args.repeats):
        # Alternate the sides so drift in machine load hits all alike; each runs in its own process.
        out = json.loads(subprocess.run([args.streetgan, "bench", "train", "--json"] + engine_args,
                                        check=True, capture_output=True, text=True).stdout)
        engine.append(out["images_per_s"])
        if args.data:
            real.append(out["real_images_per_s"])
        if args.cuda_graphs:
            graphed.append(json.loads(subprocess.run([args.streetgan, "bench", "train", "--json", "--cuda-graphs", "on"] + common,
                                                     check=True, capture_output=True, text=True).stdout)["images_per_s"])
        rate, peak = run_reference([])
        reference.append(rate)
        # PyTorch as shipped runs a multi-threaded OpenBLAS under its OpenMP threads; the engine
        # keeps BLAS single-threaded. Show PyTorch with that setting too, for a fair picture.
        # (Off the CPU, BLAS threads play no part: the same figure as eager.)
        if args.device == "cpu":
            reference_tuned.append(run_reference([], dict(os.environ, OPENBLAS_NUM_THREADS="1"))[0])
        else:
            reference_tuned.append(rate)
        if args.compile:
            compiled.append(run_reference(["--compile"])[0])
        print(f"run {rep + 1}/{args.repeats}: streetgan {engine[-1]:.1f} img/s"
              + (f" (real data {real[-1]:.1f})" if real else "")
              + (f", as a CUDA graph {graphed[-1]:.1f}" if graphed else "")
              + f", pytorch eager {reference[-1]:.1f}, eager with OPENBLAS_NUM_THREADS=1 {reference_tuned[-1]:.1f}"
              + (f", torch.compile {compiled[-1]:.1f}" if compiled else "") + " img/s", file=sys.stderr)

    med = statistics.median
    e, r, t = med(engine), med(reference), med(reference_tuned)
    header = (f"{'preset':<10} {'batch':>5} {'threads':>7} {'device':<6} {'precision':<9} "
              f"{'streetgan img/s':>15} {'pytorch img/s':>13} {'ratio':>6} {'pytorch blas=1':>14} {'ratio':>6}")
    row = (f"{args.preset:<10} {args.batch:>5} {args.threads:>7} {args.device:<6} {args.precision:<9} "
           f"{e:>15.1f} {r:>13.1f} {e / r:>6.3f} {t:>14.1f} {e / t:>6.3f}")
    if compiled:
        c = med(compiled)
        header += f" {'compiled img/s':>14} {'ratio':>6}"
        row += f" {c:>14.1f} {e / c:>6.3f}"
    if graphed:
        header += f" {'graphs img/s':>12} {'ratio':>6}"
        row += f" {med(graphed):>12.1f} {med(graphed) / r:>6.3f}"
    if real:
        header += f" {'real img/s':>10} {'real share':>10}"
        row += f" {med(real):>10.1f} {100 * med(real) / e:>9.1f}%"
    if args.device.startswith("cuda"):
        header += f" {'pytorch peak MiB':>16}"
        row += f" {peak:>16.0f}"
    print(header)
    print(row)
    if args.table_out:
        cells = [("preset", args.preset), ("batch", str(args.batch)), ("precision", args.precision),
                 ("streetgan img/s", f"{e:.0f}"), ("pytorch eager img/s", f"{r:.0f}"), ("ratio", f"{e / r:.2f}")]
        if compiled:
            cells += [("torch.compile img/s", f"{med(compiled):.0f}"), ("ratio", f"{e / med(compiled):.2f}")]
        if graphed:
            cells += [("streetgan CUDA graphs img/s", f"{med(graphed):.0f}"), ("graphs / pytorch eager", f"{med(graphed) / r:.2f}")]
        if real:
            cells += [("real data share", f"{100 * med(real) / e:.0f}%")]
        if args.device.startswith("cuda"):
            cells += [("pytorch peak MiB", f"{peak:.0f}")]
        with open(args.table_out, "w") as table:
            table.write("| " + " | ".join(c[0] for c in cells) + " |\n")
            table.write("|" + "---|" * len(cells) + "\n")
            table.write("| " + " | ".join(c[1] for c in cells) + " |\n")
    print(f"(medians of {args.repeats} runs of {args.steps} steps each; "
          f"streetgan {', '.join(f'{x:.1f}' for x in engine)}; pytorch {', '.join(f'{x:.1f}' for x in reference)}; "
          f"pytorch blas=1 {', '.join(f'{x:.1f}' for x in reference_tuned)}"
          + (f"; compiled {', '.join(f'{x:.1f}' for x in compiled)}" if compiled else "")
          + (f"; CUDA graphs {', '.join(f'{x:.1f}' for x in graphed)}" if graphed else "")
          + (f"; real {', '.join(f'{x:.1f}' for x in real)}" if real else "") + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
