#!/usr/bin/python3
"""Independent reference (numpy only) for core/eval/sliced_wasserstein: the sliced Wasserstein
distance on Laplacian-pyramid patches of Karras et al. 2018 ("Progressive Growing of GANs",
appendix D, metrics/sliced_wasserstein.py), given the random parts explicitly.

  sliced_wasserstein_reference.py DIR MIN_RESOLUTION PATCH_SIZE

DIR holds a.npy and b.npy (images N x 3 x S x S) and, for each pyramid level L (0 = finest),
positions_a_L.npy and positions_b_L.npy (M x 3 rows: image, centre row, centre column) and
directions_L.npy (D x P, D = 3 * PATCH_SIZE^2, columns normalised here). Prints one JSON object:
resolutions, the Frobenius norm of every level of each set (level_norms_a, level_norms_b) and the
distance of every level (distances, not multiplied by 1e3).

Written from the paper's code, plainly: the 5x5 binomial kernel [1 4 6 4 1]^T [1 4 6 4 1] / 256 is
applied as one 2-D kernel (no separation) with whole-sample mirror borders (d c b | a b c d | c b a:
numpy's 'reflect', scipy.ndimage's 'mirror', cv2's pyrDown), each output pixel one explicit
weighted sum of 25 shifted copies. The descriptor of a patch is its 3 x P x P block read in
(channel, row, column) order.
"""
import json
import os
import sys

import numpy as np

KERNEL = np.outer([1.0, 4.0, 6.0, 4.0, 1.0], [1.0, 4.0, 6.0, 4.0, 1.0]) / 256.0


def convolve_mirror(x, kernel):
    """2-D convolution of every (image, channel) plane with a 5x5 kernel, mirror borders."""
    padded = np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)), mode="reflect")
    h, w = x.shape[2], x.shape[3]
    out = np.zeros_like(x)
    for dy in range(5):
        for dx in range(5):
            # the kernel is symmetric, so correlation and convolution agree
            out += kernel[dy, dx] * padded[:, :, dy:dy + h, dx:dx + w]
    return out


def pyr_down(x):
    return convolve_mirror(x, KERNEL)[:, :, ::2, ::2]


def pyr_up(x):
    n, c, h, w = x.shape
    up = np.zeros((n, c, 2 * h, 2 * w))
    up[:, :, ::2, ::2] = x
    return convolve_mirror(up, 4.0 * KERNEL)


def resolutions(size, min_resolution):
    out = []
    while size >= min_resolution:
        out.append(size)
        size //= 2
    return out


def laplacian_pyramid(images, levels):
    gaussian = [images]
    for _ in range(1, levels):
        gaussian.append(pyr_down(gaussian[-1]))
    laplacian = [gaussian[i] - pyr_up(gaussian[i + 1]) for i in range(levels - 1)]
    return laplacian + [gaussian[-1]]


def descriptors(level, positions, patch):
    half = patch // 2
    out = np.empty((len(positions), level.shape[1], patch, patch))
    for k, (image, row, col) in enumerate(np.rint(positions).astype(np.int64)):
        assert half <= row < level.shape[2] - half and half <= col < level.shape[3] - half
        out[k] = level[image, :, row - half:row + half + 1, col - half:col + half + 1]
    return out


def normalise(desc):
    """Karras' finalize_descriptors: per channel, over every patch and pixel; a zero std is left 1."""
    desc = desc - desc.mean(axis=(0, 2, 3), keepdims=True)
    std = desc.std(axis=(0, 2, 3), keepdims=True)
    std[std == 0] = 1.0
    return (desc / std).reshape(len(desc), -1)


def sliced_wasserstein(a, b, directions):
    directions = directions / np.sqrt(np.sum(np.square(directions), axis=0, keepdims=True))
    proj_a = np.sort(a @ directions, axis=0)
    proj_b = np.sort(b @ directions, axis=0)
    return float(np.mean(np.abs(proj_a - proj_b)))


def main():
    folder, min_resolution, patch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    a = np.load(os.path.join(folder, "a.npy")).astype(np.float64)
    b = np.load(os.path.join(folder, "b.npy")).astype(np.float64)
    levels = resolutions(a.shape[2], min_resolution)
    pyramid_a = laplacian_pyramid(a, len(levels))
    pyramid_b = laplacian_pyramid(b, len(levels))
    distances = []
    for index in range(len(levels)):
        pa = np.load(os.path.join(folder, "positions_a_%d.npy" % index))
        pb = np.load(os.path.join(folder, "positions_b_%d.npy" % index))
        directions = np.load(os.path.join(folder, "directions_%d.npy" % index))
        da = normalise(descriptors(pyramid_a[index], pa, patch))
        db = normalise(descriptors(pyramid_b[index], pb, patch))
        distances.append(sliced_wasserstein(da, db, directions))
    print(json.dumps({
        "resolutions": levels,
        "level_norms_a": [float(np.sqrt(np.sum(np.square(level)))) for level in pyramid_a],
        "level_norms_b": [float(np.sqrt(np.sum(np.square(level)))) for level in pyramid_b],
        "distances": distances,
        "mean_e3": float(np.mean(distances) * 1e3),
    }))


if __name__ == "__main__":
    main()
