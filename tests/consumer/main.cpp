// Scores a few uniform and one-hot rows with the installed library and checks the paper's values
// (and that its header's version is the package's).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <mano/mano.hpp>

int main() {
    const std::size_t n = 8, k = 5;
    std::vector<double> uniform(n * k, 2.0), one_hot(n * k, -1000.0);
    for (std::size_t i = 0; i < n; ++i) one_hot[i * k + i % k] = 0.0;
    mano::options o;
    o.norm = mano::normalization::softmax;
    const double s_uniform = mano::score(mano::logits_view(uniform.data(), n, k), o).value(mano::method::mano).value();
    const double s_one_hot = mano::score(mano::logits_view(one_hot.data(), n, k), o).value(mano::method::mano).value();
    const bool ok = std::abs(s_uniform - 0.2) < 1e-12 && std::abs(s_one_hot - std::pow(5.0, -0.25)) < 1e-12 &&
                    std::strcmp(mano::version_string, MANO_PACKAGE_VERSION) == 0;
    std::printf("mano %s consumer: uniform %.6f, one-hot %.6f: %s\n", mano::version_string, s_uniform, s_one_hot,
                ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
