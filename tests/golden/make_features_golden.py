"""Writes the golden vectors of the feature-based estimators (Frechet distance, Dispersion):
float64 features as .npy files under tests/data/golden/features_*.npy and
tests/golden/features.json with the NumPy/SciPy reference values.
Run with Debian's Python: /usr/bin/python3 tests/golden/make_features_golden.py"""
import json
import pathlib

import numpy as np
import scipy.linalg

here = pathlib.Path(__file__).resolve().parent
data_dir = here.parent / "data" / "golden"
data_dir.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20241121)
frechet_cases, dispersion_cases, moment_cases = [], [], []


def save(name, x):
    x = np.ascontiguousarray(x, dtype=np.float64)
    np.save(data_dir / f"features_{name}.npy", x)
    return f"data/golden/features_{name}.npy", x


def gaussian(n, d, mean, scale=1.0):
    """Rows with mean `mean` and a random, anisotropic covariance."""
    a = rng.standard_normal((d, d)) * scale / np.sqrt(d)
    return rng.standard_normal((n, d)) @ a + mean


def frechet(x1, x2):
    """The usual FID formula with scipy.linalg.sqrtm of S1 S2, real part of its trace."""
    mu1, mu2 = x1.mean(axis=0), x2.mean(axis=0)
    s1, s2 = np.atleast_2d(np.cov(x1, rowvar=False)), np.atleast_2d(np.cov(x2, rowvar=False))
    covmean, _ = scipy.linalg.sqrtm(s1 @ s2, disp=False)
    assert np.all(np.isfinite(covmean))
    diff = mu1 - mu2
    value = float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean).real)
    # independent check: Tr((S1 S2)^1/2) is the sum of square roots of the eigenvalues of S1 S2
    eig = np.clip(np.linalg.eigvals(s1 @ s2).real, 0, None)
    check = float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * np.sqrt(eig).sum())
    assert abs(value - check) <= 1e-7 * max(1.0, abs(value)), (value, check)
    return value


def dispersion(x, predicted):
    """Xie et al. 2023, official code: log(sum_c n_c ||mu_c - mu||^2 / (C' - 1)), no 1/N."""
    classes = np.unique(predicted)
    mu = x.mean(axis=0)
    between = sum((predicted == c).sum() * np.sum((x[predicted == c].mean(axis=0) - mu) ** 2) for c in classes)
    return float(np.log(between / (len(classes) - 1)))


def add_frechet(name, source, target):
    frechet_cases.append({"name": name, "source": source[0], "target": target[0],
                          "expected": frechet(source[1], target[1])})


def add_dispersion(name, features, predicted, error=None):
    case = {"name": name, "features": features[0], "predicted": [int(c) for c in predicted]}
    if error:
        case["error"] = error
    else:
        case["expected"] = dispersion(features[1], predicted)
    dispersion_cases.append(case)


def add_moments(features):
    x = features[1]
    moment_cases.append({"features": features[0], "mean": x.mean(axis=0).tolist(),
                         "covariance": np.cov(x, rowvar=False).ravel().tolist()})


def mixture(n, d, weights, spread):
    """A Gaussian mixture: rows, and the predicted class of each (nearest centre)."""
    centres = rng.standard_normal((len(weights), d)) * spread
    truth = rng.choice(len(weights), size=n, p=weights)
    x = centres[truth] + rng.standard_normal((n, d))
    predicted = np.argmin(((x[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
    return x, predicted


# Frechet: D = 2, 16, 64 with shifted means and different covariances.
d2_source = save("d2_source", gaussian(500, 2, [0.0, 1.0]))
d2_target = save("d2_target", gaussian(400, 2, [1.5, -0.5], scale=2.0))
add_frechet("D=2 shifted mean, different covariance", d2_source, d2_target)
add_moments(d2_source)

mix_source, mix_source_predicted = mixture(240, 16, np.full(10, 0.1), 3.0)
mix_target, mix_target_predicted = mixture(200, 16, [0.5, 0.25, 0.15, 0.07, 0.03], 2.0)
d16_source = save("d16_source", mix_source)
d16_target = save("d16_target", mix_target * 1.5 + 4.0)
add_frechet("D=16 shifted mean, different covariance", d16_source, d16_target)
add_frechet("D=16 identical source and target", d16_source, d16_source)

d64_source = save("d64_source", gaussian(80, 64, 0.0))
d64_target = save("d64_target", gaussian(70, 64, rng.standard_normal(64) * 0.5, scale=1.5))
add_frechet("D=64 shifted mean, different covariance", d64_source, d64_target)

# Large means: the centred moments must not lose the spread to cancellation.
offset = rng.standard_normal(16) * 1e5
far_source = save("d16_far_source", gaussian(120, 16, offset))
far_target = save("d16_far_target", gaussian(100, 16, offset + 0.5, scale=0.5))
add_frechet("D=16 means of magnitude 1e5", far_source, far_target)

# Singular covariances: fewer rows than dimensions, and a constant feature.
few_source = save("d64_few_source", gaussian(20, 64, 0.0))
few_target = save("d64_few_target", gaussian(30, 64, 0.3, scale=1.2))
add_frechet("D=64 N<D in both sets", few_source, few_target)
add_frechet("D=64 N<D source against a full-rank target", few_source, d64_target)
constant = gaussian(150, 16, 1.0)
constant[:, 3] = 2.5
constant_source = save("d16_constant_column", constant)
add_frechet("D=16 constant feature against a full-rank target", constant_source, d16_target)
add_frechet("D=16 constant feature, identical sets", constant_source, constant_source)
add_moments(constant_source)

# Dispersion: 2 classes, 10 classes, unbalanced classes with sparse labels, one class.
two = gaussian(200, 8, 0.0)
two_predicted = (two[:, 0] + 0.3 * two[:, 1] > 0.2).astype(np.int64)
two[two_predicted == 1] += 1.0
add_dispersion("2 classes", save("d8_two_classes", two), two_predicted)
add_dispersion("10 classes", d16_source, mix_source_predicted)
sparse_labels = np.array([2, 5, 17, 40, 1000])
unbalanced = sparse_labels[mix_target_predicted]
unbalanced[np.flatnonzero(unbalanced == 1000)[1:]] = 2  # class 1000 keeps a single row
assert (unbalanced == 1000).sum() == 1
add_dispersion("unbalanced classes, sparse labels, a class of one row", d16_target, unbalanced)
add_dispersion("a single predicted class", d2_source, np.full(500, 3),
               error="Dispersion needs at least two predicted classes")

(here / "features.json").write_text(json.dumps(
    {"generator": "tests/golden/make_features_golden.py", "frechet": frechet_cases,
     "dispersion": dispersion_cases, "moments": moment_cases}, indent=1) + "\n")
print(f"wrote {len(frechet_cases)} Frechet, {len(dispersion_cases)} Dispersion and "
      f"{len(moment_cases)} moment cases to {here / 'features.json'}")
