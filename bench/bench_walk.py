#!/usr/bin/python3
"""Walk export benchmark: `streetgan walk` against the reference path, side by side in one run.

Usage: /usr/bin/python3 bench/bench_walk.py --streetgan build/app/cli/streetgan --checkpoint FILE
       [--seeds 1,2,3,4,5,6,7,8] [--frames-per-key 30] [--size 512] [--fps 30] [--repeats 3]

Both sides render the same looped walk (8 seeds x 30 frames = 240 frames, slerp, ease-in-out)
from the same checkpoint's generator in eval mode, upscale it with Lanczos to 512x512 and write
one MP4 and one GIF, each in its own process, timed end to end (process start to file on disk).
The reference is the path our users ran: the generator in Debian's python3-torch, frames upscaled
with PIL, the GIF written by PIL (save_all, optimize=True) and the MP4 by piping raw RGB frames
into the `ffmpeg` program with libx264 (preset medium, the same CRF as ours).

Quality is PSNR (dB, mean over frames) of each decoded file against that tool's own lossless
upscaled frames (the encoding loss alone), and against the reference's frames (which adds the
small difference between swscale's and PIL's Lanczos).

--threads N (default 0: each tool's own default, every core) sets both sides' threads: the
OMP/OpenBLAS/MKL counts before numpy and torch load, and `streetgan walk --threads N`.
--out FILE appends one JSON line per output and side (bench/bench_record.py): bench "walk", case
"MP4, F frames at S px" or "GIF, ...", side "ours" or the reference ("pytorch + PIL + ffmpeg",
"pytorch + PIL"), every run's seconds, with the file's bytes and the PSNRs above.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402  (imports neither numpy nor torch)

np = None  # numpy: imported by load_numpy() once the thread counts are set
REFERENCE_SIDES = {"mp4": "pytorch + PIL + ffmpeg", "gif": "pytorch + PIL"}


def load_numpy(threads):
    """Sets the thread counts (0: leaves the libraries' defaults), then imports numpy."""
    global np
    if threads:
        bench_record.set_threads(threads)
    import numpy
    np = numpy


# ---------------------------------------------------------------------------------------------
# The reference path (run as `bench_walk.py --reference mp4|gif ...` in a child process)

def seed_latent(torch, seed, nz):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(nz, generator=generator)


def slerp(torch, z0, z1, t):
    a, b = z0.double(), z1.double()
    cos = float(torch.dot(a, b) / (a.norm() * b.norm()))
    if abs(cos) > 0.9995:
        return ((1 - t) * a + t * b).float()
    omega = np.arccos(np.clip(cos, -1, 1))
    return ((np.sin((1 - t) * omega) * a + np.sin(t * omega) * b) / np.sin(omega)).float()


def walk_latents(torch, seeds, nz, frames_per_key):
    keys = [seed_latent(torch, s, nz) for s in seeds]
    out = []
    for k in range(len(keys)):  # a closed loop: the last segment returns to the first key
        for f in range(frames_per_key):
            t = f / frames_per_key
            t = t * t * (3 - 2 * t)  # ease-in-out (smoothstep)
            out.append(slerp(torch, keys[k], keys[(k + 1) % len(keys)], t))
    return torch.stack(out)


def load_generator(torch, path):
    nn = torch.nn
    state = torch.jit.load(path, map_location="cpu").generator.state_dict()
    convs = sorted((int(k.split(".")[1]), v.shape) for k, v in state.items() if k.endswith("weight") and len(v.shape) == 4)
    layers = []
    for i, (index, shape) in enumerate(convs):
        first, last = i == 0, i == len(convs) - 1
        layers.append(nn.ConvTranspose2d(shape[0], shape[1], 4, 1 if first else 2, 0 if first else 1, bias=False))
        layers += [nn.Tanh()] if last else [nn.BatchNorm2d(shape[1]), nn.ReLU(True)]
    net = nn.Module()
    net.main = nn.Sequential(*layers)
    net.load_state_dict(state)
    return net.main.eval(), convs[0][1][0]


def reference(args):
    import torch
    from PIL import Image
    net, nz = load_generator(torch, args.checkpoint)
    latents = walk_latents(torch, [int(s) for s in args.seeds.split(",")], nz, args.frames_per_key)
    size = (args.size, args.size)

    def frames():
        with torch.no_grad():
            for begin in range(0, len(latents), 64):
                batch = net(latents[begin:begin + 64].view(-1, nz, 1, 1))
                pixels = ((batch.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()
                for p in pixels:
                    yield Image.fromarray(p).resize(size, Image.LANCZOS)

    if args.reference == "gif":
        images = list(frames())
        images[0].save(args.reference_out, save_all=True, append_images=images[1:], optimize=True,
                       duration=round(1000 / args.fps), loop=0)
    elif args.reference == "mp4":
        encoder = subprocess.Popen(
            ["ffmpeg", "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{args.size}x{args.size}",
             "-r", str(args.fps), "-i", "-", "-c:v", "libx264", "-preset", "medium", "-crf", str(args.crf),
             "-pix_fmt", "yuv420p", "-movflags", "+faststart", args.reference_out], stdin=subprocess.PIPE)
        for image in frames():
            encoder.stdin.write(image.tobytes())
        encoder.stdin.close()
        if encoder.wait() != 0:
            sys.exit("ffmpeg failed")
    else:  # "frames": the lossless upscaled frames, for the quality columns
        np.save(args.reference_out, np.stack([np.asarray(image) for image in frames()]))


# ---------------------------------------------------------------------------------------------
# The side-by-side run

def decode(path, size):
    raw = subprocess.run(["ffmpeg", "-loglevel", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, size, size, 3)


def psnr(a, b):
    n = min(len(a), len(b))
    mse = ((a[:n].astype(np.float64) - b[:n].astype(np.float64)) ** 2).reshape(n, -1).mean(axis=1)
    return float(np.mean(10 * np.log10(255.0 ** 2 / np.maximum(mse, 1e-10)))), len(a)


def timed(command):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def commands(args):
    """The reference (this script in a child process) and ours, each without its output."""
    common = ["--checkpoint", args.checkpoint, "--seeds", args.seeds, "--frames-per-key", str(args.frames_per_key),
              "--size", str(args.size), "--fps", str(args.fps), "--crf", str(args.crf), "--threads", str(args.threads)]
    me = [sys.executable, os.path.abspath(__file__)] + common
    ours = [args.streetgan, "walk", "--loop", "--filter", "lanczos"] + common
    return me, ours


def lossless_frames(args, me, ours, out, frames):
    """Each tool's lossless upscaled frames, and how closely they agree (dB)."""
    subprocess.run(me + ["--reference", "frames", "--reference-out", out("reference.npy")], check=True)
    subprocess.run(ours + ["--out-dir", out("ours_frames")], check=True, stderr=subprocess.DEVNULL)
    reference_frames = np.load(out("reference.npy"))
    ours_frames = np.stack([decode(out(f"ours_frames/frame_{i:06d}.png"), args.size)[0] for i in range(frames)])
    agree, _ = psnr(ours_frames, reference_frames)
    print(f"{frames} frames, {args.size}x{args.size}, {args.fps:g} fps, checkpoint {args.checkpoint}; "
          f"our lossless frames vs the reference's: {agree:.1f} dB")
    return {"reference": reference_frames, "streetgan": ours_frames}, agree


def measure(args, me, ours, out):
    """(format, tool) → every run's seconds; the four jobs interleaved, REPEATS times."""
    jobs = {
        ("mp4", "reference"): me + ["--reference", "mp4", "--reference-out", out("reference.mp4")],
        ("mp4", "streetgan"): ours + ["--out", out("ours.mp4")],
        ("gif", "reference"): me + ["--reference", "gif", "--reference-out", out("reference.gif")],
        ("gif", "streetgan"): ours + ["--out", out("ours.gif")],
    }
    times = {key: [] for key in jobs}
    for _ in range(args.repeats):  # interleaved, so machine noise hits both sides alike
        for key, command in jobs.items():
            times[key].append(timed(command))
    return times


def report(args, times, out, own_frames, agree, frames):
    print(f"\n| output | tool | time (median of {args.repeats}) | frames/s | speed-up | size | "
          "PSNR vs own frames | PSNR vs reference frames |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    total = {"reference": 0.0, "streetgan": 0.0}
    for fmt in ("mp4", "gif"):
        base = statistics.median(times[(fmt, "reference")])
        for tool in ("reference", "streetgan"):
            t = statistics.median(times[(fmt, tool)])
            total[tool] += t
            path = out(("reference" if tool == "reference" else "ours") + "." + fmt)
            decoded = decode(path, args.size)
            own, count = psnr(decoded, own_frames[tool])
            versus, _ = psnr(decoded, own_frames["reference"])
            assert count == frames, f"{path}: {count} frames, expected {frames}"
            print(f"| {fmt.upper()} | {tool} | {t:.2f} s | {frames / t:.1f} | {base / t:.2f}x | "
                  f"{os.path.getsize(path) / 1e6:.2f} MB | {own:.2f} dB | {versus:.2f} dB |")
            quality = {"bytes": os.path.getsize(path), "psnr_own_frames_db": own,
                       "psnr_reference_frames_db": versus, "psnr_lossless_frames_agree_db": agree}
            write_record(args, fmt, tool, times[(fmt, tool)], frames, quality)
    print(f"| both | reference | {total['reference']:.2f} s | {2 * frames / total['reference']:.1f} | 1.00x | | | |")
    print(f"| both | streetgan | {total['streetgan']:.2f} s | {2 * frames / total['streetgan']:.1f} | "
          f"{total['reference'] / total['streetgan']:.2f}x | | | |")
    print("\nall times:", json.dumps({f"{k[0]}/{k[1]}": [round(x, 2) for x in v] for k, v in times.items()}))


def write_record(args, fmt, tool, runs, frames, quality):
    """One bench_record line (with --out): one output format, one side, every run's seconds."""
    if not args.out:
        return
    settings = {"seeds": args.seeds, "frames_per_key": args.frames_per_key, "frames": frames, "size": args.size,
                "fps": args.fps, "crf": args.crf, "threads": args.threads, "repeats": args.repeats,
                "checkpoint": args.checkpoint, "loop": True, "filter": "lanczos"}
    bench_record.write(args.out, bench="walk", case=f"{fmt.upper()}, {frames} frames at {args.size} px",
                       side="ours" if tool == "streetgan" else REFERENCE_SIDES[fmt], runs=runs, unit="s",
                       better="lower", settings=settings, streetgan=args.streetgan, **quality)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--streetgan")
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--seeds", default="1,2,3,4,5,6,7,8")
    parser.add_argument("--frames-per-key", type=int, default=30)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--fps", type=float, default=30)
    parser.add_argument("--crf", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="both sides' threads (default 0: each tool's default)")
    parser.add_argument("--out", metavar="FILE", help="append one bench_record.py line per output and side")
    parser.add_argument("--reference", choices=["gif", "mp4", "frames"], help=argparse.SUPPRESS)
    parser.add_argument("--reference-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    load_numpy(args.threads)  # before anything imports numpy or torch
    if args.reference:
        return reference(args)
    if not args.streetgan or args.repeats < 1:
        parser.error("--streetgan is needed, and --repeats must be at least 1")

    frames = len(args.seeds.split(",")) * args.frames_per_key
    me, ours = commands(args)
    with tempfile.TemporaryDirectory() as tmp:
        out = lambda name: os.path.join(tmp, name)  # noqa: E731
        own_frames, agree = lossless_frames(args, me, ours, out, frames)
        times = measure(args, me, ours, out)
        report(args, times, out, own_frames, agree, frames)


if __name__ == "__main__":
    main()
