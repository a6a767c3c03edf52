#!/usr/bin/env python3
"""Spectral normalisation as torch.nn.utils.spectral_norm computes it (Miyato et al. 2018), the
judge of core/model/spectral_norm: a Conv2d (no bias) with the weight W and the power-iteration
vectors u and v the test hands over, wrapped by torch.nn.utils.spectral_norm (one power iteration,
eps 1e-12), run once in training mode on X in float64. Its output Y, the updated u and v,
sigma = u . (W_mat v) with them, and the gradients of sum(Y * G) with respect to W and X.

Usage: spectral_norm_reference.py DIR STRIDE PADDING
DIR holds weight.npy, u.npy, v.npy, x.npy and g.npy. Prints one JSON object.
"""
import json
import os
import sys

import numpy as np
import torch
from torch import nn


def load(folder, name):
    return torch.from_numpy(np.load(os.path.join(folder, name + '.npy'))).double()


def main():
    folder, stride, padding = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    weight, u, v, x, g = (load(folder, n) for n in ('weight', 'u', 'v', 'x', 'g'))
    conv = nn.Conv2d(weight.shape[1], weight.shape[0], weight.shape[2], stride, padding, bias=False).double()
    conv = nn.utils.spectral_norm(conv, n_power_iterations=1, eps=1e-12)
    with torch.no_grad():
        conv.weight_orig.copy_(weight)
        conv.weight_u.copy_(u)
        conv.weight_v.copy_(v)
    conv.train()
    x = x.clone().requires_grad_(True)
    y = conv(x)
    (y * g).sum().backward()
    w_mat = conv.weight_orig.detach().reshape(weight.shape[0], -1)
    sigma = torch.dot(conv.weight_u, torch.mv(w_mat, conv.weight_v))
    print(json.dumps({'y': y.detach().reshape(-1).tolist(), 'u': conv.weight_u.tolist(), 'v': conv.weight_v.tolist(),
                      'sigma': sigma.item(), 'grad_weight': conv.weight_orig.grad.reshape(-1).tolist(),
                      'grad_x': x.grad.reshape(-1).tolist()}))


if __name__ == '__main__':
    main()
