#!/usr/bin/env python3
"""The memorisation check by brute force, the judge of core/eval/memorisation.

Images (N, C, H, W) are reduced to SIZE x SIZE by area averaging (adaptive average pooling:
output pixel i covers input rows floor(i*H/SIZE) .. ceil((i+1)*H/SIZE) - 1, likewise for columns;
for H divisible by SIZE these are the plain block means) and flattened channel-major. Then:
  - each sample's K nearest training rows (Euclidean distance from the differences, float64);
  - each training row listed in SUBSET: the distance to its nearest other training row;
  - threshold = numpy.percentile(those distances, PERCENTILE), median = numpy.median(them);
  - copy rate = share of samples whose nearest distance <= threshold;
  - ratio = nearest distance / median, with its mean and median.

Usage: memorisation_reference.py SAMPLES.npy TRAIN.npy SUBSET.npy SIZE PERCENTILE K
Prints one JSON object.
"""
import json
import sys

import numpy as np

from image_rows import downsample


def distances_to(rows, row):
    return np.sqrt(((rows - row) ** 2).sum(axis=1))


def main():
    samples = np.load(sys.argv[1]).astype(np.float64)
    train = np.load(sys.argv[2]).astype(np.float64)
    subset = [int(round(v)) for v in np.load(sys.argv[3]).reshape(-1)]
    size = int(sys.argv[4])
    percentile = float(sys.argv[5])
    k = int(sys.argv[6])

    s = downsample(samples, size)
    t = downsample(train, size)

    nearest_indices, nearest_distances = [], []
    for i in range(s.shape[0]):
        d = distances_to(t, s[i])
        order = np.argsort(d, kind="stable")[:k]
        nearest_indices.append([int(v) for v in order])
        nearest_distances.append([float(v) for v in d[order]])
    nearest = np.array([row[0] for row in nearest_distances])

    train_nn = []
    for index in subset:
        d = distances_to(t, t[index])
        d[index] = np.inf
        train_nn.append(d.min())
    train_nn = np.array(train_nn)

    threshold = float(np.percentile(train_nn, percentile))
    median = float(np.median(train_nn))
    ratio = nearest / median
    print(json.dumps({
        "nearest_indices": nearest_indices,
        "nearest_distances": nearest_distances,
        "train_nn_distance": [float(v) for v in train_nn],
        "threshold": threshold,
        "train_nn_median": median,
        "copy_rate": float(np.mean(nearest <= threshold)),
        "ratio": [float(v) for v in ratio],
        "mean_ratio": float(np.mean(ratio)),
        "median_ratio": float(np.median(ratio)),
    }))


if __name__ == "__main__":
    main()
