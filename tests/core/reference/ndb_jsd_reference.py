#!/usr/bin/env python3
"""NDB and JSD (Richardson and Weiss 2018, "On GANs and GMMs"), the judge of core/eval/ndb_jsd.

Images (N, C, H, W) are reduced to SIZE x SIZE by area averaging (adaptive average pooling, as
in memorisation_reference.py) and flattened channel-major. k-means on the training rows starts
from the given centres (the engine's k-means++ choice, so that both sides start alike) and runs
Lloyd's algorithm: at most ITERATIONS rounds of (assign every row to its nearest centre by
Euclidean distance, first centre on ties; stop if the assignment equals the previous one; move
each centre to the mean of its rows, an empty cluster keeping its centre). Training rows and
samples are assigned to the final centres; per bin, a two-proportion z-test with the pooled
proportion, significant when |z| > the normal quantile for 1 - ALPHA/2 (scipy.stats.norm.isf(ALPHA/2),
which is norm.ppf(1 - ALPHA/2); Python's statistics.NormalDist().inv_cdf where scipy is not
installed); z = 0 when the pooled proportion is 0 or 1; NDB = the number of significant bins;
JSD = 0.5 KL(p||m) + 0.5 KL(q||m), m = (p + q)/2, natural log, zero-probability terms skipped.

Usage: ndb_jsd_reference.py SAMPLES.npy TRAIN.npy CENTRES.npy SIZE ITERATIONS ALPHA
Prints one JSON object.
"""
import json
import math
import sys

import numpy as np

from image_rows import downsample

try:
    from scipy.stats import norm

    def upper_quantile(tail):
        return float(norm.isf(tail))
except ImportError:  # Debian's python3 without python3-scipy
    from statistics import NormalDist

    def upper_quantile(tail):
        return -NormalDist().inv_cdf(tail)


def assign(rows, centres):
    labels = np.empty(rows.shape[0], dtype=np.int64)
    for i in range(rows.shape[0]):
        labels[i] = np.argmin(((centres - rows[i]) ** 2).sum(axis=1))
    return labels


def kl(p, m):
    return sum(pi * math.log(pi / mi) for pi, mi in zip(p, m) if pi > 0)


def main():
    samples = downsample(np.load(sys.argv[1]).astype(np.float64), int(sys.argv[4]))
    train = downsample(np.load(sys.argv[2]).astype(np.float64), int(sys.argv[4]))
    centres = np.load(sys.argv[3]).astype(np.float64)
    iterations = int(sys.argv[5])
    alpha = float(sys.argv[6])
    k = centres.shape[0]

    previous = None
    moved = 0
    for _ in range(iterations):
        labels = assign(train, centres)
        if previous is not None and np.array_equal(labels, previous):
            break
        updated = centres.copy()
        for j in range(k):
            members = train[labels == j]
            if len(members) > 0:
                updated[j] = members.mean(axis=0)
        centres = updated
        previous = labels
        moved += 1

    train_counts = np.bincount(assign(train, centres), minlength=k)
    sample_counts = np.bincount(assign(samples, centres), minlength=k)
    n1, n2 = len(train), len(samples)
    p1, p2 = train_counts / n1, sample_counts / n2
    pooled = (train_counts + sample_counts) / (n1 + n2)
    se = np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    z = np.where(se > 0, (p1 - p2) / np.where(se > 0, se, 1), 0.0)
    z_critical = upper_quantile(alpha / 2)
    significant = np.abs(z) > z_critical
    m = (p1 + p2) / 2
    jsd = 0.5 * kl(p1, m) + 0.5 * kl(p2, m)
    print(json.dumps({
        "train_counts": [int(v) for v in train_counts],
        "sample_counts": [int(v) for v in sample_counts],
        "train_proportions": [float(v) for v in p1],
        "sample_proportions": [float(v) for v in p2],
        "z": [float(v) for v in z],
        "significant": [bool(v) for v in significant],
        "z_critical": z_critical,
        "ndb": int(significant.sum()),
        "ndb_fraction": float(significant.sum()) / k,
        "jsd": jsd,
        "lloyd_iterations": moved,
        "centres": [[float(v) for v in row] for row in centres],
    }))


if __name__ == "__main__":
    main()
