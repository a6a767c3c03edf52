#!/usr/bin/python3
"""Training-step speed: StreetGAN's C++ engine against PyTorch eager mode, side by side.

Runs `streetgan bench train` and the same DCGAN step written in PyTorch (Debian's python3-torch,
the reference implementation) alternately, REPEATS times each, on synthetic tensors, and prints
the median images/s of both and their ratio (C++ / PyTorch; above 1 means the engine is faster).

  bench/bench_train.py --streetgan build/app/cli/streetgan --preset naive-64 --batch 64 --threads 2

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


def reference_step_speed(preset, batch, steps, warmup, threads, device, precision):
    import torch
    import torch.nn as nn

    torch.set_num_threads(threads)
    nz, ngf, ndf, img = PRESETS[preset]
    nc = 3
    top = 8 if img == 64 else 16

    def generator():
        layers = [nn.ConvTranspose2d(nz, top * ngf, 4, 1, 0, bias=False), nn.BatchNorm2d(top * ngf), nn.ReLU(True)]
        mult = top
        while mult > 1:
            layers += [nn.ConvTranspose2d(mult * ngf, mult // 2 * ngf, 4, 2, 1, bias=False),
                       nn.BatchNorm2d(mult // 2 * ngf), nn.ReLU(True)]
            mult //= 2
        layers += [nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh()]
        return nn.Sequential(*layers)

    def discriminator():
        layers = [nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True)]
        mult = 1
        while mult < top:
            layers += [nn.Conv2d(mult * ndf, 2 * mult * ndf, 4, 2, 1, bias=False),
                       nn.BatchNorm2d(2 * mult * ndf), nn.LeakyReLU(0.2, inplace=True)]
            mult *= 2
        layers += [nn.Conv2d(top * ndf, 1, 4, 1, 0, bias=False)]
        return nn.Sequential(*layers)

    def init(m):
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.normal_(m.weight, 1.0, 0.02)
            nn.init.zeros_(m.bias)

    dev = torch.device(device)
    torch.manual_seed(0)
    g, d = generator().to(dev), discriminator().to(dev)
    g.apply(init)
    d.apply(init)
    opt_g = torch.optim.AdamW(g.parameters(), lr=2e-4, betas=(0.5, 0.999), weight_decay=0.05)
    opt_d = torch.optim.AdamW(d.parameters(), lr=2e-4, betas=(0.5, 0.999), weight_decay=0.05)
    bce = nn.BCEWithLogitsLoss()
    real = torch.rand(batch, nc, img, img, device=dev) * 2 - 1
    ones = torch.ones(batch, device=dev)
    zeros = torch.zeros(batch, device=dev)
    use_amp = precision != "fp32"
    amp_dtype = torch.float16 if precision == "fp16" else torch.bfloat16
    scaler = torch.cuda.amp.GradScaler(enabled=precision == "fp16")

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
        # The same statistics the engine reports each step.
        torch.stack([err_real + err_fake, err_g, torch.sigmoid(out_real).mean(),
                     torch.sigmoid(out_fake).mean(), torch.sigmoid(out).mean()]).double().cpu()

    for _ in range(warmup):
        step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    return batch * steps / (time.perf_counter() - start)


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
    parser.add_argument("--reference-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.reference_only:
        print(json.dumps({"images_per_s": reference_step_speed(args.preset, args.batch, args.steps, args.warmup,
                                                               args.threads, args.device, args.precision)}))
        return 0

    common = ["--preset", args.preset, "--batch", str(args.batch), "--steps", str(args.steps),
              "--warmup", str(args.warmup), "--threads", str(args.threads), "--device", args.device,
              "--precision", args.precision]
    engine, reference, reference_tuned = [], [], []
    for rep in range(args.repeats):
        # Alternate the two so drift in machine load hits both alike; each runs in its own process.
        out = subprocess.run([args.streetgan, "bench", "train", "--json"] + common,
                             check=True, capture_output=True, text=True).stdout
        engine.append(json.loads(out)["images_per_s"])
        out = subprocess.run([sys.executable, __file__, "--reference-only"] + common,
                             check=True, capture_output=True, text=True).stdout
        reference.append(json.loads(out)["images_per_s"])
        # PyTorch as shipped runs a multi-threaded OpenBLAS under its OpenMP threads; the engine
        # keeps BLAS single-threaded. Show PyTorch with that setting too, for a fair picture.
        out = subprocess.run([sys.executable, __file__, "--reference-only"] + common,
                             check=True, capture_output=True, text=True,
                             env=dict(os.environ, OPENBLAS_NUM_THREADS="1")).stdout
        reference_tuned.append(json.loads(out)["images_per_s"])
        print(f"run {rep + 1}/{args.repeats}: streetgan {engine[-1]:.1f} img/s, pytorch eager {reference[-1]:.1f} img/s, "
              f"pytorch eager with OPENBLAS_NUM_THREADS=1 {reference_tuned[-1]:.1f} img/s", file=sys.stderr)

    e, r, t = statistics.median(engine), statistics.median(reference), statistics.median(reference_tuned)
    print(f"{'preset':<10} {'batch':>5} {'threads':>7} {'device':<6} {'precision':<9} "
          f"{'streetgan img/s':>15} {'pytorch img/s':>13} {'ratio':>6} {'pytorch blas=1':>14} {'ratio':>6}")
    print(f"{args.preset:<10} {args.batch:>5} {args.threads:>7} {args.device:<6} {args.precision:<9} "
          f"{e:>15.1f} {r:>13.1f} {e / r:>6.3f} {t:>14.1f} {e / t:>6.3f}")
    print(f"(medians of {args.repeats} runs of {args.steps} steps each; "
          f"streetgan {', '.join(f'{x:.1f}' for x in engine)}; pytorch {', '.join(f'{x:.1f}' for x in reference)}; "
          f"pytorch blas=1 {', '.join(f'{x:.1f}' for x in reference_tuned)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
