"""The image metrics of core/eval (the sliced Wasserstein distance, the MS-SSIM diversity, NDB and
JSD) as a competent researcher's tuned code computes them today: part of the reference that
bench/bench_metrics.py times beside `streetgan bench metrics`; vectorised_feature_metrics_reference.py
holds the rest (the pixel features, FID, KID, PRDC, memorisation and the nearest-neighbour search).

Each function does the work of ours under the default QualitySuiteOptions (the counts below are
core/eval/*.h's defaults), in float32 and vectorised, as the metrics' own reference code does it:
  - swd: Karras et al.'s metrics/sliced_wasserstein.py (numpy float32): the Laplacian pyramid by
    scipy.ndimage (the binomial filter separable here, not one 5x5 kernel), 128 patches of 7x7 per
    image and level gathered by one fancy index, finalize_descriptors, 4 repeats of 128 random
    directions, each direction's projections one contiguous row sorted by numpy (Karras sorts
    along axis 0: 4.6x slower here; torch.sort was 10x slower);
  - msssim: tf.image.ssim_multiscale's formula over all 1,000 pairs at once, the 11-tap Gaussian
    separable by scipy.ndimage (numpy float32; torch's depthwise conv2d was no faster on 1 thread);
  - ndb: k-means++ and 100 Lloyd iterations (stopping when no assignment changes), the assignment
    by one matrix product (‖c‖² − 2x·c), the centres' sums by a sparse one-hot product (numpy).
Images are averaged down to rows by torch's avg_pool2d (about 2.4x numpy's reshape-mean):
`downsample`, which vectorised_feature_metrics_reference.py uses too.

Random parts (patches, directions, pairs, k-means++ draws) come from the numpy Generator passed
in, not from ours, so the figures that depend on them agree with ours only within the noise of the
draws. The pieces take those parts explicitly (patch_descriptors' positions, sliced_distance's
directions, ms_ssim's pairs, ndb_jsd's initial centres), so that a check can give them an oracle's
or ours'. Inputs are float32 numpy arrays (images (N, 3, S, S) in [-1, 1]).
Import this module only after bench_record.set_threads(): numpy, scipy and torch read their thread
counts when they load. Reference only: numpy, scipy and torch are never runtime dependencies of
StreetGAN.
"""
import numpy as np
import scipy.ndimage
import scipy.sparse
import scipy.special
import scipy.stats
import torch
import torch.nn.functional as F

BINOMIAL = np.array([1, 4, 6, 4, 1], np.float32) / 16
MS_SSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)
MS_SSIM_C1, MS_SSIM_C2 = 0.01 ** 2, 0.03 ** 2  # (K1·L)², (K2·L)², L = 1


def downsample(images, size):
    """(N, C, H, W) images, H and W multiples of `size`, as (N, C·size²) rows of block means."""
    n, _, h, w = images.shape
    assert h % size == 0 and w % size == 0, "the image sides must be multiples of the size"
    return F.avg_pool2d(torch.from_numpy(images), (h // size, w // size)).reshape(n, -1).numpy()


# Sliced Wasserstein distance (Karras et al. 2018, appendix D).

def resolutions(size, min_resolution):
    """The pyramid's levels: size, size/2, ... while at least min_resolution."""
    levels = []
    while size >= min_resolution:
        levels.append(size)
        size //= 2
    return levels


def pyr_down(g):
    """cv2.pyrDown: the binomial filter, mirror borders (d c b | a b c d | c b a), even samples."""
    across = scipy.ndimage.correlate1d(g, BINOMIAL, axis=3, mode="mirror")[..., ::2]
    return scipy.ndimage.correlate1d(across, BINOMIAL, axis=2, mode="mirror")[:, :, ::2]


def pyr_up(g):
    """cv2.pyrUp: zeros between the samples, then the binomial filter with gain 2 along each axis."""
    n, c, h, w = g.shape
    up = np.zeros((n, c, 2 * h, 2 * w), np.float32)
    up[:, :, ::2, ::2] = g
    across = scipy.ndimage.correlate1d(up, 2 * BINOMIAL, axis=3, mode="mirror")
    return scipy.ndimage.correlate1d(across, 2 * BINOMIAL, axis=2, mode="mirror")


def laplacian_pyramid(images, levels):
    """Finest first: G_i − pyrUp(G_i+1), the last level the Gaussian level itself."""
    gaussian = [images]
    for _ in range(1, levels):
        gaussian.append(pyr_down(gaussian[-1]))
    return [g - pyr_up(coarser) for g, coarser in zip(gaussian, gaussian[1:])] + [gaussian[-1]]


def draw_positions(rng, images, size, per_image, patch):
    """(images·per_image, 3) rows (image, centre row, centre column), centres where a patch fits."""
    half = patch // 2
    centres = rng.integers(half, size - half, (images * per_image, 2))
    return np.column_stack([np.repeat(np.arange(images), per_image), centres])


def patch_descriptors(level, positions, patch):
    """(M, 3·p²): the p x p patches of `level` at `positions`, in (channel, row, column) order."""
    half = patch // 2
    windows = np.lib.stride_tricks.sliding_window_view(level, (patch, patch), axis=(2, 3))
    rows = windows[positions[:, 0], :, positions[:, 1] - half, positions[:, 2] - half]
    return rows.reshape(len(positions), -1)


def normalise_descriptors(desc):
    """Karras' finalize_descriptors, in place: per channel, less the mean and over the std of all
    patches and pixels (sums in float64); a zero std is left at 1."""
    channels = desc.reshape(len(desc), 3, -1)
    channels -= channels.mean(axis=(0, 2), keepdims=True, dtype=np.float64).astype(np.float32)
    std = np.sqrt(np.square(channels).mean(axis=(0, 2), keepdims=True, dtype=np.float64))
    channels /= np.where(std > 0, std, 1).astype(np.float32)
    return desc


def unit_directions(rng, dim, count):
    """(dim, count) float32 random unit columns, drawn in float64 as Karras does."""
    d = rng.standard_normal((dim, count))
    return (d / np.sqrt(np.square(d).sum(axis=0, keepdims=True))).astype(np.float32)


def sliced_distance(a, b, directions):
    """The mean over directions and ranks of |sorted a·d − sorted b·d|, one row per direction."""
    projected_a, projected_b = directions.T @ a.T, directions.T @ b.T
    projected_a.sort(axis=1)
    projected_b.sort(axis=1)
    projected_a -= projected_b
    return float(np.abs(projected_a, out=projected_a).mean(dtype=np.float64))


def sliced_wasserstein(a, b, rng, patch=7, patches_per_image=128, directions=512, per_repeat=128,
                       min_resolution=16):
    """SWD x 10³ of each level ("swd_e3_64", ...) and their mean ("swd_e3"); the larger set is
    subsampled to the smaller. Each set has its own patch positions, as Karras' code."""
    assert directions % per_repeat == 0, "the directions must be whole repeats"
    n = min(len(a), len(b))
    a, b = (x[np.sort(rng.choice(len(x), n, replace=False))] if len(x) > n else x for x in (a, b))
    levels = resolutions(a.shape[2], min_resolution)
    pyramids = [laplacian_pyramid(x, len(levels)) for x in (a, b)]
    figures = {}
    for index, size in enumerate(levels):
        desc = []
        for pyramid in pyramids:
            positions = draw_positions(rng, n, size, patches_per_image, patch)
            desc.append(normalise_descriptors(patch_descriptors(pyramid[index], positions, patch)))
            pyramid[index] = None  # its patches are taken: the level's memory is free
        repeats = [sliced_distance(*desc, unit_directions(rng, desc[0].shape[1], per_repeat))
                   for _ in range(directions // per_repeat)]
        figures[f"swd_e3_{size}"] = 1e3 * float(np.mean(repeats))
    figures["swd_e3"] = float(np.mean(list(figures.values())))
    return figures


# MS-SSIM (Wang, Simoncelli and Bovik 2003, as tf.image.ssim_multiscale) and its diversity.

def gaussian_taps(taps=11, sigma=1.5):
    x = np.arange(taps) - (taps - 1) / 2
    g = np.exp(-x * x / (2 * sigma * sigma))
    return (g / g.sum()).astype(np.float32)


GAUSSIAN = gaussian_taps()


def scales_for(size):
    """The most scales (at most 5) whose smallest is still at least 11 px (3 at 64 px)."""
    scales = 1
    while scales < 5 and (size + 1) // 2 >= 11:
        size = (size + 1) // 2
        scales += 1
    return scales


def ms_ssim_weights(scales):
    """The standard five weights as they are (sum 1.0001, as tf); fewer: the first renormalised."""
    weights = np.array(MS_SSIM_WEIGHTS[:scales])
    return weights if scales == 5 else weights / weights.sum()


def filter_valid(maps):
    """The 11-tap Gaussian along the last two axes, separable, no padding (valid)."""
    r = len(GAUSSIAN) // 2
    across = scipy.ndimage.correlate1d(maps, GAUSSIAN, axis=-1, mode="constant")[..., r:-r]
    return scipy.ndimage.correlate1d(across, GAUSSIAN, axis=-2, mode="constant")[..., r:-r, :]


def halve(x):
    """2x2 averages; an odd side first repeats its last row or column (tf's SYMMETRIC pad by 1)."""
    pad_h, pad_w = x.shape[-2] % 2, x.shape[-1] % 2
    if pad_h or pad_w:
        x = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(0, pad_h), (0, pad_w)], mode="edge")
    return 0.25 * (x[..., ::2, ::2] + x[..., ::2, 1::2] + x[..., 1::2, ::2] + x[..., 1::2, 1::2])


def ms_ssim(a, b, scales=None):
    """MS-SSIM of each pair (a[i], b[i]) of images (N, C, H, W) in [−1, 1], mapped to [0, 1] with
    data range 1: per channel the weighted product over scales of the mean cs (at the last scale
    luminance·cs), negative terms as 0, then the mean over channels. (N,) float64."""
    scales = scales or scales_for(min(a.shape[2:]))
    x, y = (a + 1) * 0.5, (b + 1) * 0.5
    product = np.ones(a.shape[:2])
    for scale, weight in enumerate(ms_ssim_weights(scales)):
        if scale > 0:
            x, y = halve(x), halve(y)
        mu_x, mu_y, xy, squares = filter_valid(np.stack([x, y, x * y, x * x + y * y]))
        num0, den0 = 2 * mu_x * mu_y, mu_x * mu_x + mu_y * mu_y
        terms = (2 * xy - num0 + MS_SSIM_C2) / (squares - den0 + MS_SSIM_C2)
        if scale == scales - 1:
            terms *= (num0 + MS_SSIM_C1) / (den0 + MS_SSIM_C1)
        product *= np.maximum(terms.mean(axis=(2, 3), dtype=np.float64), 0) ** weight
    return product.mean(axis=1)


def draw_pairs(rng, images, pairs):
    """(pairs, 2) rows (i, j), i ≠ j, uniform over the ordered pairs of distinct images."""
    first = rng.integers(0, images, pairs)
    second = rng.integers(0, images - 1, pairs)
    return np.column_stack([first, second + (second >= first)])


def ms_ssim_diversity(images, rng, pairs=1000):
    """The mean MS-SSIM of random pairs of distinct images (Odena et al. 2017), all pairs at once."""
    chosen = draw_pairs(rng, len(images), pairs)
    return float(ms_ssim(images[chosen[:, 0]], images[chosen[:, 1]]).mean())


def diversity(samples, train, rng, pairs=1000):
    """The MS-SSIM diversity of the samples and, the level to compare it with, of the training images."""
    return {"msssim_samples": ms_ssim_diversity(samples, rng, pairs),
            "msssim_train": ms_ssim_diversity(train, rng, pairs)}


# NDB and JSD (Richardson and Weiss 2018).

def nearest_centre(rows, centres):
    """The nearest centre of each row by ‖c‖² − 2x·c (the first on ties)."""
    return np.argmin(np.einsum("ij,ij->i", centres, centres) - 2 * rows @ centres.T, axis=1)


def kmeans_pp(rows, k, rng):
    """k-means++: a uniform first centre, then each a row drawn with probability proportional to
    its squared distance to the nearest centre so far (uniform once every row is a centre)."""
    n = len(rows)
    norms = np.einsum("ij,ij->i", rows, rows)
    chosen = [int(rng.integers(n))]
    closest = np.full(n, np.inf, np.float32)
    for _ in range(1, k):
        last = chosen[-1]
        closest = np.minimum(closest, np.maximum(norms - 2 * rows @ rows[last] + norms[last], 0))
        cumulative = np.cumsum(closest, dtype=np.float64)
        if cumulative[-1] > 0:
            chosen.append(min(int(np.searchsorted(cumulative, rng.random() * cumulative[-1], "right")), n - 1))
        else:
            chosen.append(int(rng.integers(n)))
    return rows[chosen].copy()


def lloyd(rows, centres, iterations):
    """At most `iterations` rounds of assigning each row to its nearest centre and moving each
    centre to its rows' mean (an empty cluster keeps its centre), stopping when no assignment
    changes."""
    n, k = len(rows), len(centres)
    previous = None
    for _ in range(iterations):
        labels = nearest_centre(rows, centres)
        if previous is not None and np.array_equal(labels, previous):
            break
        one_hot = scipy.sparse.csr_matrix((np.ones(n, np.float32), (labels, np.arange(n))), shape=(k, n))
        counts = np.bincount(labels, minlength=k)[:, None]
        centres = np.where(counts > 0, (one_hot @ rows) / np.maximum(counts, 1), centres).astype(np.float32)
        previous = labels
    return centres


def ndb_jsd(samples, train, rng, bins=100, size=16, iterations=100, alpha=0.05, initial=None):
    """NDB (bins whose shares differ by a two-proportion z-test at `alpha`), its fraction and the
    JSD of the bin histograms (natural log), k-means on the training rows at size x size; `initial`
    centres instead of k-means++'s when given."""
    train_rows, sample_rows = downsample(train, size), downsample(samples, size)
    if initial is None:
        initial = kmeans_pp(train_rows, bins, rng)
    centres = lloyd(train_rows, initial, iterations)
    train_counts = np.bincount(nearest_centre(train_rows, centres), minlength=bins)
    sample_counts = np.bincount(nearest_centre(sample_rows, centres), minlength=bins)
    n_train, n_samples = len(train_rows), len(sample_rows)
    p, q = train_counts / n_train, sample_counts / n_samples
    pooled = (train_counts + sample_counts) / (n_train + n_samples)
    se = np.sqrt(pooled * (1 - pooled) * (1 / n_train + 1 / n_samples))
    z = np.divide(p - q, se, out=np.zeros(bins), where=se > 0)
    ndb = int((np.abs(z) > scipy.stats.norm.isf(alpha / 2)).sum())
    m = (p + q) / 2
    jsd = 0.5 * scipy.special.rel_entr(p, m).sum() + 0.5 * scipy.special.rel_entr(q, m).sum()
    return {"ndb": ndb, "ndb_fraction": ndb / bins, "jsd": float(jsd)}
