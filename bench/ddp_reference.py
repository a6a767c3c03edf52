#!/usr/bin/python3
"""One rank of bench_distributed.py's reference: the DCGAN step in PyTorch as a researcher would
train it on several ranks today, with DistributedDataParallel (Gloo on the CPU, NCCL on CUDA).

The step is bench_train.py's tuned one (channels-last models and inputs, fused or foreach AdamW,
fp32): D on the real and on the detached fake batch with one backward, then G through D's own
module (so that D's gradients of the G step are not all-reduced). Both nets are wrapped in
DistributedDataParallel (25 MB buckets, its default) with broadcast_buffers=False: its broadcast at
every forward changes BatchNorm's running statistics in place between D's two forwards and their
one backward, which autograd refuses; rank 0's BatchNorm buffers are broadcast once at the end of
each step instead, as the engine does. Each timed step starts after a barrier, as `streetgan bench allreduce` does.
Reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT; rank 0 prints one JSON line: the medians of
the step alone (the plain modules, no group) and of the step in the group.

  RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 bench/ddp_reference.py --preset naive-64 &
  RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 bench/ddp_reference.py --preset naive-64
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_train import PRESETS, adamw, build_models  # noqa: E402  (imports neither numpy nor torch)


def make_step(torch, g, d, opt_g, opt_d, real, nz, sync_buffers=None):
    """The step on (g, d); d_plain is D's own module (d itself without DDP)."""
    batch, dev = real.shape[0], real.device
    bce = torch.nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(batch, device=dev), torch.zeros(batch, device=dev)
    d_plain = getattr(d, "module", d)

    def step():
        d.zero_grad(set_to_none=True)
        out_real = d(real).view(-1)
        fake = g(torch.randn(batch, nz, 1, 1, device=dev))
        out_fake = d(fake.detach()).view(-1)
        (bce(out_real, ones) + bce(out_fake, zeros)).backward()
        opt_d.step()
        g.zero_grad(set_to_none=True)
        bce(d_plain(fake).view(-1), ones).backward()
        opt_g.step()
        if sync_buffers:
            sync_buffers()
    return step


def timed(torch, dev, steps, step, barrier):
    ms = []
    for _ in range(steps):
        barrier()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        step()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        ms.append(1000 * (time.perf_counter() - start))
    return ms


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="naive-64", choices=sorted(PRESETS))
    parser.add_argument("--batch", type=int, default=32, help="batch size of each rank")
    parser.add_argument("--steps", type=int, default=10, help="timed steps of each kind")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    dist.init_process_group("nccl" if dev.type == "cuda" else "gloo")
    rank = dist.get_rank()
    g, d, memory_format = build_models(torch, args.preset, dev, "tuned")
    opt_g, optimizer = adamw(torch, g.parameters(), True)
    opt_d, _ = adamw(torch, d.parameters(), True)
    nz, _, _, img = PRESETS[args.preset]
    torch.manual_seed(1 + rank)
    real = (torch.rand(args.batch, 3, img, img, device=dev) * 2 - 1).contiguous(memory_format=memory_format)

    alone = make_step(torch, g, d, opt_g, opt_d, real, nz)
    for _ in range(2):
        alone()
    alone_ms = timed(torch, dev, args.steps, alone, dist.barrier)
    ids = [dev.index] if dev.type == "cuda" else None
    buffers = [b for net in (g, d) for b in net.buffers()]

    def sync_buffers():
        for b in buffers:
            dist.broadcast(b, 0)

    ddp = {"device_ids": ids, "broadcast_buffers": False}
    in_group = make_step(torch, DistributedDataParallel(g, **ddp), DistributedDataParallel(d, **ddp),
                         opt_g, opt_d, real, nz, sync_buffers)
    for _ in range(2):
        in_group()
    group_ms = timed(torch, dev, args.steps, in_group, dist.barrier)
    if rank == 0:
        print(json.dumps({"preset": args.preset, "batch": args.batch, "world_size": dist.get_world_size(),
                          "backend": dist.get_backend(), "threads": torch.get_num_threads(), "torch": torch.__version__,
                          "optimizer": optimizer, "memory format": "channels_last",
                          "step_ms": statistics.median(alone_ms), "step_in_group_ms": statistics.median(group_ms)}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
