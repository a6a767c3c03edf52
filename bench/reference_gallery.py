#!/usr/bin/env python3
"""The original tool's image server, for bench_serve.py: a Flask app with the same routes
(/health, /gan_imgs) that renders a grid of generated images with PyTorch and PIL, as the original
did. It loads the generator that `streetgan export` wrote (G.pt + G.json), so both servers run the
same weights.

Run as the original ran, on Flask's development server (PIL's PNG defaults: zlib level 6, the
default strategy, a filter chosen per row; torch's default threads):

  reference_gallery.py --state G.pt --sidecar G.json --port 8091

or under gunicorn through the app factory, with the PNG encoded as `streetgan serve` encodes it
(OpenCV's default: zlib level 1, strategy Z_RLE) and one torch thread per worker:

  python3 -m gunicorn --pythonpath bench --workers 2 --threads 2 --bind 127.0.0.1:8091 \\
      'reference_gallery:create_app("G.pt", "G.json", torch_threads=1, png_level=1, png_strategy="rle")'

PIL has no option to fix the PNG row filter: it picks one per row (the smallest sum of
differences, as libpng's adaptive filtering), where OpenCV's default uses SUB on every row.
"""
import argparse
import io
import json
import math
import os
import sys

import torch
from flask import Flask, Response, request
from PIL import Image

# The reference DCGAN of the interop tests, so both reference programs build one and the same net.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'cli'))
from reference_dcgan import generator  # noqa: E402

# zlib's strategies by name, as PIL's compress_type takes them (zlib.h: Z_DEFAULT_STRATEGY ... Z_FIXED).
PNG_STRATEGIES = {'default': 0, 'filtered': 1, 'huffman': 2, 'rle': 3, 'fixed': 4}


def grid_png(images, png_level=None, png_strategy=None):
    """make_grid(padding=2) of images in [-1, 1], as PNG bytes. png_level (0-9) and png_strategy
    (a PNG_STRATEGIES name) go to PIL as compress_level and compress_type; None keeps PIL's
    default (zlib's level 6 and default strategy), as the original tool encoded."""
    n, c, h, w = images.shape
    columns = math.ceil(math.sqrt(n))
    rows = math.ceil(n / columns)
    out = torch.zeros(c, rows * (h + 2) + 2, columns * (w + 2) + 2, dtype=torch.uint8)
    pixels = ((images.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
    for i in range(n):
        y, x = 2 + (i // columns) * (h + 2), 2 + (i % columns) * (w + 2)
        out[:, y:y + h, x:x + w] = pixels[i]
    options = {}
    if png_level is not None:
        options['compress_level'] = int(png_level)
    if png_strategy is not None:
        options['compress_type'] = PNG_STRATEGIES[png_strategy]
    buffer = io.BytesIO()
    # optimize stays off: it would raise the level to 9 (PIL's PngImagePlugin).
    Image.fromarray(out.permute(1, 2, 0).numpy()).save(buffer, format='PNG', optimize=False, **options)
    return buffer.getvalue()


def create_app(state, sidecar, torch_threads=None, png_level=None, png_strategy=None):
    """The Flask app on the generator of `state` and `sidecar`; gunicorn calls this in each worker.
    torch_threads None keeps torch's default (one thread a physical core)."""
    if png_level is not None and not 0 <= int(png_level) <= 9:
        raise ValueError(f'png_level {png_level}: give 0 to 9')
    if png_strategy is not None and png_strategy not in PNG_STRATEGIES:
        raise ValueError(f'png_strategy {png_strategy!r}: give one of {", ".join(PNG_STRATEGIES)}')
    if torch_threads is not None:
        torch.set_num_threads(int(torch_threads))
    meta = json.load(open(sidecar))
    G = generator(meta['nz'], meta['ngf'], meta['nc'], meta['img_size'])
    G.load_state_dict(torch.load(state))
    G.eval()
    app = Flask(__name__)

    @app.route('/health')
    def health():
        return {'status': 'ok'}

    @app.route('/gan_imgs')
    def gan_imgs():
        n = int(request.args.get('n', 16))
        with torch.no_grad():
            images = G(torch.randn(n, meta['nz'], 1, 1))
        return Response(grid_png(images, png_level, png_strategy), mimetype='image/png',
                        headers={'Cache-Control': 'no-store'})

    return app


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--state', required=True)
    parser.add_argument('--sidecar', required=True)
    parser.add_argument('--port', type=int, default=8091)
    parser.add_argument('--threads', type=int, default=None, help="torch threads (default: torch's own)")
    parser.add_argument('--png-level', type=int, choices=range(10), default=None,
                        help="zlib level 0-9 (default: PIL's, level 6)")
    parser.add_argument('--png-strategy', choices=sorted(PNG_STRATEGIES), default=None,
                        help="zlib strategy (default: PIL's, zlib's default strategy)")
    args = parser.parse_args()
    app = create_app(args.state, args.sidecar, args.threads, args.png_level, args.png_strategy)
    app.run(host='127.0.0.1', port=args.port, threaded=True)


if __name__ == '__main__':
    main()
