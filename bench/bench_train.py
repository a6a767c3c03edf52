#!/usr/bin/python3
"""Training-step speed: StreetGAN's C++ engine against PyTorch doing the same DCGAN step, side by side.

Runs `streetgan bench train` and the same step written in PyTorch (Debian's python3-torch, the
reference) alternately, REPEATS times each, each run in its own process, on synthetic tensors, and
prints per side the median images/s, every run, and ours' lead (ours / that side; above 1 means
the engine is faster). The PyTorch sides (--variants):
  eager     the step as written, PyTorch's defaults (the tool we replace: a training script)
  tuned     what a competent researcher runs today: channels-last models and inputs, AdamW with
            fused=True where this PyTorch has it (else foreach=True), cudnn.benchmark on CUDA,
            OPENBLAS_NUM_THREADS=1 on the CPU (LibTorch's OpenMP threads over a one-thread BLAS)
  compile   tuned + torch.compile of G and D (Inductor; PyTorch 2; on the CPU its C++ backend)
  max-autotune   tuned + torch.compile(mode="max-autotune-no-cudagraphs")
  reduce-overhead   tuned + torch.compile(mode="reduce-overhead"): its CUDA graphs (CUDA only)
Ours runs eager and, with --cuda-graphs, as a CUDA graph (`bench train --cuda-graphs on`). The
ratio that counts is ours' best against PyTorch's best. Last, the physical limit: the step's
convolution FLOPs per image against this device's measured GEMM rate (step_work), and each side's
share of it. Neither side copies the step's statistics to the host each step. Each reference
prints its settings in the header.

  bench/bench_train.py --streetgan build/app/cli/streetgan --preset naive-64 --batch 64 --threads 2 \
      [--variants eager,tuned,compile] [--out bench/results/train-DATE.jsonl]

On a GPU host, one command gives the GPU table (--compile adds every compile variant the device
has; --data also times the engine on real batches from a cache, as a share of synthetic ones):

  bench/bench_train.py --device cuda --precision bf16 --compile --cuda-graphs --batch 256 \
      --data CACHE --dataroot DIR

Reference only: python3-torch is never a runtime dependency of StreetGAN.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402

PRESETS = {  # nz, ngf, ndf, img_size (as core/config/train_config.cpp)
    "naive-64": (100, 64, 64, 64),
    "safe-64": (256, 256, 64, 64),
    "safe-128": (256, 256, 128, 128),
}
LIMIT_SIDE = "limit: the GEMM rate over the step's FLOPs"
BASELINE_SIDE = "baseline: another build of ours (--baseline)"
COMPILE_MODES = {"compile": "default", "max-autotune": "max-autotune-no-cudagraphs", "reduce-overhead": "reduce-overhead"}


def adamw(torch, params, tuned):
    """AdamW as the engine's (lr 2e-4, betas 0.5/0.999, decay 0.05); tuned: fused, else foreach."""
    options = dict(lr=2e-4, betas=(0.5, 0.999), weight_decay=0.05)
    if not tuned:
        return torch.optim.AdamW(params, **options), "AdamW (defaults)"
    params = list(params)
    try:  # raises where this PyTorch has no fused AdamW for the parameters' device
        return torch.optim.AdamW(params, fused=True, **options), "AdamW(fused=True)"
    except (TypeError, RuntimeError):
        return torch.optim.AdamW(params, foreach=True, **options), "AdamW(foreach=True) (no fused AdamW here)"


def build_models(torch, preset, device, variant):
    import torch.nn as nn
    from dcgan_layers import discriminator_layers, generator_layers

    nz, ngf, ndf, img = PRESETS[preset]
    torch.manual_seed(0)
    g, d = nn.Sequential(*generator_layers(nz, ngf, 3, img)), nn.Sequential(*discriminator_layers(ndf, 3, img))

    def init(m):
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.normal_(m.weight, 1.0, 0.02)
            nn.init.zeros_(m.bias)

    g.apply(init)
    d.apply(init)
    tuned = variant != "eager"
    memory_format = torch.channels_last if tuned else torch.contiguous_format
    return g.to(device, memory_format=memory_format), d.to(device, memory_format=memory_format), memory_format


def reference_step_speed(args):
    """One process: the variant's step, warmed up, then timed; returns its rate, peak and settings."""
    import torch

    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    variant = args.reference_only
    settings = {"torch": torch.__version__, "threads": torch.get_num_threads(),
                "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "(default)")}
    if dev.type == "cuda" and variant != "eager":
        torch.backends.cudnn.benchmark = True
        settings["cudnn.benchmark"] = True
    g, d, memory_format = build_models(torch, args.preset, dev, variant)
    settings["memory format"] = "channels_last" if memory_format == torch.channels_last else "contiguous"
    if variant in COMPILE_MODES:
        if not hasattr(torch, "compile"):
            sys.exit(f"{variant} needs PyTorch 2 (torch.compile); this is PyTorch {torch.__version__}")
        g, d = torch.compile(g, mode=COMPILE_MODES[variant]), torch.compile(d, mode=COMPILE_MODES[variant])
        settings["torch.compile"] = COMPILE_MODES[variant]
    opt_g, settings["optimizer"] = adamw(torch, g.parameters(), variant != "eager")
    opt_d, _ = adamw(torch, d.parameters(), variant != "eager")
    nz, _, _, img = PRESETS[args.preset]
    batch = args.batch
    bce = torch.nn.BCEWithLogitsLoss()
    real = (torch.rand(batch, 3, img, img, device=dev) * 2 - 1).contiguous(memory_format=memory_format)
    ones, zeros = torch.ones(batch, device=dev), torch.zeros(batch, device=dev)
    use_amp = args.precision != "fp32"
    amp_dtype = torch.float16 if args.precision == "fp16" else torch.bfloat16
    scaler = torch.amp.GradScaler(dev.type, enabled=args.precision == "fp16") if hasattr(torch.amp, "GradScaler") \
        else torch.cuda.amp.GradScaler(enabled=args.precision == "fp16")
    stats = []

    def step():
        d.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=amp_dtype, enabled=use_amp):
            out_real = d(real).view(-1).float()
            fake = g(torch.randn(batch, nz, 1, 1, device=dev))
            out_fake = d(fake.detach()).view(-1).float()
        err_real, err_fake = bce(out_real, ones), bce(out_fake, zeros)
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
        # The statistics the engine reports each step, kept on the device as the engine does.
        stats.append(torch.stack([err_real + err_fake, err_g, torch.sigmoid(out_real).mean(),
                                  torch.sigmoid(out_fake).mean(), torch.sigmoid(out).mean()]).double())

    warm = time.perf_counter()
    for _ in range(args.warmup):
        step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    settings["warm-up s (compiling included)"] = round(time.perf_counter() - warm, 1)
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.stack(stats).cpu()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    rate = batch * args.steps / (time.perf_counter() - start)
    peak = torch.cuda.max_memory_allocated(dev) / 2**20 if dev.type == "cuda" else 0.0
    return {"images_per_s": rate, "peak_mib": peak, "settings": settings}


def step_work(args):
    """One process: the step's convolution work per image and this device's measured GEMM rate.

    A step is D forward on the real and the fake batch and their backward (2 each), G forward, then
    D forward on the fake again and its backward, and G's backward: 9 D forwards and 3 G forwards of
    work per image (a backward costs two forwards: the input's and the weights' gradients). Counted
    are the convolutions' multiply-adds (2 FLOPs each), the work a GEMM rate bounds; BatchNorm,
    activations and AdamW are memory-bound and left out. The rate: the best of 5 square float
    matrix products (torch.mm 2048, the step's precision) on the same threads."""
    import torch
    import torch.nn as nn

    torch.set_num_threads(args.threads)
    g, d, _ = build_models(torch, args.preset, torch.device("cpu"), "eager")
    macs = {"g": 0, "d": 0}

    def counter(net):
        def hook(module, inputs, output):
            if isinstance(module, nn.Conv2d):
                macs[net] += output.numel() * module.in_channels * module.kernel_size[0] * module.kernel_size[1]
            elif isinstance(module, nn.ConvTranspose2d):
                macs[net] += inputs[0].numel() * module.out_channels * module.kernel_size[0] * module.kernel_size[1]
        return hook

    for net, model in (("g", g), ("d", d)):
        for module in model.modules():
            module.register_forward_hook(counter(net))
    nz, _, _, _ = PRESETS[args.preset]
    with torch.no_grad():
        d(g(torch.randn(1, nz, 1, 1)))
    flops = 2 * (9 * macs["d"] + 3 * macs["g"])
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.precision]
    rate, gemm = bench_record.gemm_rate(torch, dtype, args.device)
    return {"flops_per_image": flops, "gemm_flops_per_s": rate, "gemm": gemm}


def measure_limit(args):
    """The physical limit of the step on this device: its GEMM rate over the step's FLOPs per image."""
    command = [sys.executable, os.path.abspath(__file__), "--work-only", "--preset", args.preset, "--threads",
               str(args.threads), "--device", args.device, "--precision", args.precision]
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"bench_train.py: measuring the GEMM rate failed: {done.stderr.strip()[-2000:]}")
    work = json.loads(done.stdout.strip().splitlines()[-1])
    work["images_per_s"] = work["gemm_flops_per_s"] / work["flops_per_image"]
    return work


def default_variants(args):
    variants = ["eager", "tuned"]
    if args.compile:
        variants += ["compile", "max-autotune"] + (["reduce-overhead"] if args.device.startswith("cuda") else [])
    return variants


def run_ours(args, extra, streetgan=None):
    engine_args = ["--preset", args.preset, "--batch", str(args.batch), "--steps", str(args.steps), "--warmup",
                   str(args.warmup), "--threads", str(args.threads), "--device", args.device, "--precision", args.precision]
    return json.loads(subprocess.run([streetgan or args.streetgan, "bench", "train", "--json"] + engine_args + extra,
                                     check=True, capture_output=True, text=True).stdout)


def run_reference(args, variant):
    env = dict(os.environ)
    if variant != "eager" and args.device == "cpu":
        env["OPENBLAS_NUM_THREADS"] = "1"
    command = [sys.executable, os.path.abspath(__file__), "--reference-only", variant, "--preset", args.preset,
               "--batch", str(args.batch), "--steps", str(args.steps), "--warmup", str(args.warmup),
               "--threads", str(args.threads), "--device", args.device, "--precision", args.precision]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"bench_train.py: the {variant} reference failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(args, variants):
    """name → runs (img/s), alternating ours and each reference; plus each reference's settings."""
    runs, settings, peak = {}, {}, {}
    for rep in range(args.repeats):
        out = run_ours(args, ["--data", args.data, "--dataroot", args.dataroot] if args.data else [])
        runs.setdefault("ours", []).append(out["images_per_s"])
        if args.data:
            runs.setdefault("ours, real batches", []).append(out["real_images_per_s"])
        if args.cuda_graphs:
            runs.setdefault("ours, CUDA graph", []).append(run_ours(args, ["--cuda-graphs", "on"])["images_per_s"])
        if args.baseline:
            runs.setdefault(BASELINE_SIDE, []).append(run_ours(args, [], args.baseline)["images_per_s"])
        for variant in variants:
            result = run_reference(args, variant)
            runs.setdefault(f"pytorch {variant}", []).append(result["images_per_s"])
            settings[f"pytorch {variant}"], peak[f"pytorch {variant}"] = result["settings"], result["peak_mib"]
        print(f"run {rep + 1}/{args.repeats}: " + ", ".join(f"{name} {r[-1]:.1f}" for name, r in runs.items())
              + " img/s", file=sys.stderr)
    return runs, settings, peak


def report(args, runs, settings, peak):
    med = statistics.median
    ours = {n: med(r) for n, r in runs.items() if n.startswith("ours") and "real" not in n}
    theirs = {n: med(r) for n, r in runs.items() if n.startswith("pytorch")}
    best_ours, best_theirs = max(ours, key=ours.get), max(theirs, key=theirs.get)
    case = f"{args.preset} batch {args.batch} {args.device} {args.precision} {args.threads} threads"
    print(f"{case}; medians of {args.repeats} runs of {args.steps} steps after {args.warmup} warm-up steps")
    for name, setting in settings.items():
        print(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in setting.items()))
    print(f"{'side':<26} {'img/s':>9} {'ours leads':>10}  runs")
    for name, values in runs.items():
        lead = "" if name.startswith("ours") else f"{ours[best_ours] / med(values):.2f}x"
        print(f"{name:<26} {med(values):>9.1f} {lead:>10}  " + ", ".join(f"{v:.1f}" for v in values))
        bench_record.write(args.out, bench="train", case=case, side=name, runs=values, unit="img/s", better="higher",
                           settings=settings.get(name, {}), streetgan=args.streetgan if name.startswith("ours") else
                           args.baseline if name == BASELINE_SIDE else None,
                           peak_mib=peak.get(name))
    print(f"the ratio that counts: {best_ours} / {best_theirs} = {ours[best_ours] / theirs[best_theirs]:.2f}")
    limit = measure_limit(args)
    print(f"the limit: {limit['flops_per_image'] / 1e9:.3f} GFLOP of convolutions per image (9 D + 3 G forwards) at "
          f"{limit['gemm_flops_per_s'] / 1e9:.0f} GFLOP/s ({limit['gemm']}) = {limit['images_per_s']:.1f} img/s; "
          f"ours' best is {ours[best_ours] / limit['images_per_s']:.0%} of it, PyTorch's best "
          f"{theirs[best_theirs] / limit['images_per_s']:.0%}")
    bench_record.write(args.out, bench="train", case=case, side=LIMIT_SIDE, runs=[limit["images_per_s"]], unit="img/s",
                       better="higher", settings={k: v for k, v in limit.items() if k != "images_per_s"})
    if args.table_out:
        cells = [("preset", args.preset), ("batch", str(args.batch)), ("precision", args.precision)]
        for name, values in runs.items():
            cells.append((f"{name} img/s", f"{med(values):.0f}"))
        cells += [("ours' best / PyTorch's best", f"{ours[best_ours] / theirs[best_theirs]:.2f}")]
        if args.device.startswith("cuda"):
            cells += [("pytorch peak MiB", f"{max(peak.values()):.0f}")]
        with open(args.table_out, "w") as table:
            table.write("| " + " | ".join(c[0] for c in cells) + " |\n|" + "---|" * len(cells) + "\n")
            table.write("| " + " | ".join(c[1] for c in cells) + " |\n")


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
    parser.add_argument("--variants", help="comma-separated PyTorch sides (default eager,tuned, plus --compile's)")
    parser.add_argument("--compile", action="store_true", help="add the torch.compile sides the device has (PyTorch 2)")
    parser.add_argument("--cuda-graphs", action="store_true",
                        help="also time the engine's step as a CUDA graph (the cuda_graphs key; CUDA only)")
    parser.add_argument("--data", metavar="CACHE",
                        help="also time the engine on real batches from this image cache (needs --dataroot)")
    parser.add_argument("--dataroot", metavar="DIR", help="the data folder the cache was built from")
    parser.add_argument("--baseline", metavar="STREETGAN",
                        help="another build of streetgan (before a change), run as one more side, alternating")
    parser.add_argument("--out", metavar="FILE", help="append one bench_record.py line per side (bench/results/)")
    parser.add_argument("--table-out", metavar="FILE", help="also write the result as a markdown table (header and row)")
    parser.add_argument("--reference-only", metavar="VARIANT", help=argparse.SUPPRESS)
    parser.add_argument("--work-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.work_only:
        print(json.dumps(step_work(args)))
        return 0
    if args.reference_only:
        print(json.dumps(reference_step_speed(args)))
        return 0
    if args.data and not args.dataroot:
        parser.error("--data needs --dataroot DIR (the folder the cache was built from)")
    if args.cuda_graphs and not args.device.startswith("cuda"):
        parser.error("--cuda-graphs needs --device cuda (CUDA graphs are a GPU feature)")
    variants = args.variants.split(",") if args.variants else default_variants(args)
    unknown = [v for v in variants if v not in ["eager", "tuned"] + list(COMPILE_MODES)]
    if unknown:
        parser.error(f"unknown variant {unknown[0]!r}; allowed: eager, tuned, " + ", ".join(COMPILE_MODES))
    if "reduce-overhead" in variants and not args.device.startswith("cuda"):
        parser.error("the reduce-overhead variant is torch.compile's CUDA graphs: it needs --device cuda")
    report(args, *measure(args, variants))
    return 0


if __name__ == "__main__":
    sys.exit(main())
