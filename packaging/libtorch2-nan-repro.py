#!/usr/bin/env python3
"""Checks whether this machine's PyTorch returns NaN gradients from a small DCGAN step on the CPU.

Debian trixie's PyTorch 2.6 (built against the system oneDNN 3.7.2) did, on one of this
project's 2-core AMD EPYC build machines, when more than one compute thread is used: a convolution's
backward pass returns NaN in some of its outputs in most runs (6 of 8 here; torch.autograd's
anomaly mode names ConvolutionBackward0), at the tiny test sizes and at naive-64's real sizes
alike. It does not happen with one thread (0 of 8), nor with oneDNN switched off
(torch.backends.mkldnn.enabled = False, but about 8x slower); the BLAS library and
ONEDNN_MAX_CPU_ISA=AVX2 do not remove it (the latter makes it rarer). Bookworm's LibTorch 1.13 trains without it.
On another of these machines, whose CPU has AVX2 but no AVX-512, it did not happen at all (0 of 22
runs with 2 threads, 2026-11-24), so it depends on the machine. No
StreetGAN code is involved: this script uses PyTorch alone, so it tells a LibTorch defect from one
of ours.

    python3 packaging/libtorch2-nan-repro.py [--threads 2] [--runs 8]

Each run is a fresh process (the fault depends on timing, so repeating in one process says
less); prints how many of the runs saw a non-finite gradient or loss, and exits 1 if any did.
"""
import argparse
import subprocess
import sys


def one_run(threads: int) -> bool:
    """Three D and G steps of a small DCGAN (B 8, nz 16, ngf = ndf = 8); True if all finite."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    torch.manual_seed(1)
    nz, ngf, ndf, batch = 16, 8, 8, 8
    generator = nn.Sequential(
        nn.ConvTranspose2d(nz, 8 * ngf, 4, 1, 0, bias=False), nn.BatchNorm2d(8 * ngf), nn.ReLU(True),
        nn.ConvTranspose2d(8 * ngf, 4 * ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(4 * ngf), nn.ReLU(True),
        nn.ConvTranspose2d(4 * ngf, 2 * ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * ngf), nn.ReLU(True),
        nn.ConvTranspose2d(2 * ngf, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
        nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh())
    discriminator = nn.Sequential(
        nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf, 2 * ndf, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * ndf), nn.LeakyReLU(0.2, True),
        nn.Conv2d(2 * ndf, 4 * ndf, 4, 2, 1, bias=False), nn.BatchNorm2d(4 * ndf), nn.LeakyReLU(0.2, True),
        nn.Conv2d(4 * ndf, 8 * ndf, 4, 2, 1, bias=False), nn.BatchNorm2d(8 * ndf), nn.LeakyReLU(0.2, True),
        nn.Conv2d(8 * ndf, 1, 4, 1, 0, bias=False))
    for module in list(generator) + list(discriminator):
        if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d)):
            nn.init.normal_(module.weight, 0.0, 0.02)
        elif isinstance(module, nn.BatchNorm2d):
            nn.init.normal_(module.weight, 1.0, 0.02)
            nn.init.zeros_(module.bias)
    opt_g = torch.optim.AdamW(generator.parameters(), 2e-4, betas=(0.5, 0.999), weight_decay=0.05)
    opt_d = torch.optim.AdamW(discriminator.parameters(), 2e-4, betas=(0.5, 0.999), weight_decay=0.05)
    ones, zeros = torch.ones(batch), torch.zeros(batch)

    def finite(tensors):
        return all(bool(torch.isfinite(t).all()) for t in tensors)

    for _ in range(3):
        real = torch.rand(batch, 3, 64, 64) * 2 - 1
        noise = torch.randn(batch, nz, 1, 1)
        opt_d.zero_grad(set_to_none=True)
        fake = generator(noise)
        loss_d = (F.binary_cross_entropy_with_logits(discriminator(real).reshape(-1), ones)
                  + F.binary_cross_entropy_with_logits(discriminator(fake.detach()).reshape(-1), zeros))
        loss_d.backward()
        if not finite([loss_d] + [p.grad for p in discriminator.parameters()]):
            return False
        opt_d.step()
        opt_g.zero_grad(set_to_none=True)
        loss_g = F.binary_cross_entropy_with_logits(discriminator(fake).reshape(-1), ones)
        loss_g.backward()
        if not finite([loss_g] + [p.grad for p in generator.parameters()]):
            return False
        opt_g.step()
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="compute threads (default 2)")
    parser.add_argument("--runs", type=int, default=8, help="fresh processes to try (default 8)")
    parser.add_argument("--one-run", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_run:
        return 0 if one_run(args.threads) else 1
    import torch

    bad = 0
    for _ in range(args.runs):
        result = subprocess.run([sys.executable, __file__, "--one-run", "--threads", str(args.threads)])
        bad += result.returncode != 0
    print(f"PyTorch {torch.__version__}, {args.threads} threads: "
          f"{bad} of {args.runs} runs had a non-finite gradient or loss")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
