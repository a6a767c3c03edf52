"""docs/model.md's DCGAN as PyTorch layers, for the bench scripts' references (python3-torch;
never a runtime dependency of StreetGAN): G64/G128 and D64/D128, every Conv 4x4 without bias."""
import torch.nn as nn


def generator_layers(nz, ngf, nc, img_size):
    """G: the latent (B, nz, 1, 1) to an image in [-1, 1]."""
    top = 8 if img_size == 64 else 16
    layers = [nn.ConvTranspose2d(nz, top * ngf, 4, 1, 0, bias=False), nn.BatchNorm2d(top * ngf), nn.ReLU(True)]
    mult = top
    while mult > 1:
        layers += [nn.ConvTranspose2d(mult * ngf, mult // 2 * ngf, 4, 2, 1, bias=False),
                   nn.BatchNorm2d(mult // 2 * ngf), nn.ReLU(True)]
        mult //= 2
    layers += [nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh()]
    return layers


def discriminator_layers(ndf, nc, img_size):
    """D: an image to one logit (B, 1, 1, 1)."""
    top = 8 if img_size == 64 else 16
    layers = [nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True)]
    mult = 1
    while mult < top:
        layers += [nn.Conv2d(mult * ndf, 2 * mult * ndf, 4, 2, 1, bias=False),
                   nn.BatchNorm2d(2 * mult * ndf), nn.LeakyReLU(0.2, inplace=True)]
        mult *= 2
    layers += [nn.Conv2d(top * ndf, 1, 4, 1, 0, bias=False)]
    return layers
