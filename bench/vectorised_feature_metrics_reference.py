"""The feature metrics of core/eval (the pixel feature space, FID, KID, PRDC, the memorisation
check) and the exact nearest-neighbour search as a competent researcher's tuned code computes them
today: part of the reference that bench/bench_metrics.py times beside `streetgan bench metrics`;
vectorised_image_metrics_reference.py holds the rest (SWD, the MS-SSIM diversity, NDB and JSD).

Each function does the work of ours under the default QualitySuiteOptions (the counts below are
core/eval/*.h's defaults), in float32 and vectorised, as the metrics' own reference code does it:
  - features: 32x32 pixel rows, the top 256 eigenpairs of XᵀX (or of the Gram matrix XXᵀ when
    there are fewer images than pixels) by BLAS ssyrk and LAPACK ssyevr (scipy.linalg.eigh with
    subset_by_index) instead of a full SVD: the same components;
  - fid: means and covariances from float32 products, the 256x256 square roots in float64 by two
    symmetric eigendecompositions (the trace pytorch-fid takes from scipy.linalg.sqrtm of Σr·Σg, a
    Schur decomposition of a non-symmetric product);
  - kid: Bińkowski et al.'s unbiased MMD² with the cubic kernel, 100 subsets of 1,000, each by
    float32 matrix products (numpy);
  - prdc, memorisation and the nearest-neighbour search: squared distances ‖q‖² + ‖r‖² − 2q·r by
    float32 matrix products in blocks, the k smallest by torch.topk (torch float32: topk is about
    3.5x numpy's partition here; the products are the same BLAS).
Images are averaged down to rows by vectorised_image_metrics_reference.downsample (torch's
avg_pool2d).

Random parts (subsets, the memorisation check's queries) come from the numpy Generator passed in,
not from ours, so the figures that depend on them agree with ours only within the noise of the
draws. The pieces take those parts explicitly (kid's subsets, memorisation's training queries), so
that a check can give them an oracle's or ours'. Inputs are float32 numpy arrays (images
(N, 3, S, S) in [-1, 1], feature rows (n, d)).
Import this module only after bench_record.set_threads(): numpy, scipy and torch read their thread
counts when they load. Reference only: numpy, scipy and torch are never runtime dependencies of
StreetGAN.
"""
import numpy as np
import scipy.linalg
import torch

from vectorised_image_metrics_reference import downsample

BLOCK_VALUES = 1 << 24  # float32 values of one distance block (64 MiB)


# The pixel feature space, FID and KID.

def pixel_pca(train, samples, size=32, components=256):
    """Features of the training images and the samples (float32, (n, components)): rows at
    size x size less the training mean, on the top principal components of the training rows
    (at most n_train − 1, as ours)."""
    rows = downsample(train, size)
    mean = rows.mean(axis=0, dtype=np.float64).astype(np.float32)
    centred = rows - mean
    n, d = centred.shape
    k = min(components, n - 1)
    if n < d:  # the Gram matrix XXᵀ has XᵀX's non-zero spectrum; component = Xᵀu / √λ
        gram = scipy.linalg.blas.ssyrk(1.0, centred.T, trans=1)
        values, vectors = scipy.linalg.eigh(gram, lower=False, subset_by_index=[n - k, n - 1], driver="evr")
        basis = (centred.T @ vectors) / np.sqrt(np.where(values > 0, values, 1))
    else:
        covariance = scipy.linalg.blas.ssyrk(1.0, centred.T)
        _, basis = scipy.linalg.eigh(covariance, lower=False, subset_by_index=[d - k, d - 1], driver="evr")
    basis = np.ascontiguousarray(basis[:, ::-1])  # largest variance first
    return centred @ basis, (downsample(samples, size) - mean) @ basis


def mean_and_covariance(x):
    """The mean (float64) and the covariance (n − 1; a float32 product, returned as float64)."""
    mean = x.mean(axis=0, dtype=np.float64)
    centred = x - mean.astype(np.float32)
    return mean, (centred.T @ centred).astype(np.float64) / (len(x) - 1)


def symmetric_sqrt(matrix):
    """The square root of a symmetric matrix by eigh, negative eigenvalues (rounding) as 0."""
    values, vectors = np.linalg.eigh(matrix)
    return (vectors * np.sqrt(np.maximum(values, 0))) @ vectors.T


def fid(real, fake):
    """‖μr − μg‖² + tr(Σr + Σg − 2(Σr^½ Σg Σr^½)^½) (Heusel et al. 2017)."""
    mu_r, sigma_r = mean_and_covariance(real)
    mu_g, sigma_g = mean_and_covariance(fake)
    root = symmetric_sqrt(sigma_r)
    inner = root @ sigma_g @ root
    trace_root = np.sqrt(np.maximum(np.linalg.eigvalsh((inner + inner.T) / 2), 0)).sum()
    distance = np.square(mu_r - mu_g).sum() + np.trace(sigma_r) + np.trace(sigma_g) - 2 * trace_root
    return {"fid": max(float(distance), 0.0)}


def cubic_kernel_sum(a, b, off_diagonal):
    """Σ (a·b/d + 1)³ over all pairs of rows (without the diagonal when asked), summed in float64."""
    k = a @ b.T
    k *= 1 / a.shape[1]
    k += 1
    cubed = k * k
    cubed *= k
    total = cubed.sum(dtype=np.float64)
    return total - np.trace(cubed, dtype=np.float64) if off_diagonal else total


def draw_subsets(rng, n, size, subsets):
    """(subsets, size) rows of distinct indices below n."""
    return np.stack([rng.permutation(n)[:size] for _ in range(subsets)])


def kid(real, fake, rng, subsets=100, subset_size=1000, real_subsets=None, fake_subsets=None):
    """The mean and std (n − 1) over subsets of the unbiased MMD² with the cubic kernel (Bińkowski et
    al. 2018); subsets of min(subset_size, n_real, n_fake) rows, drawn unless given."""
    size = min(subset_size, len(real), len(fake))
    real_subsets = draw_subsets(rng, len(real), size, subsets) if real_subsets is None else real_subsets
    fake_subsets = draw_subsets(rng, len(fake), size, subsets) if fake_subsets is None else fake_subsets
    m = real_subsets.shape[1]
    values = []
    for r, f in zip(real_subsets, fake_subsets):
        x, y = real[r], fake[f]
        same = (cubic_kernel_sum(x, x, True) + cubic_kernel_sum(y, y, True)) / (m * (m - 1))
        values.append(same - 2 * cubic_kernel_sum(x, y, False) / (m * m))
    return {"kid": float(np.mean(values)), "kid_std": float(np.std(values, ddof=1)) if len(values) > 1 else 0.0}


# Nearest neighbours: PRDC, the memorisation check and the search.

def nearest_squared(queries, reference, k, excluded=None):
    """The k nearest reference rows of each query (torch float32 rows): squared distances
    ‖q‖² + ‖r‖² − 2q·r (clamped at 0), ascending, and their indices, both (n, k); query i never
    gets reference row excluded[i]. Blocks of queries keep each product under 64 MiB."""
    reference_norms = reference.square().sum(dim=1)
    rows = max(1, BLOCK_VALUES // len(reference))
    distances = torch.empty(len(queries), k)
    indices = torch.empty(len(queries), k, dtype=torch.long)
    for start in range(0, len(queries), rows):
        q = queries[start:start + rows]
        key = torch.addmm(reference_norms, q, reference.T, alpha=-2)
        if excluded is not None:
            key[torch.arange(len(q)), excluded[start:start + rows]] = float("inf")
        values, found = key.topk(k, dim=1, largest=False)
        distances[start:start + rows] = (values + q.square().sum(dim=1, keepdim=True)).clamp_min(0)
        indices[start:start + rows] = found
    return distances, indices


def prdc(real, fake, k=5, block=1024):
    """Precision and recall (Kynkäänniemi et al. 2019), density and coverage (Naeem et al. 2020)
    from k-th-nearest-neighbour balls, "inside" strictly closer than the radius; generated rows in
    blocks against all real rows."""
    real, fake = torch.from_numpy(real), torch.from_numpy(fake)
    real_radii = nearest_squared(real, real, k, torch.arange(len(real)))[0][:, k - 1]
    fake_radii = nearest_squared(fake, fake, k, torch.arange(len(fake)))[0][:, k - 1]
    real_norms = real.square().sum(dim=1, keepdim=True)
    precise = dense = 0
    recalled = torch.zeros(len(real), dtype=torch.bool)
    nearest_fake = torch.full((len(real),), float("inf"))
    for start in range(0, len(fake), block):
        f = fake[start:start + block]
        squared = torch.addmm(real_norms + f.square().sum(dim=1), real, f.T, alpha=-2).clamp_min(0)
        inside_real = squared < real_radii[:, None]
        precise += int(inside_real.any(dim=0).sum())
        dense += int(inside_real.sum())
        recalled |= (squared < fake_radii[start:start + block]).any(dim=1)
        nearest_fake = torch.minimum(nearest_fake, squared.min(dim=1).values)
    return {"precision": precise / len(fake), "recall": float(recalled.double().mean()),
            "density": dense / (k * len(fake)), "coverage": float((nearest_fake < real_radii).double().mean())}


def draw_subset(rng, n, count):
    """`count` of n indices without replacement, ascending; all of them when count ≥ n."""
    return np.arange(n) if count >= n else np.sort(rng.choice(n, count, replace=False))


def spread(rows, rng, m, queries):
    """The median distance of `queries` of m rows drawn from `rows` to their nearest other drawn row."""
    drawn = rows[torch.from_numpy(draw_subset(rng, len(rows), m))]
    asked = torch.from_numpy(draw_subset(rng, m, queries))
    return float(np.median(nearest_squared(drawn[asked], drawn, 1, asked)[0][:, 0].sqrt().numpy()))


def memorisation(samples, train, rng, size=32, train_self_queries=10000, percentile=1.0, show_nearest=3,
                 spread_queries=500, train_queries=None):
    """The copy rate (samples nearer their nearest training image than the `percentile`-th
    percentile of training images' distances to their nearest other one), the median of each
    sample's nearest distance over those distances' median, and the samples' spread over the
    training images' (m = min of the counts drawn from each, spread_queries of them asked); rows at
    size x size, each sample's show_nearest nearest training images found. `train_queries`: the
    training images measured (default all, or a draw of train_self_queries)."""
    sample_rows = torch.from_numpy(downsample(samples, size))
    train_rows = torch.from_numpy(downsample(train, size))
    if train_queries is None:
        train_queries = draw_subset(rng, len(train_rows), train_self_queries)
    train_queries = torch.from_numpy(train_queries)
    own = nearest_squared(train_rows[train_queries], train_rows, 1, train_queries)[0][:, 0].sqrt().double().numpy()
    nearest = nearest_squared(sample_rows, train_rows, show_nearest)[0][:, 0].sqrt().double().numpy()
    threshold, median = np.percentile(own, percentile), np.median(own)
    m = min(len(sample_rows), len(train_rows))
    sample_spread, train_spread = (spread(rows, rng, m, min(m, spread_queries)) for rows in (sample_rows, train_rows))
    return {"copy_rate": float(np.mean(nearest <= threshold)), "nn_ratio_median": float(np.median(nearest / median)),
            "spread_ratio": sample_spread / train_spread if train_spread > 0 else float("nan")}


def nearest_indices(queries, reference):
    """The nearest reference row of each query (float32 numpy rows)."""
    return nearest_squared(torch.from_numpy(queries), torch.from_numpy(reference), 1)[1][:, 0].numpy()
