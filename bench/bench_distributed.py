#!/usr/bin/python3
"""Distributed training on real ranks: ours' step in the group against PyTorch's
DistributedDataParallel on the same step (bench/ddp_reference.py, tuned as bench_train.py's tuned
side), and ours' gradient all-reduce, bucketed (as `streetgan train` does it) against one flat
all-reduce of every gradient. Ours' jobs and the reference's alternate.

Starts WORLD `streetgan bench allreduce` processes on this host (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT as torchrun sets them; Gloo on the CPU, NCCL on CUDA), REPEATS times per preset, and
prints the medians of rank 0's figures: the step alone, the whole step in the group (all-reduces,
the statistics' mean and rank 0's BatchNorm statistics included), the bucketed and the flat
all-reduce of both nets' gradients, and bucketed / flat (target: at most 1.2); then the DDP
jobs' step alone and in the group. --out FILE appends bench_record.py lines (bench "distributed").

  bench/bench_distributed.py --streetgan build/app/cli/streetgan --world 2 --threads 1 [--out FILE]

On a GPU host with one GPU: --device cuda --world 1 gives NCCL's overhead at world size 1
(step in group / step alone; target: at most 1.02).

--hosts H (root, iproute2) also runs each job on H "hosts": Linux network namespaces joined by a
bridge (prefix "sgb-", removed at the end and at the start), WORLD / H ranks each, Gloo on each
host's own interface; a row per layout, and the hosts' all-reduce over one host's. veth is not a
real network (no wire, no switch, the same kernel): the figure is for regressions, not for a
cluster's speed.

  bench/bench_distributed.py --streetgan build/app/cli/streetgan --world 4 --hosts 2
"""
import argparse
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402  (imports neither numpy nor torch)

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PREFIX = "sgb"
RUNNING = []  # the ranks of the job in progress, killed when the script is stopped


def ip(*words, check=True):
    return subprocess.run(["ip", *words], check=check, capture_output=True, text=True)


def remove_hosts():
    for line in ip("netns", "list", check=False).stdout.splitlines():
        if line.split(" ")[0].startswith(PREFIX + "-"):
            ip("netns", "del", line.split(" ")[0], check=False)
    for line in ip("-o", "link", "show", check=False).stdout.splitlines():
        name = line.split(": ")[1].split("@")[0]
        if name.startswith(PREFIX + "-"):
            ip("link", "del", name, check=False)


def make_hosts(count):
    """count namespaces on one bridge; host h is 10.214.0.(h+1) on interface sgb-p<h>."""
    remove_hosts()
    ip("link", "add", PREFIX + "-br", "type", "bridge")
    ip("link", "set", PREFIX + "-br", "up")
    for h in range(count):
        ns, outside, inside = f"{PREFIX}-h{h}", f"{PREFIX}-v{h}", f"{PREFIX}-p{h}"
        ip("netns", "add", ns)
        ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        ip("link", "set", inside, "netns", ns)
        ip("link", "set", outside, "master", PREFIX + "-br")
        ip("link", "set", outside, "up")
        ip("-n", ns, "addr", "add", f"10.214.0.{h + 1}/24", "dev", inside)
        ip("-n", ns, "link", "set", inside, "up")
        ip("-n", ns, "link", "set", "lo", "up")


def ours_command(args, preset):
    return [args.streetgan, "bench", "allreduce", "--preset", preset, "--batch", str(args.batch),
            "--repeats", str(args.steps), "--threads", str(args.threads), "--device", args.device]


def reference_command(args, preset):
    return ["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ddp_reference.py"),
            "--preset", preset, "--batch", str(args.batch), "--steps", str(args.steps), "--threads", str(args.threads),
            "--device", args.device]


def run_job(args, preset, hosts=0, command=ours_command):
    """One job of args.world ranks: on this host, or spread over `hosts` namespaces."""
    port = free_port()
    token = secrets.token_hex(32)  # the job's token, as `streetgan train --nproc` makes one
    procs = []
    per_host = args.world // hosts if hosts else args.world
    for rank in range(args.world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(args.world), LOCAL_RANK=str(rank % per_host),
                   LOCAL_WORLD_SIZE=str(per_host), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   STREETGAN_JOB_TOKEN=token)
        cmd = command(args, preset)
        if hosts:
            host = rank // per_host
            env.update(MASTER_ADDR="10.214.0.1", GLOO_SOCKET_IFNAME=f"{PREFIX}-p{host}", GROUP_RANK=str(host))
            cmd = ["ip", "netns", "exec", f"{PREFIX}-h{host}", *cmd]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    RUNNING[:] = procs
    outputs = [p.communicate() for p in procs]
    for p, (out, err) in zip(procs, outputs):
        if p.returncode != 0:
            sys.exit(f"bench_distributed.py: a rank failed ({p.returncode}): {err.strip()}")
    return json.loads(outputs[0][0])


def main():
    # A timeout's SIGTERM still removes the namespaces (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", default="build/app/cli/streetgan")
    parser.add_argument("--presets", default="naive-64,safe-128")
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32, help="batch size of each rank")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of each rank")
    parser.add_argument("--steps", type=int, default=10, help="timed repeats inside each job")
    parser.add_argument("--repeats", type=int, default=5, help="jobs per preset (medians over them)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--no-reference", dest="reference", action="store_false",
                        help="skip the PyTorch DistributedDataParallel jobs (bench/ddp_reference.py)")
    parser.add_argument("--out", metavar="FILE", help="append one bench_record.py line per case and side")
    parser.add_argument("--hosts", type=int, default=0,
                        help="also spread each job over this many network-namespace hosts (root; 0: off)")
    args = parser.parse_args()
    bench_record.set_threads(args.threads)  # both sides' ranks inherit it
    if args.hosts:
        if args.hosts < 2 or args.world % args.hosts:
            sys.exit("bench_distributed.py: --hosts needs 2 or more hosts that divide --world")
        try:
            make_hosts(args.hosts)
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            remove_hosts()
            sys.exit(f"bench_distributed.py: cannot make network namespaces (root and iproute2 are needed): {e}")
        try:
            compare_hosts(args)
        finally:
            for p in RUNNING:
                p.kill()
                p.wait()
            remove_hosts()
        return

    compare_reference(args)


def case_name(args, preset, what, layout=None):
    layout = layout or f"{args.world} ranks"
    return f"{preset}, {layout} × {args.threads} thread, batch {args.batch} per rank: {what}"


def compare_reference(args):
    """Per preset: ours' job and the PyTorch DDP job, alternating, REPEATS of each."""
    keys = ["step_ms", "step_in_group_ms", "bucketed_ms", "flat_ms", "bucketed_over_flat"]
    print(f"{'preset':<10} {'world':>5} {'backend':<7} {'grad MB':>8} {'buckets':>7} {'step ms':>9} "
          f"{'in group':>9} {'bucketed':>9} {'flat':>9} {'b/flat':>7} {'allreduce/step':>14} "
          f"{'DDP step':>9} {'DDP in group':>12}")
    for preset in args.presets.split(","):
        runs, reference = [], []
        for _ in range(args.repeats):
            runs.append(run_job(args, preset))
            if args.reference:
                reference.append(run_job(args, preset, command=reference_command))
        m = {k: statistics.median(r[k] for r in runs) for k in keys}
        ref = {k: statistics.median(r[k] for r in reference) if reference else float("nan")
               for k in ("step_ms", "step_in_group_ms")}
        first = runs[0]
        print(f"{preset:<10} {first['world_size']:>5} {first['backend']:<7} {first['gradient_mb']:>8.1f} "
              f"{first['buckets']:>7} {m['step_ms']:>9.1f} {m['step_in_group_ms']:>9.1f} {m['bucketed_ms']:>9.2f} "
              f"{m['flat_ms']:>9.2f} {m['bucketed_over_flat']:>7.2f} {m['bucketed_ms'] / m['step_ms']:>13.1%} "
              f"{ref['step_ms']:>9.1f} {ref['step_in_group_ms']:>12.1f}")
        for k in ("bucketed_over_flat", "step_ms", "step_in_group_ms", "bucketed_ms"):
            print(f"  runs {k}: " + ", ".join(f"{r[k]:.3g}" for r in runs))
        for k in ("step_ms", "step_in_group_ms"):
            if reference:
                print(f"  runs DDP {k}: " + ", ".join(f"{r[k]:.3g}" for r in reference))
        record(args, preset, runs, reference)


def record(args, preset, runs, reference):
    """bench_record lines (with --out): each job's median per figure, in the order measured."""
    if not args.out:
        return
    settings = {"world": args.world, "threads per rank": args.threads, "batch per rank": args.batch,
                "timed steps per job": args.steps, "backend": runs[0]["backend"], "device": args.device,
                "gradient MB": round(runs[0]["gradient_mb"], 1), "buckets": runs[0]["buckets"]}
    reference_settings = {k: reference[0][k] for k in ("torch", "optimizer", "memory format")} if reference else {}
    rows = [("the step in the group", "ours", runs, "step_in_group_ms"),
            ("the step in the group", "PyTorch DDP, tuned step", reference, "step_in_group_ms"),
            ("the step alone", "ours", runs, "step_ms"),
            ("the step alone", "PyTorch, tuned step", reference, "step_ms"),
            ("the gradient all-reduce", "ours", runs, "bucketed_ms"),
            ("the gradient all-reduce", "one flat all-reduce of every gradient", runs, "flat_ms")]
    for what, side, jobs, key in rows:
        if jobs:
            extra = reference_settings if jobs is reference else {}
            bench_record.write(args.out, bench="distributed", case=case_name(args, preset, what), side=side,
                               runs=[j[key] for j in jobs], unit="ms", better="lower", settings={**settings, **extra},
                               streetgan=args.streetgan)


def compare_hosts(args):
    """Per preset: one host × WORLD ranks against HOSTS × WORLD/HOSTS, jobs alternating."""
    per_host = args.world // args.hosts
    print(f"{'preset':<10} {'layout':<14} {'step ms':>9} {'in group':>9} {'all-reduce ms':>13} "
          f"{'all-reduce/step':>15} {'hosts/one host':>14}")
    for preset in args.presets.split(","):
        one, many = [], []
        for _ in range(args.repeats):
            one.append(run_job(args, preset))
            many.append(run_job(args, preset, args.hosts))
        rows = {}
        for name, runs in ((f"1 x {args.world}", one), (f"{args.hosts} x {per_host}", many)):
            m = {k: statistics.median(r[k] for r in runs) for k in ("step_ms", "step_in_group_ms", "bucketed_ms")}
            rows[name] = m
            ratio = f"{m['bucketed_ms'] / rows[f'1 x {args.world}']['bucketed_ms']:.2f}"
            print(f"{preset:<10} {name:<14} {m['step_ms']:>9.1f} {m['step_in_group_ms']:>9.1f} "
                  f"{m['bucketed_ms']:>13.2f} {m['bucketed_ms'] / m['step_ms']:>14.1%} {ratio:>14}")
        for name, runs in ((f"1 x {args.world}", one), (f"{args.hosts} x {per_host}", many)):
            print(f"  runs {name} bucketed_ms: " + ", ".join(f"{r['bucketed_ms']:.3g}" for r in runs))
            if args.out:
                layout = f"1 host × {args.world} ranks" if runs is one else f"{args.hosts} hosts (veth) × {per_host} ranks"
                bench_record.write(args.out, bench="distributed", case=case_name(args, preset, "the gradient all-reduce",
                                   f"{args.world} ranks on 1 host or {args.hosts} (veth)"), side=f"ours: {layout}",
                                   runs=[r["bucketed_ms"] for r in runs], unit="ms", better="lower",
                                   settings={"world": args.world, "hosts": args.hosts, "threads per rank": args.threads,
                                             "batch per rank": args.batch, "timed steps per job": args.steps},
                                   streetgan=args.streetgan)


if __name__ == "__main__":
    main()
