#!/usr/bin/python3
"""Data loader benchmark: streetgan's loader (`streetgan bench data`: the trainer's BatchLoader and
BatchPrefetcher) against the PyTorch DataLoader a researcher would tune today, doing the same work
on the same images, side by side in one run; from JPEG and from a pre-decoded cache.

Usage: /usr/bin/python3 bench/bench_data.py --streetgan build/app/cli/streetgan --corpus DIR
       [--seconds 8] [--repeats 3] [--workers N[,N...]] [--threads 1] [--prefetch-factor 2]
       [--pil] [--no-full-decode-row] [--out FILE.jsonl]
Make the corpus with bench/make_corpus.py. Needs python3-torch, python3-torchvision, python3-pil.

The work, on both sides (config naive-64, its defaults; ours is given --preset naive-64 --img-size 64
--batch 64): each image gets a horizontal shift of dx = 4·round(u·W/4) source pixels, u uniform in
[-0.2, 0.2); the 256x256 window centred on the picture (left and top rounded to whole steps of 4)
and moved by −dx, black outside it; shrunk 4x to 64x64; channel-first RGB uint8, batches of 64, in a
shuffled order that runs on across epochs. No flip, no rotation, no zoom, no noise and no scaling to
[-1, 1]: since commit cbd865d ours hands uint8 batches over and the noise and scaling happen on the
training device, so neither side does them here. How each side gets there is its own:
  ours, from JPEG       libjpeg's DCT scaling decodes at 1/4 (160x120 from 640x480), then the 64x64
                        window is copied (core/data/sample_pipeline.cpp).
  ours, --full-decode   the same at full size, then cv::resize INTER_AREA (the mean of 4x4 blocks):
                        the reference's decoding work. A row of its own (--no-full-decode-row: none).
  reference, JPEG       torchvision.io.read_file + decode_jpeg at full size (torchvision 0.14 has no
                        DCT scaling; transforms.v2 is not in this torchvision either, so the
                        transforms are plain tensor ops: a slice, zero padding where the window leaves
                        the picture, avg_pool2d 4x, round to uint8) in Dataset.__getitem__, batched
                        by default_collate in the workers.
  reference, PIL        (--pil) the decoder of the tool streetgan replaced: PIL full decode,
                        Image.crop, Image.resize(BOX), to a uint8 tensor; the same DataLoader.
  ours, cache           `streetgan cache build` stores the 1/4-size pixels (checked by CRC on first
                        read); a sample is a 64x64 window copy from the mapped file.
  reference, memmap     the same decoded pixels (PIL draft(), i.e. libjpeg's DCT scaling, on the
                        same number of processes, flushed to disk like ours) in one flat uint8 file of
                        HxWx3 records; each worker gets a whole batch's indices (BatchSampler as the
                        sampler) and copies the windows into a shared-memory batch.
The pictures are the same: the memmap's pixels are compared with the cache's, and the JPEG
reference's samples with ours' (PSNR); both printed. The shifts are drawn from the same
distribution, not the same numbers (ours seeds each sample from (seed, epoch, index)).

Every reference is a torch.utils.data.DataLoader with num_workers = W processes, pin_memory=True
(a no-op without CUDA; said in the header), persistent_workers=True, prefetch_factor 2 (at most 2·W
batches in flight; ours: W + 2) and a sampler of endless permutations (StyleGAN2-ADA's
InfiniteSampler: no drain at epoch ends, as ours streams across epochs). Ours gets --workers W
threads. W defaults to os.cpu_count(). --threads T (default 1) sets OMP/OpenBLAS/MKL threads before
numpy and torch load, in this process and in every process it starts (both sides); DataLoader
workers run torch with one thread.

Timing, both sides: from the moment the workers exist to the arrival of the last counted batch in
the main process; the first batch's wait is inside it. Ours' timer (bench_data_command.cpp) starts
once its BatchPrefetcher has started its threads and excludes listing the folder and opening the
cache; the reference's workers are held at the end of their start-up (worker_init_fn) until its
timer starts, which excludes forking them. Ours runs --seconds; the reference then runs as many
batches as ours delivered in its latest run (ours' batches at epoch ends are shorter: images/s is
images over seconds on both sides). Each reference run is a fresh Python process. Before any
timing every image file is read once, so every side reads from the page cache.

Each repeat runs every side of a case once, the order reversed on every other repeat; the tables
give medians. The decode-only table (read + decode, no augmentation, one thread and W) is the
physical limit each loader table is set against. --out FILE appends one JSON line per side and case
(bench/bench_record.py): bench "data", case "jpeg", "cache" or "decode-only", images/s.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_record  # noqa: E402  (imports neither numpy nor torch)

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp", ".bmp")

# data_reference (numpy, torch, torchvision, PIL): imported by main() once the thread counts are set.
ref = None


def ours(args, workers, extra, seconds=None):
    cmd = [args.streetgan, "bench", "data", "--dataroot", args.corpus, "--preset", "naive-64", "--img-size", "64",
           "--batch", "64", "--workers", str(workers), "--seconds", str(seconds or args.seconds), "--json"] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def in_child(args, call):
    """Runs `data_reference.<call>` in a fresh Python process with the same thread counts."""
    code = (f"import sys, json; sys.path.insert(0, {HERE!r}); import bench_record; "
            f"bench_record.set_threads({args.threads}); import torch; torch.set_num_threads({args.threads}); "
            f"import data_reference as d; print(json.dumps(d.{call}))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def reference(args, kind, work_file, workers, batches):
    return in_child(args, f"loader_run({kind!r}, json.load(open({work_file!r})), {workers}, {batches}, "
                          f"prefetch_factor={args.prefetch_factor}, pin_memory=True)")


def warm_page_cache(corpus):
    files, size = 0, 0
    for folder, _, names in os.walk(corpus):
        for name in names:
            if name.lower().endswith(IMAGE_EXTENSIONS):
                with open(os.path.join(folder, name), "rb") as f:
                    size += len(f.read())
                files += 1
    return files, size


def run_case(args, sides, repeats):
    """sides: (name, fn(latest ours images) -> result dict) in the first repeat's order, ours first.
    Returns {name: [results]}."""
    results = {name: [] for name, _ in sides}
    latest = None
    for repeat in range(repeats):
        order = sides if repeat % 2 == 0 else list(reversed(sides))
        for name, fn in order:
            r = fn(latest)
            if name == "ours":
                latest = r["images"]
            results[name].append(r)
    return results


def batches_for(images):
    return max(1, math.ceil(images / 64))


def copy_limit(torch, workers, img_size=64):
    """The cache's physical limit: memory's copy rate on `workers` threads (torch copy_ of 256 MiB,
    best of 5) over the bytes each image moves at least: its window read from the cache and its
    pixels written to the batch, img_size² × 3 bytes each."""
    threads = torch.get_num_threads()
    torch.set_num_threads(workers)
    src = torch.ones(256 * 2**20, dtype=torch.uint8)
    dst = torch.empty_like(src)
    rate = bench_record.best_rate(lambda: dst.copy_(src), 2 * src.numel())
    torch.set_num_threads(threads)
    per_image = 2 * img_size * img_size * 3
    return rate / per_image, {"copy_bytes_per_s": rate, "bytes_per_image": per_image,
                                        "copy": f"torch copy_ of 256 MiB, {workers} threads, best of 5"}


def median(results, key="images_per_s"):
    return statistics.median(r[key] for r in results)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streetgan", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--seconds", type=int, default=8, help="ours' run time (the reference: as many batches)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", default=str(os.cpu_count()),
                        help="loader threads of ours = worker processes of the reference, comma-separated")
    parser.add_argument("--threads", type=int, default=1, help="OMP/BLAS threads of every process (default 1)")
    parser.add_argument("--prefetch-factor", type=int, default=2)
    parser.add_argument("--pil", action="store_true", help="also the PIL reference (the tool replaced)")
    parser.add_argument("--no-full-decode-row", action="store_true", help="leave out ours with --full-decode")
    parser.add_argument("--out", help="append one JSON line per side and case (bench_record.py)")
    args = parser.parse_args()
    bench_record.set_threads(args.threads)
    global ref
    import torch
    import torchvision
    import data_reference as ref
    torch.set_num_threads(args.threads)

    worker_counts = [int(w) for w in args.workers.split(",")]
    if min(worker_counts) < 1:
        parser.error("--workers: at least 1 (the reference needs worker processes)")
    all_workers = max(worker_counts)
    record = dict(path=args.out, bench="data", unit="images/s", better="higher", streetgan=args.streetgan)
    pin_active = torch.cuda.is_available()

    with tempfile.TemporaryDirectory() as tmp:
        files, size = warm_page_cache(args.corpus)

        # Builds: ours' cache and the reference's memmap, once each, on the same number of workers.
        cache = os.path.join(tmp, "corpus.sgcache")
        start = time.perf_counter()
        subprocess.run([args.streetgan, "cache", "build", "--dataroot", args.corpus, "--out", cache,
                        "--preset", "naive-64", "--workers", str(all_workers)], check=True, capture_output=True)
        cache_seconds = time.perf_counter() - start
        index = ref.read_cache_index(cache)
        if index["channels"] != ref.CHANNELS or index["reduction"] != ref.reduction_for():
            sys.exit(f"the cache holds {index['channels']} channels at 1/{index['reduction']}; this benchmark's "
                     f"work needs {ref.CHANNELS} at 1/{ref.reduction_for()}")
        if any(r[5] * ref.IMG_SIZE != ref.crop_side() for r in index["records"]):
            sys.exit("the corpus holds images that are not JPEG (stored at full size): the reference's memmap "
                     "side covers JPEG corpora only")
        paths = [os.path.join(args.corpus, r[6]) for r in index["records"]]  # ours' images, in ours' order
        memmap = os.path.join(tmp, "corpus.u8")
        records, memmap_seconds, memmap_bytes = ref.build_memmap(paths, memmap, index["reduction"], all_workers)
        work_file = os.path.join(tmp, "work.json")
        with open(work_file, "w") as f:
            json.dump({"paths": paths, "memmap": memmap, "records": records, "reduction": index["reduction"]}, f)
        same, worst = ref.compare_memmap_with_cache(cache, index, memmap, records)
        psnr = ref.reference_psnr(cache, index, paths)
        sizes = sorted({(r[3], r[4]) for r in index["records"]})

        print("Data loader: streetgan against a tuned torch DataLoader, the same work on the same images")
        print(f"corpus: {args.corpus}: {len(paths)} images ({files} image files, {size / 2**20:.0f} MiB, read once "
              f"before timing), {', '.join(f'{w}x{h}' for w, h in sizes[:3])}{' ...' if len(sizes) > 3 else ''}")
        print("work, both sides: shift dx = 4·round(u·W/4), u ~ U[-0.2, 0.2); the 256x256 centred window moved by "
              "-dx, black outside; shrunk 4x to 64x64; RGB uint8 (n, 3, 64, 64), batches of 64; no flip, rotation, "
              "zoom, noise or [-1, 1] scaling (config naive-64)")
        print(f"budget: W loader threads (ours) = W DataLoader worker processes (reference), W = {args.workers}; "
              f"{args.threads} OMP/BLAS thread(s) per process; reference: pin_memory=True "
              f"({'active' if pin_active else 'inactive: no CUDA here'}), persistent_workers, prefetch_factor "
              f"{args.prefetch_factor}, endless-permutation sampler; ours: prefetch 2, unpinned batches")
        print(f"timing: from the moment the workers exist (their start-up excluded, the first batch's wait included) "
              f"to the last batch; ours {args.seconds} s, the reference as many batches as ours' latest run; "
              f"{args.repeats} repeat(s), order reversed every other repeat, medians")
        print(f"versions: torch {torch.__version__}, torchvision {torchvision.__version__}, "
              f"{bench_record.versions(args.streetgan).get('streetgan', '?')}")
        print(f"same pixels: memmap = streetgan cache on {same}/{len(records)} records (largest difference {worst}); "
              f"JPEG reference (full decode, 4x4 mean) against ours' 1/4 decode: {psnr:.1f} dB PSNR over 32 samples")
        print()
        print(f"builds ({all_workers} workers): streetgan cache build {cache_seconds:.2f} s "
              f"({os.path.getsize(cache) / 2**20:.0f} MiB); reference uint8 memmap (PIL draft 1/{index['reduction']}, "
              f"{all_workers} processes, fsync) {memmap_seconds:.2f} s ({memmap_bytes / 2**20:.0f} MiB)")
        print()

        # Decode only: the physical limit.
        # (side of the record, row name, ours' options or None for the reference)
        decode_sides = [("ours (decode at 1/4)", "streetgan, 1/4 (what its loader decodes)", ["--decode-only", "4"]),
                        ("ours (decode at full size)", "streetgan, full size", ["--decode-only", "1"]),
                        ("reference: torchvision read_file + decode_jpeg (full size)",
                         "torchvision decode_jpeg, full size (the reference's)", None)]
        decode = {}
        for counts in sorted({1, all_workers} | set(worker_counts)):
            for repeat in range(args.repeats):
                order = decode_sides if repeat % 2 == 0 else list(reversed(decode_sides))
                for _, name, extra in order:
                    if extra is None:
                        r = in_child(args, f"decode_run(json.load(open({work_file!r}))['paths'], {counts}, {args.seconds})")
                    else:
                        r = ours(args, counts, extra)
                    decode.setdefault((name, counts), []).append(r["images_per_s"])
        counts_list = sorted({1, all_workers} | set(worker_counts))
        print("decode only (read + decode of every file in turn, no augmentation), images/s: the physical limit "
              "(ours: threads, the reference: processes)")
        print(f"  {'decoder':<58}" + "".join(f" {f'{c} thr/proc':>12}" for c in counts_list))
        for side, name, extra in decode_sides:
            print(f"  {name:<58}" + "".join(f" {statistics.median(decode[(name, c)]):>12.0f}" for c in counts_list))
            for c in counts_list:
                bench_record.write(**record, case="decode-only", side=side, runs=decode[(name, c)],
                                   settings={"processes_or_threads": c, "seconds": args.seconds,
                                             "threads": args.threads})
        print()

        for workers in worker_counts:
            settings = {"workers": workers, "batch": 64, "img_size": 64, "threads": args.threads,
                        "seconds_ours": args.seconds, "prefetch_factor": args.prefetch_factor,
                        "pin_memory": True, "pin_memory_active": pin_active, "corpus_images": len(paths),
                        "repeats": args.repeats, "config": "naive-64"}
            ref_jpeg = f"reference: torchvision decode_jpeg, DataLoader ({workers} workers, pin_memory)"
            ref_pil = f"reference (the tool replaced): PIL, DataLoader ({workers} workers, pin_memory)"
            ref_mm = f"reference: uint8 memmap, DataLoader ({workers} workers, pin_memory)"

            sides = [("ours", lambda _latest: ours(args, workers, []))]
            if not args.no_full_decode_row:
                sides.append(("ours (--full-decode)", lambda _latest: ours(args, workers, ["--full-decode"])))
            sides.append((ref_jpeg, lambda latest: reference(args, "jpeg", work_file, workers, batches_for(latest))))
            if args.pil:
                sides.append((ref_pil, lambda latest: reference(args, "pil", work_file, workers, batches_for(latest))))
            jpeg = run_case(args, sides, args.repeats)
            limit = statistics.median(decode[("streetgan, 1/4 (what its loader decodes)", workers)])
            ref_limit = statistics.median(decode[("torchvision decode_jpeg, full size (the reference's)", workers)])
            print(f"JPEG -> batches, {workers} worker{'s' if workers > 1 else ''} (limit: decode only on {workers}: ours at 1/4 {limit:.0f}, "
                  f"decode_jpeg full size {ref_limit:.0f} images/s; 'of limit' against each side's own)")
            full_limit = statistics.median(decode[("streetgan, full size", workers)])
            width = max(len(name) for name in jpeg)
            print(f"  {'loader':<{width}} {'images/s':>9} {'vs ref.':>8} {'batches':>8} {'peak RSS MiB':>13} {'of limit':>9}")
            base = median(jpeg[ref_jpeg])
            for name, results in jpeg.items():
                rate = median(results)
                own = limit if name == "ours" else full_limit if name.startswith("ours") else ref_limit
                batches = statistics.median(r.get("batches", batches_for(r["images"])) for r in results)
                mem = max(r["peak_rss_mib"] for r in results)
                print(f"  {name:<{width}} {rate:>9.0f} {rate / base:>7.1f}x {batches:>8.0f} {mem:>13.0f} {rate / own:>8.0%}")
                bench_record.write(**record, case="jpeg", side=name, runs=[r["images_per_s"] for r in results],
                                   settings={**settings, "images": [r["images"] for r in results],
                                             "batches": [r.get("batches", batches_for(r["images"])) for r in results]},
                                   peak_rss_mib=mem)
            print()

            sides = [("ours", lambda _latest: ours(args, workers, ["--cache", cache])),
                     (ref_mm, lambda latest: reference(args, "memmap", work_file, workers, batches_for(latest)))]
            cached = run_case(args, sides, args.repeats)
            limit, limit_settings = copy_limit(torch, workers)
            print(f"cache -> batches, {workers} worker{'s' if workers > 1 else ''} (builds: ours {cache_seconds:.2f} s, memmap "
                  f"{memmap_seconds:.2f} s on {all_workers})")
            width = max(len(name) for name in cached)
            print(f"  {'loader':<{width}} {'images/s':>9} {'vs ref.':>8} {'batches':>8} {'peak RSS MiB':>13} {'build s':>9}")
            base = median(cached[ref_mm])
            for name, results in cached.items():
                rate = median(results)
                build = cache_seconds if name == "ours" else memmap_seconds
                batches = statistics.median(r.get("batches", batches_for(r["images"])) for r in results)
                mem = max(r["peak_rss_mib"] for r in results)
                print(f"  {name:<{width}} {rate:>9.0f} {rate / base:>7.1f}x {batches:>8.0f} {mem:>13.0f} {build:>9.2f}")
                bench_record.write(**record, case="cache", side=name, runs=[r["images_per_s"] for r in results],
                                   settings={**settings, "images": [r["images"] for r in results],
                                             "batches": [r.get("batches", batches_for(r["images"])) for r in results],
                                             "build_workers": all_workers},
                                   build_seconds=build, peak_rss_mib=mem)
            print(f"  limit: memory copies {limit_settings['copy_bytes_per_s'] / 1e9:.1f} GB/s on {workers} threads, "
                  f"{limit_settings['bytes_per_image']:,} bytes moved per image = {limit:,.0f} images/s; ours is "
                  f"{median(cached['ours']) / limit:.0%} of it")
            bench_record.write(**record, case="cache", side="limit: memory's copy rate over the bytes each image moves",
                               runs=[limit], settings={**settings, **limit_settings})
            print()


if __name__ == "__main__":
    main()
