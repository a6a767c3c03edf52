#!/usr/bin/python3
"""Cuts a benchmark corpus of 640x480 JPEG crops (quality 90) from the photographs Debian's
opencv-doc ships, laid out as MSLS: train_val/<photo>/database/images/<key>.jpg with a
seq_info.csv per folder (each photo is one "sequence"; its crops are its frames).

Usage: /usr/bin/python3 bench/make_corpus.py OUT_DIR [--count 3000] [--seed 1]
Needs python3-pil and opencv-doc (packaging/install-deps.sh --bench installs both).
"""
import argparse
import os
import random
import sys

from PIL import Image

SOURCE = "/usr/share/doc/opencv-doc/examples/data"
# Colour photographs of real scenes (streets, buildings, rooms, landscapes, objects); drawings,
# charts, synthetic and grey calibration images are left out.
PHOTOS = [
    "aero1.jpg", "aero3.jpg", "aloeL.jpg", "apple.jpg", "baboon.jpg", "board.jpg", "building.jpg",
    "butterfly.jpg", "ela_original.jpg", "fruits.jpg", "graf1.png", "home.jpg", "lena.jpg",
    "leuvenA.jpg", "leuvenB.jpg", "messi5.jpg", "orange.jpg", "pca_test1.jpg", "smarties.png",
    "stuff.jpg", "squirrel_cls.jpg", "rubberwhale1.png", "basketball1.png",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    photos = []
    for name in PHOTOS:
        path = os.path.join(SOURCE, name)
        if os.path.exists(path):
            photos.append((os.path.splitext(name)[0], Image.open(path).convert("RGB")))
    if not photos:
        sys.exit(f"make_corpus.py: no photographs found in {SOURCE} (apt-get install opencv-doc)")
    rng = random.Random(args.seed)
    rows = {name: [] for name, _ in photos}
    for i in range(args.count):
        name, photo = photos[i % len(photos)]
        # A random zoom (at least enough to cover 640x480), a random window, sometimes mirrored:
        # every crop is a different picture, as consecutive street-level frames are.
        scale = max(640 / photo.width, 480 / photo.height) * rng.uniform(1.0, 1.8)
        w, h = max(640, round(photo.width * scale)), max(480, round(photo.height * scale))
        x, y = rng.randint(0, w - 640), rng.randint(0, h - 480)
        crop = photo.resize((w, h), Image.BILINEAR).crop((x, y, x + 640, y + 480))
        if rng.random() < 0.5:
            crop = crop.transpose(Image.FLIP_LEFT_RIGHT)
        folder = os.path.join(args.out, "train_val", name, "database", "images")
        os.makedirs(folder, exist_ok=True)
        key = f"{name}{i:06d}"
        crop.save(os.path.join(folder, key + ".jpg"), quality=90)
        rows[name].append(key)
    for name, keys in rows.items():
        with open(os.path.join(args.out, "train_val", name, "database", "seq_info.csv"), "w") as f:
            f.write(",key,sequence_key,frame_number\n")
            for frame, key in enumerate(keys):
                f.write(f"{frame},{key},{name},{frame}\n")
    print(f"{args.count} crops of {len(photos)} photographs in {args.out}")


if __name__ == "__main__":
    main()
