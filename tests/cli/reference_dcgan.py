#!/usr/bin/env python3
"""The original tool's side of tst_interop: a DCGAN written in PyTorch as docs/model.md describes
it (nn.Sequential named `main`, as the original tool's Generator and Discriminator were), trained
for a few steps so that every tensor and optimizer moment is non-trivial, and saved the way the
original tool saved checkpoints. The test imports those files with `streetgan import` and compares
`streetgan sample` with what this script computes; it also loads `streetgan export`'s state dict.

  reference_dcgan.py make --out DIR --img-size 64|128 [--nz N --ngf N --ndf N --nc N]
  reference_dcgan.py load-export --state G.pt --sidecar G.json --seed S --n N --out OUT.f32 [--train-mode]
"""
import argparse
import json
import os
import zipfile

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, layers, flatten):
        super().__init__()
        self.main = nn.Sequential(*layers)
        self.flatten = flatten

    def forward(self, x):
        x = self.main(x)
        return x.view(-1) if self.flatten else x


def generator(nz, ngf, nc, img_size):
    mult = 8 if img_size == 64 else 16
    layers = [nn.ConvTranspose2d(nz, mult * ngf, 4, 1, 0, bias=False), nn.BatchNorm2d(mult * ngf), nn.ReLU(True)]
    while mult > 1:
        layers += [nn.ConvTranspose2d(mult * ngf, mult // 2 * ngf, 4, 2, 1, bias=False),
                   nn.BatchNorm2d(mult // 2 * ngf), nn.ReLU(True)]
        mult //= 2
    layers += [nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh()]
    return Net(layers, flatten=False)


def discriminator(ndf, nc, img_size):
    last = 8 if img_size == 64 else 16
    layers = [nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True)]
    mult = 1
    while mult < last:
        layers += [nn.Conv2d(mult * ndf, 2 * mult * ndf, 4, 2, 1, bias=False),
                   nn.BatchNorm2d(2 * mult * ndf), nn.LeakyReLU(0.2, inplace=True)]
        mult *= 2
    layers += [nn.Conv2d(last * ndf, 1, 4, 1, 0, bias=False)]
    return Net(layers, flatten=True)


def init_weights(module):
    name = module.__class__.__name__
    if 'Conv' in name:
        nn.init.normal_(module.weight, 0.0, 0.02)
    elif 'BatchNorm' in name:
        nn.init.normal_(module.weight, 1.0, 0.02)
        nn.init.constant_(module.bias, 0)


def grid(images):
    """vutils.make_grid(images, padding=2, normalize=True), written out so torchvision is not needed."""
    images = (images - images.min()) / (images.max() - images.min() + 1e-5)
    n, c, h, w = images.shape
    columns = min(8, n)
    rows = (n + columns - 1) // columns
    out = torch.zeros(c, rows * (h + 2) + 2, columns * (w + 2) + 2)
    for i in range(n):
        y, x = 2 + (i // columns) * (h + 2), 2 + (i % columns) * (w + 2)
        out[:, y:y + h, x:x + w] = images[i]
    return out


def moments(optimizer, model):
    rows = []
    for p in model.parameters():
        state = optimizer.state[p]
        rows.append([float(state['step']), float(state['exp_avg'].double().sum()),
                     float(state['exp_avg_sq'].double().sum())])
    return rows


def write_f32(path, tensor):
    with open(path, 'wb') as f:
        f.write(tensor.detach().contiguous().float().numpy().tobytes())


def make(args):
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    G = generator(args.nz, args.ngf, args.nc, args.img_size)
    D = discriminator(args.ndf, args.nc, args.img_size)
    G.apply(init_weights)
    D.apply(init_weights)
    opt_g = torch.optim.AdamW(G.parameters(), lr=3e-4, betas=(0.4, 0.99), weight_decay=0.01)
    opt_d = torch.optim.AdamW(D.parameters(), lr=3e-4, betas=(0.4, 0.99), weight_decay=0.01)
    criterion = nn.BCEWithLogitsLoss()
    noise = torch.randn(16, args.nz, 1, 1)
    losses = {'_G': [], '_D': []}
    img_list = []
    for step in range(args.steps):
        real = torch.rand(4, args.nc, args.img_size, args.img_size) * 2 - 1
        z = torch.randn(4, args.nz, 1, 1)
        D.zero_grad()
        out_real = D(real)
        loss_real = criterion(out_real, torch.ones_like(out_real))
        fake = G(z)
        out_fake = D(fake.detach())
        loss_fake = criterion(out_fake, torch.zeros_like(out_fake))
        (loss_real + loss_fake).backward()
        opt_d.step()
        G.zero_grad()
        out = D(fake)
        loss_g = criterion(out, torch.ones_like(out))
        loss_g.backward()
        opt_g.step()
        losses['_G'].append(loss_g.item())
        losses['_D'].append((loss_real + loss_fake).item())
        if step == args.steps - 1:
            with torch.no_grad():
                img_list.append(grid(G(noise)))
    # A few steps from the DCGAN init leave G's output near 0 (a grey picture) and its BatchNorm
    # running statistics near their start: a comparison of such images would prove little. So the
    # last layer is scaled up and the running statistics are brought to what the layers now see,
    # and the images span the whole range in eval mode.
    with torch.no_grad():
        G.main[-2].weight.mul_(30.0)
        for _ in range(40):
            G(torch.randn(16, args.nz, 1, 1))
    epoch = 2
    full = {'epoch': epoch, 'G_state_dict': G.state_dict(), 'D_state_dict': D.state_dict(),
            'G_optim': opt_g.state_dict(), 'D_optim': opt_d.state_dict(), 'losses': losses,
            'img_list': img_list, 'noise': noise}
    torch.save(full, os.path.join(args.out, 'full.pt'))
    torch.save({'epoch': epoch, 'G_state_dict': G.state_dict()}, os.path.join(args.out, 'slim.pt'))
    prefixed = dict(full)
    prefixed['G_state_dict'] = {'module.' + k: v for k, v in G.state_dict().items()}
    prefixed['D_state_dict'] = {'module.' + k: v for k, v in D.state_dict().items()}
    torch.save(prefixed, os.path.join(args.out, 'ddp.pt'))
    # Files the importer must refuse.
    torch.save({'epoch': epoch, 'weights': G.state_dict()}, os.path.join(args.out, 'other-keys.pt'))
    torch.save(G, os.path.join(args.out, 'whole-module.pt'))
    broken = dict(G.state_dict())
    del broken['main.3.weight']
    torch.save({'epoch': epoch, 'G_state_dict': broken}, os.path.join(args.out, 'no-dcgan.pt'))
    torch.save({'epoch': epoch, 'G_state_dict': G.state_dict()}, os.path.join(args.out, 'legacy.pt'),
               _use_new_zipfile_serialization=False)
    with zipfile.ZipFile(os.path.join(args.out, 'random.zip'), 'w') as z:
        z.writestr('notes/readme.txt', 'not a checkpoint')
    # The archive of full.pt with its pickle cut in half (the records stay whole).
    with zipfile.ZipFile(os.path.join(args.out, 'full.pt')) as src, \
            zipfile.ZipFile(os.path.join(args.out, 'truncated-pickle.pt'), 'w') as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith('/data.pkl'):
                data = data[:len(data) // 2]
            dst.writestr(info.filename, data)
    G.eval()
    with torch.no_grad():
        write_f32(os.path.join(args.out, 'fixed.f32'), G(noise))
        seeded = torch.randn(8, args.nz, 1, 1, generator=torch.Generator().manual_seed(7))
        write_f32(os.path.join(args.out, 'seeded.f32'), G(seeded))
    expected = {'nz': args.nz, 'ngf': args.ngf, 'ndf': args.ndf, 'nc': args.nc, 'img_size': args.img_size,
                'epoch': epoch, 'losses': losses, 'lr': 3e-4, 'beta1': 0.4, 'beta2': 0.99,
                'weight_decay': 0.01, 'moments_g': moments(opt_g, G), 'moments_d': moments(opt_d, D),
                'samples': len(img_list), 'fixed_count': noise.shape[0]}
    with open(os.path.join(args.out, 'expected.json'), 'w') as f:
        json.dump(expected, f)


def load_export(args):
    with open(args.sidecar) as f:
        sidecar = json.load(f)
    G = generator(sidecar['nz'], sidecar['ngf'], sidecar['nc'], sidecar['img_size'])
    G.load_state_dict(torch.load(args.state, weights_only=True), strict=True)
    G.train(args.train_mode)
    with torch.no_grad():
        z = torch.randn(args.n, sidecar['nz'], 1, 1, generator=torch.Generator().manual_seed(args.seed))
        write_f32(args.out, G(z))


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest='command', required=True)
    m = commands.add_parser('make')
    m.add_argument('--out', required=True)
    m.add_argument('--img-size', type=int, default=64)
    m.add_argument('--nz', type=int, default=12)
    m.add_argument('--ngf', type=int, default=6)
    m.add_argument('--ndf', type=int, default=5)
    m.add_argument('--nc', type=int, default=3)
    m.add_argument('--steps', type=int, default=3)
    m.add_argument('--seed', type=int, default=1)
    e = commands.add_parser('load-export')
    e.add_argument('--state', required=True)
    e.add_argument('--sidecar', required=True)
    e.add_argument('--seed', type=int, default=7)
    e.add_argument('--n', type=int, default=8)
    e.add_argument('--out', required=True)
    e.add_argument('--train-mode', action='store_true', help='batch statistics in BatchNorm')
    args = parser.parse_args()
    make(args) if args.command == 'make' else load_export(args)


if __name__ == '__main__':
    main()
