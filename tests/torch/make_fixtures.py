"""Writes the LibTorch front end's test fixtures into tests/torch/data (deterministic; ~60 KB):

- images/<class>/<i>.png: 3 classes x 6 small RGB images of assorted sizes (one grayscale, one
  with alpha), an ImageFolder layout, written with zlib + struct (no imaging library needed);
- model.pt: a tiny convolutional classifier, trained a little on those images, as TorchScript;
- inputs.npy: the images preprocessed as `mano infer --resize 14 --crop 12 --mean 0.5,0.4,0.3
  --std 0.25,0.2,0.3` must do it (PyTorch's antialiased bilinear resize, torchvision's center
  crop and normalization), float32 N x 3 x 12 x 12 in folder order; labels.npy: their classes;
- logits.npy: the model's logits on inputs.npy, computed by PyTorch.

Run: /usr/bin/python3 tests/torch/make_fixtures.py   (Debian's python3-torch and python3-numpy)"""
import pathlib
import shutil
import struct
import zlib

import numpy as np
import torch
import torch.nn.functional as F

DATA = pathlib.Path(__file__).resolve().parent / "data"
CLASSES = ["a_red", "b_green", "c_blue"]
SIZES = [(16, 16), (18, 22), (20, 16), (16, 24), (17, 17), (24, 20)]  # (height, width)
RESIZE, CROP = 14, 12
MEAN, STD = [0.5, 0.4, 0.3], [0.25, 0.2, 0.3]


def png_bytes(pixels):
    """8-bit PNG of an H x W (gray), H x W x 3 (RGB) or H x W x 4 (RGBA) uint8 array."""
    h, w = pixels.shape[:2]
    color = {2: 0, 3: 2, 4: 6}[pixels.ndim if pixels.ndim == 2 else pixels.shape[2]]
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(h))

    def chunk(kind, payload):
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def make_image(rng, label, size):
    """A noisy image whose dominant channel is its class, with a random bright square."""
    h, w = size
    rgb = rng.uniform(0.15, 0.55, (h, w, 3))
    rgb[:, :, label] += rng.uniform(0.15, 0.4)
    y, x = rng.integers(0, h - 5), rng.integers(0, w - 5)
    rgb[y:y + 5, x:x + 5, :] += 0.3
    return np.clip(np.round(rgb * 255), 0, 255).astype(np.uint8)


def as_stored(rgb, kind):
    """What goes into the file, and the RGB stb decodes from it (gray replicated, alpha dropped)."""
    if kind == "gray":
        gray = rgb.mean(axis=2).round().astype(np.uint8)
        return gray, np.repeat(gray[:, :, None], 3, axis=2)
    if kind == "rgba":
        alpha = np.full(rgb.shape[:2] + (1,), 128, np.uint8)
        return np.concatenate([rgb, alpha], axis=2), rgb
    return rgb, rgb


def preprocess(rgb):
    """torchvision's Resize(RESIZE) (antialiased bilinear on tensors), CenterCrop, Normalize."""
    x = torch.from_numpy(rgb.astype(np.float32) / np.float32(255)).permute(2, 0, 1)[None]
    h, w = rgb.shape[:2]
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = RESIZE, int(RESIZE * long / short)
    new_h, new_w = (new_long, new_short) if w <= h else (new_short, new_long)
    x = F.interpolate(x, size=(new_h, new_w), mode="bilinear", antialias=True, align_corners=False)
    top, left = int(round((new_h - CROP) / 2.0)), int(round((new_w - CROP) / 2.0))
    x = x[:, :, top:top + CROP, left:left + CROP]
    return ((x - torch.tensor(MEAN)[:, None, None]) / torch.tensor(STD)[:, None, None])[0]


class tiny_net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.fc = torch.nn.Linear(6, 3)

    def forward(self, x):
        x = F.relu(self.conv(x))
        return self.fc(x.mean(dim=(2, 3)))


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rng = np.random.default_rng(7)
    shutil.rmtree(DATA, ignore_errors=True)
    inputs, labels = [], []
    for label, name in enumerate(CLASSES):
        folder = DATA / "images" / name
        folder.mkdir(parents=True)
        for i, size in enumerate(SIZES):
            kind = "gray" if (label, i) == (1, 2) else "rgba" if (label, i) == (2, 4) else "rgb"
            stored, decoded = as_stored(make_image(rng, label, size), kind)
            (folder / f"{i}.png").write_bytes(png_bytes(stored))
            inputs.append(preprocess(decoded))
            labels.append(label)
    x = torch.stack(inputs)
    y = torch.tensor(labels)
    net = tiny_net()
    opt = torch.optim.Adam(net.parameters(), lr=0.03)
    for _ in range(60):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    net.eval()
    scripted = torch.jit.script(net)
    scripted.save(str(DATA / "model.pt"))
    with torch.no_grad():
        logits = scripted(x)
    np.save(DATA / "inputs.npy", x.numpy().astype(np.float32))
    np.save(DATA / "labels.npy", y.numpy().astype(np.int64))
    np.save(DATA / "logits.npy", logits.numpy().astype(np.float32))
    accuracy = (logits.argmax(1) == y).float().mean().item()
    total = sum(p.stat().st_size for p in DATA.rglob("*") if p.is_file())
    print(f"wrote {DATA} ({total} bytes); training accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
