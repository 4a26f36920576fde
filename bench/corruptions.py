"""Image corruptions for the quality benchmarks (Digits-C, Fashion-MNIST-C), generic in the image
size, and the summary lines their generators print.

Every function takes a stack of gray images in [0, 1] (M x H x W, float64), a severity parameter
c and a numpy Generator, and returns a corrupted stack of the same shape in [0, 1]. Nothing here
depends on the data set: pixel-sized parameters (a square's side, a shift, a blur's sigma) are in
pixels of the images passed in. Only NumPy and scipy.ndimage.
"""
import numpy as np
from scipy import ndimage


def clip(x):
    return np.clip(x, 0.0, 1.0)


def per_image(x, f):
    return np.stack([f(img, i) for i, img in enumerate(x)])


def gaussian_noise(x, c, rng):
    # Additive N(0, c^2) noise.
    return clip(x + rng.normal(0.0, c, x.shape))


def shot_noise(x, c, rng):
    # Poisson noise with c photons at full intensity (smaller c: noisier).
    return clip(rng.poisson(x * c) / c)


def impulse_noise(x, c, rng):
    # Salt and pepper: a fraction c of the pixels set to 0 or 1.
    u = rng.random(x.shape)
    out = x.copy()
    out[u < c / 2] = 0.0
    out[(u >= c / 2) & (u < c)] = 1.0
    return out


def speckle_noise(x, c, rng):
    # Multiplicative noise x * (1 + N(0, c^2)).
    return clip(x + x * rng.normal(0.0, c, x.shape))


def gaussian_blur(x, c, rng):
    # Gaussian filter of sigma c pixels, zero outside the image.
    return per_image(x, lambda img, i: ndimage.gaussian_filter(img, c, mode="constant"))


def contrast(x, c, rng):
    # Scale about each image's mean intensity by c < 1.
    mean = x.mean(axis=(1, 2), keepdims=True)
    return clip((x - mean) * c + mean)


def brightness(x, c, rng):
    return clip(x + c)


def pixelate(x, c, rng):
    # Down to c x c pixels (bilinear), back up to the original size by nearest neighbour.
    h, w = x.shape[1:]

    def f(img, i):
        small = ndimage.zoom(img, (c / h, c / w), order=1, mode="nearest", grid_mode=True)
        big = ndimage.zoom(small, (h / small.shape[0], w / small.shape[1]), order=0, mode="nearest", grid_mode=True)
        return big[:h, :w]
    return clip(per_image(x, f))


def rotate(x, c, rng):
    # Rotation by c degrees, clockwise or counter-clockwise at random, about the centre.
    angles = c * rng.choice([-1.0, 1.0], len(x))
    return clip(per_image(x, lambda img, i: ndimage.rotate(img, angles[i], reshape=False, order=1)))


def translate(x, c, rng):
    # Shift by c pixels in a uniformly random direction (bilinear, zero fill).
    theta = rng.uniform(0.0, 2 * np.pi, len(x))
    return clip(per_image(x, lambda img, i: ndimage.shift(img, (c * np.sin(theta[i]), c * np.cos(theta[i])), order=1)))


def elastic(x, c, rng, sigma=1.0):
    # Random displacement field (uniform noise smoothed by a Gaussian of `sigma` pixels), scaled to
    # c pixels of RMS displacement; bilinear resampling, zero fill.
    h, w = x.shape[1:]
    grid = np.mgrid[0:h, 0:w].astype(np.float64)

    def f(img, i):
        d = np.stack([ndimage.gaussian_filter(rng.uniform(-1, 1, (h, w)), sigma) for _ in range(2)])
        d *= c / max(np.sqrt((d ** 2).sum(0).mean()), 1e-12)
        return ndimage.map_coordinates(img, grid + d, order=1, mode="constant")
    return clip(per_image(x, f))


def occlusion(x, c, rng, value=0.5):
    # A c x c square of intensity `value` at a uniformly random place inside the image.
    h, w = x.shape[1:]
    out = x.copy()
    for i in range(len(x)):
        r = rng.integers(0, h - c + 1)
        col = rng.integers(0, w - c + 1)
        out[i, r:r + c, col:col + c] = value
    return out


def invert(x, c, rng):
    # Blend toward the inverted image: (1 - c) x + c (1 - x); c = 0.5 gives a flat gray image.
    return x * (1.0 - c) + (1.0 - x) * c


def zoom(x, c, rng):
    # Scale by c about the centre (c < 1 shrinks: the object gets smaller, the border empty).
    h, w = x.shape[1:]
    centre = np.array([(h - 1) / 2.0, (w - 1) / 2.0])
    matrix = np.eye(2) / c
    offset = centre - matrix @ centre
    return clip(per_image(x, lambda img, i: ndimage.affine_transform(img, matrix, offset=offset, order=1, mode="constant")))



def print_per_set(summary, names):
    """-v: every set's accuracy under every model, {model: {set: accuracy}}."""
    print("set " + " ".join(f"{m:>7}" for m in summary))
    for n in names:
        print(f"{n:24s} " + " ".join(f"{summary[m][n]:7.3f}" for m in summary))


def print_digest(folder, label):
    """SHA-256 over every file's relative path and bytes: equal digests, byte-identical data."""
    import hashlib
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode())
            digest.update(path.read_bytes())
    print(f"sha256 of {label}: {digest.hexdigest()}")
