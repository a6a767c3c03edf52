#!/usr/bin/python3
"""Independent references (numpy/scipy only) for core/eval's feature-space metrics.

  feature_metrics_reference.py fid REAL.npy FAKE.npy
  feature_metrics_reference.py kid REAL.npy FAKE.npy REAL_SUBSETS.npy FAKE_SUBSETS.npy
  feature_metrics_reference.py prdc REAL.npy FAKE.npy K
  feature_metrics_reference.py pca TRAIN_IMAGES.npy SIZE COMPONENTS OTHER_IMAGES.npy
  feature_metrics_reference.py network NET.pt REAL_IMAGES.npy FAKE_IMAGES.npy REAL_SUBSETS.npy FAKE_SUBSETS.npy

Each prints one JSON object. `network` runs a TorchScript network with python3-torch (only to
get its features) and computes FID, KID and PRDC on them with the numpy code above. FID follows Heusel et al.'s reference code (scipy.linalg.sqrtm of the
product of the covariances, a different method from the engine's eigendecompositions); KID is
Bińkowski et al.'s unbiased MMD² with the cubic kernel on the given subsets; PRDC follows Naeem et
al.'s code (a full distance matrix, the k-th neighbour by np.partition).
"""
import json
import sys

import numpy as np
import scipy.linalg
import scipy.spatial.distance

from image_rows import downsample


def fid(real, fake):
    mu1, mu2 = real.mean(0), fake.mean(0)
    s1, s2 = np.cov(real, rowvar=False), np.cov(fake, rowvar=False)
    covmean, _ = scipy.linalg.sqrtm(s1.dot(s2), disp=False)
    covmean = covmean.real
    diff = mu1 - mu2
    return float(diff.dot(diff) + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


def kid(real, fake, real_subsets, fake_subsets):
    d = real.shape[1]
    values = []
    for ri, fi in zip(real_subsets.astype(np.int64), fake_subsets.astype(np.int64)):
        x, y = real[ri], fake[fi]
        m = x.shape[0]
        kxx = (x @ x.T / d + 1) ** 3
        kyy = (y @ y.T / d + 1) ** 3
        kxy = (x @ y.T / d + 1) ** 3
        values.append((kxx.sum() - np.trace(kxx)) / (m * (m - 1)) + (kyy.sum() - np.trace(kyy)) / (m * (m - 1))
                      - 2 * kxy.sum() / (m * m))
    return values


def kth_radii(rows, k):
    distances = scipy.spatial.distance.cdist(rows, rows)
    # Index 0 of each sorted row is the row itself (distance 0); index k is the k-th other row.
    return np.partition(distances, k, axis=1)[:, k]


def prdc(real, fake, k):
    real_radii, fake_radii = kth_radii(real, k), kth_radii(fake, k)
    d = scipy.spatial.distance.cdist(real, fake)
    precision = (d < real_radii[:, None]).any(axis=0).mean()
    recall = (d < fake_radii[None, :]).any(axis=1).mean()
    density = (1.0 / k) * (d < real_radii[:, None]).sum(axis=0).mean()
    coverage = (d.min(axis=1) < real_radii).mean()
    return dict(precision=float(precision), recall=float(recall), density=float(density), coverage=float(coverage))


def pca(train, size, components, other):
    rows = downsample(train, size)
    mean = rows.mean(0)
    _, singular, vt = np.linalg.svd(rows - mean, full_matrices=False)
    variances = singular ** 2 / (rows.shape[0] - 1)
    basis = vt[:components].T
    train_features = (rows - mean) @ basis
    other_features = (downsample(other, size) - mean) @ basis
    return dict(variances=variances[:components].tolist(), fid=fid(train_features, other_features),
                prdc=prdc(train_features, other_features, 5))


def network(net_path, real_images, fake_images, real_subsets, fake_subsets):
    import torch
    net = torch.jit.load(net_path)
    net.eval()
    with torch.no_grad():
        real = net(torch.from_numpy(real_images).float()).double().numpy()
        fake = net(torch.from_numpy(fake_images).float()).double().numpy()
    return dict(fid=fid(real, fake), kid=kid(real, fake, real_subsets, fake_subsets), prdc=prdc(real, fake, 5))


def main():
    what = sys.argv[1]
    if what == "fid":
        print(json.dumps({"fid": fid(np.load(sys.argv[2]), np.load(sys.argv[3]))}))
    elif what == "kid":
        values = kid(np.load(sys.argv[2]), np.load(sys.argv[3]), np.load(sys.argv[4]), np.load(sys.argv[5]))
        print(json.dumps({"values": values}))
    elif what == "prdc":
        print(json.dumps(prdc(np.load(sys.argv[2]), np.load(sys.argv[3]), int(sys.argv[4]))))
    elif what == "pca":
        print(json.dumps(pca(np.load(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), np.load(sys.argv[5]))))
    elif what == "network":
        print(json.dumps(network(sys.argv[2], np.load(sys.argv[3]), np.load(sys.argv[4]), np.load(sys.argv[5]),
                                 np.load(sys.argv[6]))))
    else:
        sys.exit(f"unknown reference '{what}'")


if __name__ == "__main__":
    main()
