#!/usr/bin/env python3
"""The original tool's image server, for bench_serve.py: a Flask app with the same routes
(/health, /gan_imgs) that renders a grid of generated images with PyTorch and PIL, as the original
did. It loads the generator that `streetgan export` wrote (G.pt + G.json), so both servers run the
same weights.

  reference_gallery.py --state G.pt --sidecar G.json --port 8091
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


def grid_png(images):
    """make_grid(padding=2) of images in [-1, 1], as PNG bytes."""
    n, c, h, w = images.shape
    columns = math.ceil(math.sqrt(n))
    rows = math.ceil(n / columns)
    out = torch.zeros(c, rows * (h + 2) + 2, columns * (w + 2) + 2, dtype=torch.uint8)
    pixels = ((images.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
    for i in range(n):
        y, x = 2 + (i // columns) * (h + 2), 2 + (i % columns) * (w + 2)
        out[:, y:y + h, x:x + w] = pixels[i]
    buffer = io.BytesIO()
    Image.fromarray(out.permute(1, 2, 0).numpy()).save(buffer, format='PNG')
    return buffer.getvalue()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--state', required=True)
    parser.add_argument('--sidecar', required=True)
    parser.add_argument('--port', type=int, default=8091)
    parser.add_argument('--threads', type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    meta = json.load(open(args.sidecar))
    G = generator(meta['nz'], meta['ngf'], meta['nc'], meta['img_size'])
    G.load_state_dict(torch.load(args.state))
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
        return Response(grid_png(images), mimetype='image/png', headers={'Cache-Control': 'no-store'})

    app.run(host='127.0.0.1', port=args.port, threaded=True)


if __name__ == '__main__':
    main()
