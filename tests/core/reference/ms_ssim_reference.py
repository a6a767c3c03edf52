#!/usr/bin/python3
"""Independent reference (numpy only) for core/eval/ms_ssim: the multi-scale SSIM of Wang,
Simoncelli and Bovik 2003 as tf.image.ssim_multiscale computes it, one value per pair (a[i], b[i]).

  ms_ssim_reference.py A.npy B.npy SCALES

A and B are images N x C x H x W in [-1, 1]; they are mapped to [0, 1] and compared with data range
L = 1. Prints one JSON object: {"ms_ssim": [one value per pair], "scales": SCALES}.

Written plainly from the definition: an 11 x 11 Gaussian window (sigma 1.5, normalised to sum 1),
applied as one 2-D kernel with no padding (each output pixel one explicit weighted sum of 121
shifted copies); K1 = 0.01, K2 = 0.03; per channel and scale the mean over the map of the
contrast-structure term cs, and at the last scale the mean of luminance x cs; negative values
clamped to 0; the weighted product over scales with the standard weights (all five as they are;
fewer: the first SCALES renormalised to sum 1); then the mean over channels. Between scales a 2 x 2 average, after
repeating the last row or column of an odd-sized image (tf's SYMMETRIC padding by 1).
"""
import json
import sys

import numpy as np

WEIGHTS = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333]
WINDOW_SIZE, SIGMA, K1, K2 = 11, 1.5, 0.01, 0.03


def gaussian_window():
    coords = np.arange(WINDOW_SIZE) - (WINDOW_SIZE - 1) / 2.0
    g = np.exp(-coords ** 2 / (2.0 * SIGMA ** 2))
    window = np.outer(g, g)
    return window / window.sum()


def filter_valid(x, window):
    """2-D 'valid' filtering of every channel plane of x (C, H, W)."""
    k = window.shape[0]
    h, w = x.shape[1] - k + 1, x.shape[2] - k + 1
    out = np.zeros((x.shape[0], h, w))
    for dy in range(k):
        for dx in range(k):
            out += window[dy, dx] * x[:, dy:dy + h, dx:dx + w]
    return out


def ssim_terms(x, y, window):
    """Per channel: the mean of cs and the mean of luminance * cs over the valid map."""
    c1, c2 = (K1 * 1.0) ** 2, (K2 * 1.0) ** 2
    mu_x, mu_y = filter_valid(x, window), filter_valid(y, window)
    var_x = filter_valid(x * x, window) - mu_x * mu_x
    var_y = filter_valid(y * y, window) - mu_y * mu_y
    cov = filter_valid(x * y, window) - mu_x * mu_y
    luminance = (2.0 * mu_x * mu_y + c1) / (mu_x * mu_x + mu_y * mu_y + c1)
    cs = (2.0 * cov + c2) / (var_x + var_y + c2)
    return cs.mean(axis=(1, 2)), (luminance * cs).mean(axis=(1, 2))


def downsample(x):
    h, w = x.shape[1], x.shape[2]
    x = np.pad(x, ((0, 0), (0, h % 2), (0, w % 2)), mode="symmetric")
    return 0.25 * (x[:, 0::2, 0::2] + x[:, 0::2, 1::2] + x[:, 1::2, 0::2] + x[:, 1::2, 1::2])


def ms_ssim(x, y, scales):
    weights = np.array(WEIGHTS[:scales])
    if scales < len(WEIGHTS):
        weights = weights / np.sum(weights)  # all five as they are (they sum to 1.0001, as tf)
    window = gaussian_window()
    x, y = (x + 1.0) / 2.0, (y + 1.0) / 2.0
    per_channel = np.ones(x.shape[0])
    for scale in range(scales):
        if scale > 0:
            x, y = downsample(x), downsample(y)
        cs, ssim = ssim_terms(x, y, window)
        term = ssim if scale == scales - 1 else cs
        per_channel *= np.maximum(term, 0.0) ** weights[scale]
    return float(per_channel.mean())


def main():
    a = np.load(sys.argv[1]).astype(np.float64)
    b = np.load(sys.argv[2]).astype(np.float64)
    scales = int(sys.argv[3])
    print(json.dumps({"ms_ssim": [ms_ssim(a[i], b[i], scales) for i in range(a.shape[0])], "scales": scales}))


if __name__ == "__main__":
    main()
