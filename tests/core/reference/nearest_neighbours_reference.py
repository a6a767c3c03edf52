#!/usr/bin/env python3
"""Exact k nearest neighbours by brute force, the judge of core/eval/nearest_neighbour_search.

For every query row, the Euclidean distance to every reference row is computed from the
differences in float64, sqrt(sum((r - q)^2)), and the k smallest are taken in ascending order.

Usage: nearest_neighbours_reference.py QUERIES.npy REFERENCE.npy K EXCLUDED
  EXCLUDED: "none"; "self" (query i is reference row i and never gets row i back); or an .npy
  file with one reference row per query that the query never gets back (-1 for none).
Prints one JSON object: {"distances": [[...]], "indices": [[...]]}.
"""
import json
import sys

import numpy as np


def main():
    queries = np.load(sys.argv[1]).astype(np.float64)
    reference = np.load(sys.argv[2]).astype(np.float64)
    k = int(sys.argv[3])
    mode = sys.argv[4]
    if mode == "none":
        excluded = [-1] * queries.shape[0]
    elif mode == "self":
        excluded = list(range(queries.shape[0]))
    else:
        excluded = [int(round(v)) for v in np.load(mode).reshape(-1)]
    distances, indices = [], []
    for i in range(queries.shape[0]):
        d = np.sqrt(((reference - queries[i]) ** 2).sum(axis=1))
        if excluded[i] >= 0:
            d[excluded[i]] = np.inf
        order = np.argsort(d, kind="stable")[:k]
        distances.append([float(v) for v in d[order]])
        indices.append([int(v) for v in order])
    print(json.dumps({"distances": distances, "indices": indices}))


if __name__ == "__main__":
    main()
