#!/usr/bin/env python3
"""R1 and R2, the zero-centred gradient penalties (Mescheder et al. 2018, "Which Training Methods
for GANs do actually Converge?", eq. 9; R3GAN, Huang et al. 2024, eq. 4), the judge of
core/train/gan_loss's zeroCentredGradientPenalty as DcganStep applies it:

  R1 = γ1/2 · mean over the real batch of ‖∇x D(x)‖²,  R2 = γ2/2 · the same on the generated batch,
  and D's penalty term (R1 + R2) · k, k the lazy interval (StyleGAN2's lazy regularisation).

D is docs/model.md's D64 (Conv 4x4 stride 2 without bias, BatchNorm but on the first, LeakyReLU
0.2, a last Conv to one logit), in training mode (each batch normalised by its own statistics), in
float64, with the parameters the test hands over. The gradients of the penalty term with respect
to D's parameters come from torch.autograd.grad with create_graph=True for the input gradients.

Usage: gradient_penalty_reference.py DIR NDF NC GAMMA1 GAMMA2 K
DIR holds real.npy, fake.npy and one PARAM.npy per parameter name (main.0.weight, ...).
Prints one JSON object: r1, r2 and, per parameter name, the flattened gradient.
"""
import json
import os
import sys

import numpy as np
import torch
from torch import nn


def discriminator(ndf, nc):
    layers = [nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2)]
    mult = 1
    while mult < 8:
        layers += [nn.Conv2d(mult * ndf, 2 * mult * ndf, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * mult * ndf),
                   nn.LeakyReLU(0.2)]
        mult *= 2
    layers += [nn.Conv2d(8 * ndf, 1, 4, 1, 0, bias=False)]
    net = nn.Module()
    net.main = nn.Sequential(*layers)
    return net


def penalty(net, images, gamma):
    x = images.clone().requires_grad_(True)
    logits = net.main(x).view(-1)
    (grad,) = torch.autograd.grad(logits.sum(), x, create_graph=True)
    return gamma / 2 * grad.pow(2).sum(dim=(1, 2, 3)).mean()


def main():
    folder, ndf, nc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    gamma1, gamma2, k = float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
    net = discriminator(ndf, nc).double().train()
    with torch.no_grad():
        for name, p in net.named_parameters():
            p.copy_(torch.from_numpy(np.load(os.path.join(folder, name + '.npy'))))
    real = torch.from_numpy(np.load(os.path.join(folder, 'real.npy'))).double()
    fake = torch.from_numpy(np.load(os.path.join(folder, 'fake.npy'))).double()
    r1 = penalty(net, real, gamma1)
    r2 = penalty(net, fake, gamma2)
    names = [name for name, _ in net.named_parameters()]
    grads = torch.autograd.grad((r1 + r2) * k, [p for _, p in net.named_parameters()])
    print(json.dumps({'r1': r1.item(), 'r2': r2.item(),
                      'grads': {name: g.reshape(-1).tolist() for name, g in zip(names, grads)}}))


if __name__ == '__main__':
    main()
