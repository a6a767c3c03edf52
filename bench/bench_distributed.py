#!/usr/bin/python3
"""Gradient all-reduce of distributed training: bucketed (as `streetgan train` does it) against one
flat all-reduce of every gradient, beside the step's compute time, on real ranks.

Starts WORLD `streetgan bench allreduce` processes on this host (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT as torchrun sets them; Gloo on the CPU, NCCL on CUDA), REPEATS times per preset, and
prints the medians of rank 0's figures: the step alone, the whole step in the group (all-reduces,
the statistics' mean and rank 0's BatchNorm statistics included), the bucketed and the flat
all-reduce of both nets' gradients, and bucketed / flat (target: at most 1.2).

  bench/bench_distributed.py --streetgan build/app/cli/streetgan --world 2 --threads 1

On a GPU host with one GPU: --device cuda --world 1 gives NCCL's overhead at world size 1
(step in group / step alone; target: at most 1.02).
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_job(args, preset):
    port = free_port()
    procs = []
    for rank in range(args.world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(args.world), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(args.world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        cmd = [args.streetgan, "bench", "allreduce", "--preset", preset, "--batch", str(args.batch),
               "--repeats", str(args.steps), "--threads", str(args.threads), "--device", args.device]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = [p.communicate() for p in procs]
    for p, (out, err) in zip(procs, outputs):
        if p.returncode != 0:
            sys.exit(f"bench_distributed.py: a rank failed ({p.returncode}): {err.strip()}")
    return json.loads(outputs[0][0])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--presets", default="naive-64,safe-128")
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32, help="batch size of each rank")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of each rank")
    parser.add_argument("--steps", type=int, default=10, help="timed repeats inside each job")
    parser.add_argument("--repeats", type=int, default=5, help="jobs per preset (medians over them)")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    keys = ["step_ms", "step_in_group_ms", "bucketed_ms", "flat_ms", "bucketed_over_flat"]
    print(f"{'preset':<10} {'world':>5} {'backend':<7} {'grad MB':>8} {'buckets':>7} {'step ms':>9} "
          f"{'in group':>9} {'bucketed':>9} {'flat':>9} {'b/flat':>7} {'allreduce/step':>14}")
    for preset in args.presets.split(","):
        runs = [run_job(args, preset) for _ in range(args.repeats)]
        m = {k: statistics.median(r[k] for r in runs) for k in keys}
        first = runs[0]
        print(f"{preset:<10} {first['world_size']:>5} {first['backend']:<7} {first['gradient_mb']:>8.1f} "
              f"{first['buckets']:>7} {m['step_ms']:>9.1f} {m['step_in_group_ms']:>9.1f} {m['bucketed_ms']:>9.2f} "
              f"{m['flat_ms']:>9.2f} {m['bucketed_over_flat']:>7.2f} {m['bucketed_ms'] / m['step_ms']:>13.1%}")
        for k in ("bucketed_over_flat", "step_ms", "bucketed_ms"):
            print(f"  runs {k}: " + ", ".join(f"{r[k]:.3g}" for r in runs))


if __name__ == "__main__":
    main()
