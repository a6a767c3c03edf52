"""One measurement as one JSON line: what every benchmark under bench/ writes to its results file
(bench/results/), and what bench/run_all.py reads back to make the tables of bench/README.md.

A record holds the benchmark and case, the side ("ours" or a named reference), every run's figure
and their median, the unit, whether more is better, the command line, the machine, the versions
and the date. Import this module before numpy or torch only through `set_threads` first: thread
counts must be in the environment before those libraries load, or they do nothing.

  import bench_record
  bench_record.set_threads(2)          # before `import numpy`
  ...
  bench_record.write(path, bench="parzen", case="small", side="ours", runs=[0.21, 0.20, 0.22],
                     unit="s", better="lower", settings={"sigmas": 10})
"""
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def set_threads(threads):
    """Sets every BLAS/OpenMP thread count; refuses when numpy or torch is already loaded."""
    loaded = [name for name in ("numpy", "torch", "scipy") if name in sys.modules]
    if loaded:
        raise RuntimeError(f"set_threads({threads}) after {', '.join(loaded)} was imported: it would do nothing")
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)


def machine():
    """The CPU model, its logical cores, memory and kernel, read from /proc."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    memory_kib = 0
    try:
        with open("/proc/meminfo") as f:
            memory_kib = int(next(line.split()[1] for line in f if line.startswith("MemTotal")))
    except (OSError, StopIteration, ValueError):
        pass
    return {"cpu": model, "cores": os.cpu_count(), "memory_gib": round(memory_kib / 2**20, 1),
            "kernel": platform.release()}


def versions(streetgan=None):
    """Python, numpy, scipy and torch as loaded now, and `streetgan --version` when given."""
    found = {"python": platform.python_version()}
    for name in ("numpy", "scipy", "torch", "torchvision"):
        if name in sys.modules:
            found[name] = getattr(sys.modules[name], "__version__", "?")
    if streetgan:
        done = subprocess.run([streetgan, "--version"], capture_output=True, text=True)
        found["streetgan"] = done.stdout.strip() if done.returncode == 0 else "?"
    return found


def best_rate(work, amount, repeats=5):
    """The best of `repeats` rates of `work()` (after one untimed warm-up), in `amount` per second:
    the measured ceiling a physical limit is set against."""
    work()
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        rates.append(amount / (time.perf_counter() - start))
    return max(rates)


def gemm_rate(torch, dtype, device="cpu", size=2048, repeats=5):
    """This machine's matrix-product rate in FLOP/s: the best of `repeats` square products
    (torch.mm of `size`, after one warm-up) in `dtype` on torch's threads as set, and its description.
    The physical limit of work made of products: FLOPs over this rate."""
    a = torch.randn(size, size, device=device).to(dtype)
    b = torch.randn(size, size, device=device).to(dtype)
    cuda = torch.device(device).type == "cuda"

    def product():
        torch.mm(a, b)
        if cuda:
            torch.cuda.synchronize()

    name = str(dtype).replace("torch.", "")
    return (best_rate(product, 2 * size**3, repeats),
            f"torch.mm {size}x{size} {name}, {torch.get_num_threads()} threads, best of {repeats}")


def record(bench, case, side, runs, unit, better, settings=None, streetgan=None, **extra):
    """The record of one side of one case: `runs` are its figures in the order measured."""
    if not runs:
        raise ValueError(f"{bench} {case} {side}: no runs")
    return {"bench": bench, "case": case, "side": side, "runs": list(runs), "median": statistics.median(runs),
            "unit": unit, "better": better, "settings": settings or {}, "command": " ".join(sys.argv),
            "machine": machine(), "versions": versions(streetgan),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **extra}


def write(path, **fields):
    """Appends one record to `path` (a JSON lines file) and returns it; no path: only returns it."""
    line = record(**fields)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(line) + "\n")
    return line


def read(path):
    """Every record of a results file, in order; a line that is not a record is an error naming it."""
    records = []
    with open(path) as f:
        for number, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                item = json.loads(text)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{number}: not JSON ({e.msg})") from None
            if not isinstance(item, dict) or not {"bench", "case", "side", "runs"} <= item.keys():
                raise ValueError(f"{path}:{number}: not a benchmark record")
            records.append(item)
    return records
