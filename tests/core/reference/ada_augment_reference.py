#!/usr/bin/env python3
"""ADA's augmentation pipeline (Karras et al. 2020, StyleGAN2-ADA's AugmentPipe), the judge of
core/train/ada_augment: the operations named, each applied with probability P, with the random
draws the test hands over (a column each, in the order of AdaDraws) instead of drawing its own.
The geometric operations compose into one inverse matrix in centred pixel coordinates and run
through torch's affine_grid and grid_sample (bilinear, reflection padding, align_corners False);
the colour operations compose into one 4x4 matrix. All in float64. Returns Y and the gradient
of sum(Y * G) with respect to X.

Usage: ada_augment_reference.py DIR OPS P
DIR holds x.npy, g.npy, uniform.npy (rows x 21) and normal.npy (rows x 7); OPS is a comma-separated
list of xflip, rotate90, xint, scale, rotate, aniso, xfrac, brightness, contrast, lumaflip, hue,
saturation. Prints one JSON object.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

U = {name: i for i, name in enumerate(
    'xflip xflip_gate rotate90 rotate90_gate xint_x xint_y xint_gate scale_gate prerotate prerotate_gate aniso_gate '
    'postrotate postrotate_gate xfrac_gate brightness_gate contrast_gate lumaflip lumaflip_gate hue hue_gate '
    'saturation_gate'.split())}
N = {name: i for i, name in enumerate('scale aniso xfrac_x xfrac_y brightness contrast saturation'.split())}


def batch_matrix(rows):
    return torch.stack([torch.stack([torch.as_tensor(v, dtype=torch.float64).expand(rows[0][0].shape)
                                     if not torch.is_tensor(v) else v for v in row], -1) for row in rows], -2)


def translate2d(tx, ty):
    o, z = torch.ones_like(tx), torch.zeros_like(tx)
    return batch_matrix([[o, z, tx], [z, o, ty], [z, z, o]])


def scale2d(sx, sy):
    o, z = torch.ones_like(sx), torch.zeros_like(sx)
    return batch_matrix([[sx, z, z], [z, sy, z], [z, z, o]])


def rotate2d(theta):
    o, z = torch.ones_like(theta), torch.zeros_like(theta)
    return batch_matrix([[theta.cos(), -theta.sin(), z], [theta.sin(), theta.cos(), z], [z, z, o]])


def geometric(x, ops, u, n, p):
    b, _, h, w = x.shape
    zero, one = torch.zeros(b, dtype=torch.float64), torch.ones(b, dtype=torch.float64)
    g_inv = torch.eye(3, dtype=torch.float64).repeat(b, 1, 1)
    gate = lambda column, prob: u[:, U[column]] < prob
    if 'xflip' in ops:
        i = torch.where(gate('xflip_gate', p), torch.floor(u[:, U['xflip']] * 2), zero)
        g_inv = g_inv @ scale2d(1 / (1 - 2 * i), one)
    if 'rotate90' in ops:
        i = torch.where(gate('rotate90_gate', p), torch.floor(u[:, U['rotate90']] * 4), zero)
        g_inv = g_inv @ rotate2d(math.pi / 2 * i)
    if 'xint' in ops:
        on = gate('xint_gate', p)
        tx = torch.where(on, (u[:, U['xint_x']] * 2 - 1) * 0.125, zero)
        ty = torch.where(on, (u[:, U['xint_y']] * 2 - 1) * 0.125, zero)
        g_inv = g_inv @ translate2d(-torch.round(tx * w), -torch.round(ty * h))
    if 'scale' in ops:
        s = torch.where(gate('scale_gate', p), torch.exp2(n[:, N['scale']] * 0.2), one)
        g_inv = g_inv @ scale2d(1 / s, 1 / s)
    p_rot = 1 - math.sqrt(min(max(1 - p, 0.0), 1.0))
    if 'rotate' in ops:
        theta = torch.where(gate('prerotate_gate', p_rot), (u[:, U['prerotate']] * 2 - 1) * math.pi, zero)
        g_inv = g_inv @ rotate2d(theta)
    if 'aniso' in ops:
        s = torch.where(gate('aniso_gate', p), torch.exp2(n[:, N['aniso']] * 0.2), one)
        g_inv = g_inv @ scale2d(1 / s, s)
    if 'rotate' in ops:
        theta = torch.where(gate('postrotate_gate', p_rot), (u[:, U['postrotate']] * 2 - 1) * math.pi, zero)
        g_inv = g_inv @ rotate2d(theta)
    if 'xfrac' in ops:
        on = gate('xfrac_gate', p)
        tx = torch.where(on, n[:, N['xfrac_x']] * 0.125, zero)
        ty = torch.where(on, n[:, N['xfrac_y']] * 0.125, zero)
        g_inv = g_inv @ translate2d(-tx * w, -ty * h)
    # Centred pixels to grid_sample's coordinates: x_normalised = x_centred * 2 / w.
    to_norm = scale2d(torch.full((b,), 2.0 / w, dtype=torch.float64), torch.full((b,), 2.0 / h, dtype=torch.float64))
    from_norm = scale2d(torch.full((b,), w / 2.0, dtype=torch.float64), torch.full((b,), h / 2.0, dtype=torch.float64))
    theta = (to_norm @ g_inv @ from_norm)[:, :2, :]
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode='bilinear', padding_mode='reflection', align_corners=False)


def color(x, ops, u, n, p):
    b, c, h, w = x.shape
    i4 = torch.eye(4, dtype=torch.float64)
    m = i4.repeat(b, 1, 1)
    gate = lambda column: (u[:, U[column]] < p)
    if 'brightness' in ops:
        shift = torch.where(gate('brightness_gate'), n[:, N['brightness']] * 0.2, torch.zeros(b, dtype=torch.float64))
        t = i4.repeat(b, 1, 1)
        t[:, :3, 3] = shift[:, None]
        m = t @ m
    if 'contrast' in ops:
        s = torch.where(gate('contrast_gate'), torch.exp2(n[:, N['contrast']] * 0.5), torch.ones(b, dtype=torch.float64))
        m = torch.diag_embed(torch.stack([s, s, s, torch.ones_like(s)], 1)) @ m
    v = torch.tensor([1, 1, 1, 0], dtype=torch.float64) / math.sqrt(3)
    vv = torch.outer(v, v)
    if 'lumaflip' in ops:
        i = torch.where(gate('lumaflip_gate'), torch.floor(u[:, U['lumaflip']] * 2), torch.zeros(b, dtype=torch.float64))
        m = (i4 - 2 * vv * i[:, None, None]) @ m
    if 'hue' in ops and c > 1:
        theta = torch.where(gate('hue_gate'), (u[:, U['hue']] * 2 - 1) * math.pi, torch.zeros(b, dtype=torch.float64))
        vx = vy = vz = 1 / math.sqrt(3)
        s, co = theta.sin(), theta.cos()
        cc = 1 - co
        o, z = torch.ones(b, dtype=torch.float64), torch.zeros(b, dtype=torch.float64)
        rot = batch_matrix([[vx * vx * cc + co, vx * vy * cc - vz * s, vx * vz * cc + vy * s, z],
                            [vy * vx * cc + vz * s, vy * vy * cc + co, vy * vz * cc - vx * s, z],
                            [vz * vx * cc - vy * s, vz * vy * cc + vx * s, vz * vz * cc + co, z],
                            [z, z, z, o]])
        m = rot @ m
    if 'saturation' in ops and c > 1:
        s = torch.where(gate('saturation_gate'), torch.exp2(n[:, N['saturation']] * 1.0), torch.ones(b, dtype=torch.float64))
        m = (vv + (i4 - vv) * s[:, None, None]) @ m
    flat = x.reshape(b, c, h * w)
    if c == 3:
        out = m[:, :3, :3] @ flat + m[:, :3, 3:]
    else:
        row = m[:, :3, :].mean(dim=1, keepdim=True)
        out = flat * row[:, :, :3].sum(dim=2, keepdim=True) + row[:, :, 3:]
    return out.reshape(b, c, h, w)


def main():
    folder, ops, p = sys.argv[1], sys.argv[2].split(','), float(sys.argv[3])
    load = lambda name: torch.from_numpy(np.load(os.path.join(folder, name + '.npy'))).double()
    x = load('x').requires_grad_(True)
    g, u, n = load('g'), load('uniform'), load('normal')
    y = x
    if set(ops) & {'xflip', 'rotate90', 'xint', 'scale', 'rotate', 'aniso', 'xfrac'}:
        y = geometric(y, ops, u, n, p)
    if set(ops) & {'brightness', 'contrast', 'lumaflip', 'hue', 'saturation'}:
        y = color(y, ops, u, n, p)
    (y * g).sum().backward()
    print(json.dumps({'y': y.detach().reshape(-1).tolist(), 'grad_x': x.grad.reshape(-1).tolist()}))


if __name__ == '__main__':
    main()
