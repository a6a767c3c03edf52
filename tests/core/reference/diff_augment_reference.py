#!/usr/bin/env python3
"""DiffAugment (Zhao et al. 2020) as the authors' PyTorch code (DiffAugment_pytorch.py) defines
it, the judge of core/train/diff_augment: the policies in the order given, each with the random
draws the test hands over instead of drawing its own. color: brightness x + (b - 0.5), saturation
(x - mean_c) * 2s + mean_c, contrast (x - mean_chw) * (c + 0.5) + mean_chw; translation: the
authors' meshgrid gather from the image padded by one zero pixel, with shifts tx, ty; cutout: the
authors' mask of a square of int(size * 0.5 + 0.5) pixels around (ox, oy), scattered by index.
Runs in float64 and returns Y and the gradient of sum(Y * G) with respect to X.

Usage: diff_augment_reference.py DIR POLICY
DIR holds x.npy, g.npy and the draws (brightness.npy, saturation.npy, contrast.npy,
translation_x.npy, translation_y.npy, cutout_x.npy, cutout_y.npy) the policies use.
Prints one JSON object.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F


def load(folder, name):
    return torch.from_numpy(np.load(os.path.join(folder, name + '.npy')))


def color(x, d):
    x = x + (d['brightness'].double() - 0.5)
    x_mean = x.mean(dim=1, keepdim=True)
    x = (x - x_mean) * (d['saturation'].double() * 2) + x_mean
    x_mean = x.mean(dim=[1, 2, 3], keepdim=True)
    return (x - x_mean) * (d['contrast'].double() + 0.5) + x_mean


def translation(x, d):
    tx, ty = d['translation_x'].long(), d['translation_y'].long()
    grid_batch, grid_x, grid_y = torch.meshgrid(torch.arange(x.size(0)), torch.arange(x.size(2)),
                                                torch.arange(x.size(3)), indexing='ij')
    grid_x = torch.clamp(grid_x + tx + 1, 0, x.size(2) + 1)
    grid_y = torch.clamp(grid_y + ty + 1, 0, x.size(3) + 1)
    x_pad = F.pad(x, [1, 1, 1, 1, 0, 0, 0, 0])
    return x_pad.permute(0, 2, 3, 1).contiguous()[grid_batch, grid_x, grid_y].permute(0, 3, 1, 2)


def cutout(x, d):
    size = int(x.size(2) * 0.5 + 0.5), int(x.size(3) * 0.5 + 0.5)
    ox, oy = d['cutout_x'].long(), d['cutout_y'].long()
    grid_batch, grid_x, grid_y = torch.meshgrid(torch.arange(x.size(0)), torch.arange(size[0]),
                                                torch.arange(size[1]), indexing='ij')
    grid_x = torch.clamp(grid_x + ox - size[0] // 2, min=0, max=x.size(2) - 1)
    grid_y = torch.clamp(grid_y + oy - size[1] // 2, min=0, max=x.size(3) - 1)
    mask = torch.ones(x.size(0), x.size(2), x.size(3), dtype=x.dtype)
    mask[grid_batch, grid_x, grid_y] = 0
    return x * mask.unsqueeze(1)


def main():
    folder, policy = sys.argv[1], sys.argv[2]
    draws = {}
    for name in ('brightness', 'saturation', 'contrast', 'translation_x', 'translation_y', 'cutout_x', 'cutout_y'):
        if os.path.exists(os.path.join(folder, name + '.npy')):
            draws[name] = load(folder, name)
    x = load(folder, 'x').double().requires_grad_(True)
    g = load(folder, 'g').double()
    y = x
    for name in policy.split(','):
        y = {'color': color, 'translation': translation, 'cutout': cutout}[name](y, draws)
    (y * g).sum().backward()
    print(json.dumps({'y': y.detach().reshape(-1).tolist(), 'grad_x': x.grad.reshape(-1).tolist()}))


if __name__ == '__main__':
    main()
