#!/usr/bin/python3
"""Independent references (numpy only) for core/latent's SemanticDirections.

  semantic_directions_reference.py sefa WEIGHT.npy TOP
  semantic_directions_reference.py pca LATENTS.npy ACTIVATIONS.npy TOP

sefa: the first layer's weight (nz, C, 4, 4) is A transposed (A maps z to the layer's output);
the unit eigenvectors of A^T A by numpy's eigh, largest eigenvalue first. pca: the principal axes
of the centred activations by numpy's SVD, each axis' projections regressed on the latents with
numpy's lstsq, the result made unit length; the strength is the axis' share of the variance.
Each prints one JSON object: "vectors" (TOP rows of nz values) and "strengths".
"""
import json
import sys

import numpy as np


def sefa(weight, top):
    a_t = weight.reshape(weight.shape[0], -1).astype(np.float64)
    values, vectors = np.linalg.eigh(a_t @ a_t.T)
    order = np.argsort(values)[::-1][:top]
    return vectors[:, order].T, values[order]


def pca(latents, activations, top):
    centred = activations - activations.mean(0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    axes = vt[:top].T
    u = np.linalg.lstsq(latents, centred @ axes, rcond=None)[0]
    u /= np.linalg.norm(u, axis=0)
    return u.T, (s[:top] ** 2) / (centred ** 2).sum()


def main():
    if sys.argv[1] == "sefa":
        vectors, strengths = sefa(np.load(sys.argv[2]), int(sys.argv[3]))
    else:
        vectors, strengths = pca(np.load(sys.argv[2]).astype(np.float64), np.load(sys.argv[3]).astype(np.float64),
                                 int(sys.argv[4]))
    print(json.dumps({"vectors": vectors.tolist(), "strengths": strengths.tolist()}))


if __name__ == "__main__":
    main()
