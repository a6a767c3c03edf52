#!/usr/bin/env python3
"""The adversarial losses of config key `loss`, written from their papers, the judge of
core/train/gan_loss. On D's logits r (the real batch) and f (the generated batch), means over the
batch, in float64:

  bce    (Goodfellow et al. 2014; the non-saturating G loss, as DCGAN trains):
         D: -mean(log sigmoid(r)) - mean(log(1 - sigmoid(f))) = mean(softplus(-r)) + mean(softplus(f))
         G: -mean(log sigmoid(f)) = mean(softplus(-f))
  hinge  (Lim and Ye 2017; Miyato et al. 2018, SNGAN):
         D: mean(max(0, 1 - r)) + mean(max(0, 1 + f))
         G: -mean(f)
  rpgan  (Jolicoeur-Martineau 2018, relativistic pairing; Huang et al. 2024, R3GAN, eq. 2):
         D: mean(softplus(f - r))          G: mean(softplus(r - f))

Usage: gan_loss_reference.py REAL.npy FAKE.npy
Prints one JSON object: for each loss, D's loss and its gradients with respect to r and f, and
G's loss and its gradient with respect to f (torch.autograd.grad).
"""
import json
import sys

import numpy as np
import torch
import torch.nn.functional as F


def losses(name, r, f):
    if name == 'bce':
        return F.softplus(-r).mean() + F.softplus(f).mean(), F.softplus(-f).mean()
    if name == 'hinge':
        return torch.clamp(1 - r, min=0).mean() + torch.clamp(1 + f, min=0).mean(), -f.mean()
    if name == 'rpgan':
        return F.softplus(f - r).mean(), F.softplus(r - f).mean()
    raise ValueError(name)


def main():
    real = torch.from_numpy(np.load(sys.argv[1])).double()
    fake = torch.from_numpy(np.load(sys.argv[2])).double()
    out = {}
    for name in ('bce', 'hinge', 'rpgan'):
        r = real.clone().requires_grad_(True)
        f = fake.clone().requires_grad_(True)
        loss_d, loss_g = losses(name, r, f)
        grad_r, grad_f = torch.autograd.grad(loss_d, (r, f))
        f_g = fake.clone().requires_grad_(True)
        _, loss_g = losses(name, real, f_g)
        (grad_g,) = torch.autograd.grad(loss_g, (f_g,))
        out[name] = {'loss_d': loss_d.item(), 'grad_d_real': grad_r.tolist(), 'grad_d_fake': grad_f.tolist(),
                     'loss_g': loss_g.item(), 'grad_g_fake': grad_g.tolist()}
    print(json.dumps(out))


if __name__ == '__main__':
    main()
