"""The reference side of bench/bench_data.py: PyTorch DataLoaders that do the work `streetgan bench
data` does, the decode-only loop, the uint8 memmap the cache rows compare with, and the reader of
streetgan's cache index (which gives both sides the same images in the same order).

Imports numpy, torch, torchvision and PIL when it loads: import it only after
bench_record.set_threads(), as bench_data.py and its child processes do.

The work (both sides), for naive-64's defaults (core/config/train_config.h AugmentConfig: shift
0.2, crop_scale 4, no flip, rotation or zoom; img_size 64), from core/data/sample_pipeline.cpp:
a horizontal shift dx = step·round(u·W/step), u uniform in [-0.2, 0.2), step = crop/img_size = 4
source pixels; the crop_scale·64 = 256 px square window centred (left = step·round((W−256)/2/step),
top likewise) and moved by −dx, black outside the picture; shrunk 4× to 64×64; RGB, channel-first
uint8, batches of 64. No noise, no scaling to [−1, 1] (ours leaves them to the training device).
"""
import math
import multiprocessing
import os
import random
import resource
import struct
import time
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import BatchSampler, DataLoader, Dataset, Sampler, get_worker_info
from torchvision.io import ImageReadMode, decode_jpeg, read_file

IMG_SIZE = 64
BATCH = 64
SHIFT = 0.2       # augment.shift
CROP_SCALE = 4.0  # augment.crop_scale
CHANNELS = 3      # nc


def std_round(x):
    """C++ std::round: halves away from zero (Python's round() takes halves to even)."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def crop_side(img_size=IMG_SIZE):
    return int(max(1.0, std_round(CROP_SCALE * img_size)))


def shrink_factor(img_size=IMG_SIZE):
    """Source pixels per output pixel: the shift and window step (SamplePipeline's `step`)."""
    return int(max(1.0, std_round(crop_side(img_size) / img_size)))


def reduction_for(img_size=IMG_SIZE):
    """SamplePipeline::reductionFor without zoom: the largest DCT reduction keeping the crop ≥ img_size."""
    crop = crop_side(img_size)
    for r in (8, 4, 2):
        if crop / r >= img_size and crop % r == 0:
            return r
    return 1


def window(full_w, full_h, u, img_size=IMG_SIZE):
    """Full-resolution top-left corner of the crop window for the shift draw u (SamplePipeline::augmentPixels
    with no flip, rotation or zoom: an integer translation)."""
    crop, step = crop_side(img_size), shrink_factor(img_size)
    dx = step * std_round(u * full_w / step)
    left = step * std_round((full_w - crop) / 2 / step)
    top = step * std_round((full_h - crop) / 2 / step)
    return int(left - dx), int(top)


def draw_shift():
    return random.uniform(-SHIFT, SHIFT)


def paste(dst, src, x0, y0):
    """dst[:, :, :] = src's (C, H, W) window at (x0, y0), the part outside src left as it is in dst."""
    _, h, w = src.shape
    s_h, s_w = dst.shape[-2], dst.shape[-1]
    xa, ya = max(0, -x0), max(0, -y0)
    xb, yb = min(s_w, w - x0), min(s_h, h - y0)
    if xb > xa and yb > ya:
        dst[:, ya:yb, xa:xb] = src[:, y0 + ya:y0 + yb, x0 + xa:x0 + xb]


def crop_and_shrink(image, x0, y0, img_size=IMG_SIZE):
    """The 64x64 uint8 sample from a full-resolution (3, H, W) uint8 tensor: the window, then the mean
    of each 4x4 block (ours' --full-decode path: cv::resize INTER_AREA at an integer factor)."""
    crop, factor = crop_side(img_size), shrink_factor(img_size)
    _, h, w = image.shape
    if 0 <= x0 and 0 <= y0 and x0 + crop <= w and y0 + crop <= h:
        win = image[:, y0:y0 + crop, x0:x0 + crop]
    else:
        win = torch.zeros((image.shape[0], crop, crop), dtype=torch.uint8)
        paste(win, image, x0, y0)
    if factor == 1:
        return win.contiguous()
    return F.avg_pool2d(win.unsqueeze(0).float(), factor).round_().to(torch.uint8)[0]


def shared_uint8(shape):
    """An uint8 tensor in shared memory when in a DataLoader worker (as default_collate allocates its
    batch), so handing it to the main process copies nothing."""
    empty = torch.empty(0, dtype=torch.uint8)
    if get_worker_info() is None:
        return torch.empty(shape, dtype=torch.uint8)
    storage = empty.storage()._new_shared(int(np.prod(shape)))
    return empty.new(storage).resize_(*shape)


class EndlessShuffle(Sampler):
    """A fresh permutation of the data set after another, without end (StyleGAN2-ADA's InfiniteSampler):
    one DataLoader iterator for the whole run, no drain at epoch ends, as ours streams across epochs."""

    def __init__(self, n, seed=0):
        self.n, self.seed = n, seed

    def __iter__(self):
        g = torch.Generator()
        g.manual_seed(self.seed)
        while True:
            yield from torch.randperm(self.n, generator=g).tolist()


class JpegSamples(Dataset):
    """torchvision.io.read_file + decode_jpeg (full size: torchvision 0.14 has no DCT scaling), the
    window and the 4x4 mean with tensor ops; one sample at a time, default_collate makes the batch."""

    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        image = decode_jpeg(read_file(self.paths[i]), mode=ImageReadMode.RGB)
        x0, y0 = window(image.shape[2], image.shape[1], draw_shift())
        return crop_and_shrink(image, x0, y0)


class PilSamples(Dataset):
    """The decoder the tool replaced (PIL, full size), doing the same work: Image.crop (black outside)
    and Image.resize(BOX) 4x, then a channel-first uint8 tensor."""

    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        crop = crop_side()
        with Image.open(self.paths[i]) as f:
            image = f.convert("RGB")
        x0, y0 = window(image.width, image.height, draw_shift())
        win = image.crop((x0, y0, x0 + crop, y0 + crop))
        if crop != IMG_SIZE:
            win = win.resize((IMG_SIZE, IMG_SIZE), Image.BOX)
        return torch.from_numpy(np.array(win)).permute(2, 0, 1).contiguous()


class MemmapBatches(Dataset):
    """Whole batches from the uint8 memmap (records of H×W×3 RGB at the cache's reduction): given a
    batch's indices (a BatchSampler as the sampler), copies each sample's 64x64 window straight into
    a shared-memory batch, as ours copies from its mapped cache into the batch."""

    def __init__(self, path, records, reduction):
        self.path, self.records, self.reduction = path, records, reduction
        self.pixels = None

    def __len__(self):
        return len(self.records)

    def __getitem__(self, indices):
        if self.pixels is None:  # opened in the worker
            self.pixels = np.memmap(self.path, dtype=np.uint8, mode="r")
        r, s = self.reduction, IMG_SIZE
        out = shared_uint8((len(indices), CHANNELS, s, s))
        o = out.numpy()
        for j, i in enumerate(indices):
            offset, h, w, full_w, full_h = self.records[i]
            image = self.pixels[offset:offset + h * w * CHANNELS].reshape(h, w, CHANNELS)
            x0, y0 = window(full_w, full_h, draw_shift())
            x0, y0 = x0 // r, y0 // r  # whole steps of `shrink_factor` source pixels: exact at reduction r
            if 0 <= x0 and 0 <= y0 and x0 + s <= w and y0 + s <= h:
                o[j] = image[y0:y0 + s, x0:x0 + s].transpose(2, 0, 1)
            else:
                o[j] = 0
                paste(o[j], image.transpose(2, 0, 1), x0, y0)
        return out


class StartGate:
    """Holds every worker at the end of its start-up (worker_init_fn) until the timer starts, so the
    timed span holds no worker start-up: as ours, whose timer starts once its threads exist."""

    def __init__(self, ctx):
        self.ready = ctx.Semaphore(0)
        self.go = ctx.Event()

    def __call__(self, worker_id):
        self.ready.release()
        self.go.wait()

    def open(self, workers, timeout=600):
        for _ in range(workers):
            if not self.ready.acquire(timeout=timeout):
                raise RuntimeError(f"DataLoader workers did not start within {timeout} s")
        self.go.set()


def peak_rss_mib():
    """Main process plus its largest (finished) child, as ru_maxrss reports them."""
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss +
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024


def loader_run(kind, work, workers, batches, prefetch_factor=2, pin_memory=True, seed=0):
    """Times `batches` batches of a DataLoader of `kind` (jpeg, pil or memmap) with `workers` worker
    processes, from the moment every worker has started to the last batch in the main process (pinned
    when pin_memory and CUDA). `work`: bench_data.py's work file (paths, memmap records)."""
    if workers < 1:
        raise ValueError("the reference needs at least one worker process")
    ctx = multiprocessing.get_context("fork")
    gate = StartGate(ctx)
    common = dict(num_workers=workers, pin_memory=pin_memory, persistent_workers=True,
                  prefetch_factor=prefetch_factor, worker_init_fn=gate, multiprocessing_context=ctx)
    n = len(work["paths"])
    if kind == "jpeg":
        loader = DataLoader(JpegSamples(work["paths"]), batch_size=BATCH, sampler=EndlessShuffle(n, seed), **common)
    elif kind == "pil":
        loader = DataLoader(PilSamples(work["paths"]), batch_size=BATCH, sampler=EndlessShuffle(n, seed), **common)
    elif kind == "memmap":
        dataset = MemmapBatches(work["memmap"], work["records"], work["reduction"])
        loader = DataLoader(dataset, batch_size=None,
                            sampler=BatchSampler(EndlessShuffle(n, seed), BATCH, drop_last=False), **common)
    else:
        raise ValueError(f"unknown reference {kind!r}")
    it = iter(loader)  # starts the workers (and the pin-memory thread)
    gate.open(workers)
    start = time.perf_counter()
    images = 0
    batch = None
    for _ in range(batches):
        batch = next(it)
        images += batch.shape[0]
    seconds = time.perf_counter() - start
    if batch.dtype != torch.uint8 or tuple(batch.shape[1:]) != (CHANNELS, IMG_SIZE, IMG_SIZE):
        raise RuntimeError(f"{kind}: batches of {batch.dtype} {tuple(batch.shape)}, not uint8 (n, 3, 64, 64)")
    pinned = bool(batch.is_pinned())
    it._shutdown_workers()
    del it, loader
    return {"images": images, "batches": batches, "seconds": seconds, "images_per_s": images / seconds,
            "peak_rss_mib": peak_rss_mib(), "pinned": pinned}


def _decode_loop(paths, first, stride, seconds, barrier, results):
    if barrier is not None:
        barrier.wait()
    start = time.perf_counter()
    done, i = 0, first
    while time.perf_counter() - start < seconds:
        decode_jpeg(read_file(paths[i % len(paths)]), mode=ImageReadMode.RGB)
        done += 1
        i += stride
    elapsed = time.perf_counter() - start
    if results is None:
        return done, elapsed
    results.put((done, elapsed))


def decode_run(paths, processes, seconds):
    """read_file + decode_jpeg (full size), no augmentation, file after file for `seconds`, in
    `processes` processes started before the clock (images/s of all together)."""
    if processes == 1:
        done, elapsed = _decode_loop(paths, 0, 1, seconds, None, None)
        return {"images": done, "images_per_s": done / elapsed}
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(processes + 1), ctx.Queue()
    procs = [ctx.Process(target=_decode_loop, args=(paths, k, processes, seconds, barrier, results))
             for k in range(processes)]
    for p in procs:
        p.start()
    barrier.wait()
    parts = [results.get() for _ in procs]
    for p in procs:
        p.join()
    done = sum(d for d, _ in parts)
    return {"images": done, "images_per_s": done / max(e for _, e in parts)}


# The cache index and the memmap.

def read_cache_index(path):
    """streetgan's cache (core/data/image_cache.h, version 1): channels, reduction and per record
    (offset, width, height, full width, full height, reduction, relative path), in dataset order."""
    with open(path, "rb") as f:
        header = f.read(64)
        if header[:8] != b"SGCACHE1":
            raise ValueError(f"{path}: not a streetgan cache")
        version, channels, reduction = struct.unpack_from("<III", header, 8)
        count, index_at, paths_at, paths_size = struct.unpack_from("<QQQQ", header, 24)
        f.seek(index_at)
        index = f.read(count * 40)
        f.seek(paths_at)
        names = f.read(paths_size)
    records = []
    for i in range(count):
        offset, w, h, fw, fh, at, length, _crc, r = struct.unpack_from("<QIIIIIIII", index, i * 40)
        records.append((offset, w, h, fw, fh, r, names[at:at + length].decode("utf-8")))
    return {"version": version, "channels": channels, "reduction": reduction, "records": records}


def _decode_reduced(reduction, path):
    # PIL's draft() is libjpeg's DCT scaling, as ours' cache build (OpenCV IMREAD_REDUCED_COLOR_r).
    with Image.open(path) as f:
        full_w, full_h = f.size
        if reduction > 1 and f.format == "JPEG":
            f.draft("RGB", (-(-full_w // reduction), -(-full_h // reduction)))
        rgb = np.asarray(f.convert("RGB"))
    return rgb.tobytes(), rgb.shape[0], rgb.shape[1], full_w, full_h


def build_memmap(paths, out, reduction, workers):
    """Decodes every image once at `reduction` on `workers` processes into one flat uint8 file of HxWx3
    RGB records (the cache's layout), written in order and flushed to disk (fsync, as ours' build).
    Returns the records (offset, h, w, full w, full h), the seconds and the bytes."""
    start = time.perf_counter()
    records, offset = [], 0
    with multiprocessing.get_context("fork").Pool(workers) as pool, open(out, "wb") as f:
        for data, h, w, full_w, full_h in pool.imap(partial(_decode_reduced, reduction), paths, chunksize=8):
            f.write(data)
            records.append((offset, h, w, full_w, full_h))
            offset += len(data)
        f.flush()
        os.fsync(f.fileno())
    return records, time.perf_counter() - start, offset


def compare_memmap_with_cache(cache_path, cache_index, memmap_path, records):
    """Records whose memmap pixels equal the cache's (BGR there, RGB here), and the largest difference."""
    cache = np.memmap(cache_path, dtype=np.uint8, mode="r")
    mm = np.memmap(memmap_path, dtype=np.uint8, mode="r")
    same, worst = 0, 0
    for (c_off, c_w, c_h, *_), (m_off, m_h, m_w, _, _) in zip(cache_index["records"], records):
        if (c_w, c_h) != (m_w, m_h):
            worst = 255
            continue
        a = cache[c_off:c_off + c_w * c_h * 3].reshape(c_h, c_w, 3)[:, :, ::-1].astype(np.int16)
        b = mm[m_off:m_off + m_w * m_h * 3].reshape(m_h, m_w, 3).astype(np.int16)
        diff = int(np.abs(a - b).max())
        same += diff == 0
        worst = max(worst, diff)
    return same, worst


def reference_psnr(cache_path, cache_index, paths, count=32):
    """PSNR of the JPEG reference's samples (full decode, 4x4 mean) against ours' pixels for the same
    windows (the cache's reduced decode), over `count` images with shifts spread over the range."""
    cache = np.memmap(cache_path, dtype=np.uint8, mode="r")
    r, s = cache_index["reduction"], IMG_SIZE
    squared, values = 0.0, 0
    for k in range(min(count, len(paths))):
        offset, w, h, full_w, full_h, _, _ = cache_index["records"][k]
        u = -SHIFT + 2 * SHIFT * (k + 0.5) / count
        x0, y0 = window(full_w, full_h, u)
        ours_image = cache[offset:offset + w * h * 3].reshape(h, w, 3)[:, :, ::-1].transpose(2, 0, 1)
        ours = np.zeros((3, s, s), dtype=np.uint8)
        paste(ours, ours_image, x0 // r, y0 // r)
        ref = crop_and_shrink(decode_jpeg(read_file(paths[k]), mode=ImageReadMode.RGB), x0, y0).numpy()
        squared += float(((ours.astype(np.float64) - ref) ** 2).sum())
        values += ref.size
    mse = squared / max(values, 1)
    return float("inf") if mse == 0 else 10 * math.log10(255 ** 2 / mse)
