"""An independent Python reference of the label-shifted copies calibrate adds to a family
(src/mano/calibration/label_shift_copies.hpp, docs/cli.md "Label-shift copies"): splitmix64,
Marsaglia and Tsang's Gamma draws, Dirichlet class proportions over the classes a set has, each
row's class by inverse CDF and its row uniformly among that class's rows. Python integers, so
the draws are exact on any platform."""
import math

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def below(self, bound):
        reject = (1 << 64) % bound
        while True:
            x = self.next()
            if x >= reject:
                return x % bound

    def normal(self):
        u, v = 1 - self.uniform(), self.uniform()
        return math.sqrt(-2 * math.log(u)) * math.cos(2 * 3.141592653589793 * v)

    def gamma(self, alpha):
        if alpha < 1:
            return self.gamma(alpha + 1) * math.pow(1 - self.uniform(), 1 / alpha)
        d = alpha - 1 / 3
        c = 1 / math.sqrt(9 * d)
        while True:
            while True:
                x = self.normal()
                v = 1 + c * x
                if v > 0:
                    break
            v = v * v * v
            u = 1 - self.uniform()
            if math.log(u) < 0.5 * x * x + d - d * v + d * math.log(v):
                return d * v


def copy_rows(labels, k, set_index, copy, seed=0, max_rows=1000, alphas=(0.5, 1.0, 5.0)):
    """The rows of copy `copy` of the family's set `set_index` (its labels), in draw order."""
    labels = [int(y) for y in labels]
    rows_of = [[] for _ in range(k)]
    for i, y in enumerate(labels):
        rows_of[y].append(i)
    g = SplitMix64(seed ^ ((0x9E3779B97F4A7C15 * (set_index + 1)) & MASK) ^ ((0xC2B2AE3D27D4EB4F * (copy + 1)) & MASK))
    alpha = alphas[copy % len(alphas)]
    classes, cumulative, total = [], [], 0.0
    for c in range(k):
        if rows_of[c]:
            total += g.gamma(alpha)
            classes.append(c)
            cumulative.append(total)
    out = []
    for _ in range(min(len(labels), max_rows)):
        u = g.uniform() * total
        at = next((j for j, edge in enumerate(cumulative) if edge > u), len(classes) - 1)
        pool = rows_of[classes[at]]
        out.append(pool[g.below(len(pool))])
    return out
