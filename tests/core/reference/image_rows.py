"""Images (N, C, H, W) as rows at size × size: the mean of each output pixel's area, written from
the definition (block means when the sides divide; otherwise each pixel's covering area, as
adaptive average pooling takes it). Shared by the references that compare images as rows."""
import math

import numpy as np


def downsample(images, size):
    n, c, h, w = images.shape
    if h % size == 0 and w % size == 0:
        pooled = images.reshape(n, c, size, h // size, size, w // size).mean(axis=(3, 5))
    else:
        pooled = np.empty((n, c, size, size))
        for i in range(size):
            r0, r1 = (i * h) // size, math.ceil((i + 1) * h / size)
            for j in range(size):
                c0, c1 = (j * w) // size, math.ceil((j + 1) * w / size)
                pooled[:, :, i, j] = images[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
    return pooled.reshape(n, -1)
