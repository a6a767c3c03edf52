#!/usr/bin/python3
"""Writes the seed corpora of fuzz/corpus/ (committed; run again only to change them).
Small valid inputs of each parser, so that the fuzzer starts from the formats' real structure."""
import io, json, os, pickle, struct, sys, zipfile
from collections import OrderedDict

import torch
from PIL import Image

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    os.makedirs(os.path.join(root, target), exist_ok=True)
    with open(os.path.join(root, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


torch.manual_seed(0)
# torch.save files: a slim checkpoint of a tiny DCGAN-shaped state dict, a full one with losses.
state = OrderedDict((f"main.{i}.weight", torch.randn(2, 2, 4, 4)) for i in (0, 3))
state["main.1.running_mean"] = torch.zeros(2)
state["main.1.num_batches_tracked"] = torch.tensor(3)
for name, obj in {"slim": {"epoch": 0, "G_state_dict": state},
                  "full": {"epoch": 2, "G_state_dict": state, "losses": {"_G": [1.5, 0.25], "_D": [0.5, 0.125]},
                           "noise": torch.randn(2, 3, 1, 1), "img_list": [torch.rand(3, 4, 4)]},
                  "views": {"t": torch.arange(12.).view(3, 4).t(), "h": torch.ones(3, dtype=torch.float16)}}.items():
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    put("fuzz_torch_save_file", name + ".pt", buffer.getvalue())
    put("fuzz_zip_directory", name + ".zip", buffer.getvalue())
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as z:
        pkl = [n for n in z.namelist() if n.endswith("data.pkl")][0]
        put("fuzz_pickle_reader", name + ".pkl", z.read(pkl))
# .npy files: latents (N, nz) and images (N, C, H, W), as numpy.save writes them.
import numpy
for name, array in {"latents": numpy.arange(6, dtype="<f4").reshape(2, 3), "images": numpy.zeros((1, 3, 2, 2), "<f4"),
                    "scalar": numpy.float32(1.5)}.items():
    buffer = io.BytesIO()
    numpy.save(buffer, array)
    put("fuzz_npy_array", name + ".npy", buffer.getvalue())
put("fuzz_pickle_reader", "plain.pkl",
    pickle.dumps({"a": [1], "b": -1, "c": (1.5, None, True), "d": "é", "e": 2 ** 40, 7: {}}, protocol=2))

events = [
    {"type": "run_started", "time": 1.5, "run": "demo", "pid": 123, "config": {"nz": 100}},
    {"type": "step", "time": 2.0, "step": 1, "epoch": 0, "loss_d": 1.2, "loss_g": 0.7, "d_x": 0.5},
    {"type": "checkpoint", "time": 3.0, "step": 1, "path": "checkpoints/step-0000000001.pt"},
    {"type": "run_finished", "time": 4.0, "status": "completed"},
]
put("fuzz_event_stream", "run.jsonl", "\x07" + "".join(json.dumps(e) + "\n" for e in events) + '{"type": "cut')

# The job store's messages (core/distributed/job_store_protocol.h): a set, a wait for two keys, a reply.
def store_bytes(b):
    return len(b).to_bytes(4, "big") + b
put("fuzz_store_message", "set.bin", b"\x01" + store_bytes(b"streetgan/join/count") + store_bytes(b"1"))
put("fuzz_store_message", "wait.bin", b"\x05" + (2).to_bytes(4, "big") + store_bytes(b"a") + store_bytes(b"b") +
    (5000).to_bytes(8, "big"))
put("fuzz_store_message", "compare-set.bin", b"\x08" + store_bytes(b"k") + store_bytes(b"") + store_bytes(b"v"))
put("fuzz_store_message", "reply.bin", b"\x00" + store_bytes(b"ok") + (7).to_bytes(8, "big"))

# Long commands' stderr with --progress: progress lines among other diagnostics.
put("fuzz_progress_line", "parzen.txt", 'progress/1 {"task":"parzen-estimate","done":42,"total":100}\n')
put("fuzz_progress_line", "stderr.txt", "warning: skipped /data/a.jpg\n"
    'progress/1 {"task":"parzen-run","done":2,"total":10,"detail":"runs/a/checkpoints/step-30.pt"}\n'
    'progress/1 {"task":"demo-data","done":16,"total":1000,"eta_s":1.5}\n')

put("fuzz_train_config", "all.json", "\x00" + json.dumps({"nz": 100, "ngf": 64, "batch_size": 128, "lr_g": 2e-4}))
put("fuzz_train_config", "recipe.json", "\x00" + json.dumps({"loss": "rpgan", "d_norm": "spectral", "r1_gamma": 10,
                                                             "r2_gamma": 0.5, "reg_every": 3, "n_critic": 2,
                                                             "lr_d": 4e-4, "cuda_graphs": True}))
put("fuzz_train_config", "training.json", "\x01" + json.dumps({"epochs": 5, "img_size": 64}))
put("fuzz_train_config", "checkpoint.json", "\x02" + json.dumps({"save_every": 100}))

put("fuzz_direction_file", "closed-form.json", json.dumps({
    "v": 1, "name": "road", "kind": "closed-form", "checkpoint": "checkpoints/step-0000000096.pt", "step": 96,
    "nz": 4, "vector": [0.5, -0.5, 0.5, 0.5], "eigenvalue": 3.25, "rank": 1}, indent=2) + "\n")
put("fuzz_direction_file", "labelled.json", json.dumps({
    "v": 1, "name": "night", "kind": "labelled", "checkpoint": "c.pt", "step": 3, "nz": 3, "vector": [0.6, 0.8, 0],
    "accuracy": 0.9, "held_out": 2, "labelled": {"has": [[1, 2, 3], [0.5, 0.25, -1]], "lacks": [[-1, -2, -3]]}},
    indent=2) + "\n")

put("fuzz_walk_file", "walk.json", json.dumps({
    "version": 1, "nz": 4, "frames_per_key": 3, "mode": "slerp", "easing": "linear", "loop": False,
    "keyframes": [{"latent": [0.5, -1, 2, 0], "seed": 7}, {"latent": [1, 0, 0, 1]}]}))

# A run's saved Parzen results (evaluations/parzen-*.json), as `streetgan parzen --save` writes them.
parzen_checkpoint = {
    "v": 1, "time": 1700000000.5, "kind": "checkpoint", "checkpoint": "step-00000120.pt", "epoch": 2, "step": 120,
    "images_seen": 960, "sigma": 0.5, "mean_ll": -1234.5, "stderr": 12.25, "n_test": 4, "n_valid": 3,
    "n_samples": 64, "dimensions": 12288, "curve": [{"sigma": 0.1, "mean_ll": -2000.0}, {"sigma": 0.5, "mean_ll": -1500.75}],
    "seconds": {"samples": 1.5, "estimator": 0.25}}
parzen_run = {
    "v": 1, "time": 1700000100.25, "kind": "run", "sigma": 0.5, "sigma_given": False,
    "curve": [{"sigma": 0.1, "mean_ll": -1900.0}, {"sigma": 0.5, "mean_ll": -1700.5}],
    "checkpoints": [{"checkpoint": "step-1.pt", "epoch": 0, "step": 8, "images_seen": 64, "mean_ll": -1800.5,
                     "stderr": 20.0, "n_test": 4},
                    {"checkpoint": "step-2.pt", "epoch": 1, "step": 16, "images_seen": 128, "mean_ll": -1700.25,
                     "stderr": 18.5, "n_test": 4}]}
put("fuzz_parzen_evaluation_file", "checkpoint.json", json.dumps(parzen_checkpoint, indent=2, sort_keys=True) + "\n")
put("fuzz_parzen_evaluation_file", "run.json", json.dumps(parzen_run, indent=2, sort_keys=True) + "\n")

# A run's saved quality metrics (evaluations/metrics-*.json), as `streetgan metrics --save` writes them.
metrics = {
    "v": 1, "time": 1700000200.75, "kind": "metrics", "checkpoint": "step-00000120.pt", "epoch": 2, "step": 120,
    "images_seen": 960, "n_samples": 48, "n_train": 32, "image_size": 64, "feature_space": "pixels32-pca31",
    "metrics": {"swd_e3": 41.5, "swd_e3_64": 30.25, "fid": 12.5, "kid": 0.0125, "copy_rate": 0.0, "made_up": None},
    "seconds": {"swd": 0.5, "fid": 0.125}, "notes": ["MS-SSIM on 3 scales at 64 px (the standard 5 need at least 161 px)"]}
put("fuzz_quality_evaluation_file", "checkpoint.json", json.dumps(metrics, indent=2, sort_keys=True) + "\n")

image = Image.new("RGB", (16, 12), (200, 40, 90))
for fmt, ext in (("JPEG", "jpg"), ("PNG", "png"), ("BMP", "bmp")):
    buffer = io.BytesIO()
    image.save(buffer, fmt)
    put("fuzz_image_header", "small." + ext, buffer.getvalue())
    put("fuzz_image_decoder", "small." + ext, b"\x07" + buffer.getvalue())
buffer = io.BytesIO()
image.convert("L").save(buffer, "JPEG", progressive=True)
put("fuzz_image_header", "grey-progressive.jpg", buffer.getvalue())
put("fuzz_image_decoder", "grey-progressive.jpg", b"\x00" + buffer.getvalue())

if len(sys.argv) > 1:  # a cache built by `streetgan cache build`, passed by path
    with open(sys.argv[1], "rb") as f:
        put("fuzz_image_cache", "small.sgcache", f.read())
