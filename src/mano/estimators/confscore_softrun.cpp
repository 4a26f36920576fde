// ConfScore on MaNo's softrun normalization: the mean of max_k sigma_ik on the branch the
// criterion picks (softmax of q, or its Taylor normalization).
// mano: per-row code in the default pass, built for speed in every build (src/mano/CMakeLists.txt)
#include "mano/estimators/estimator.hpp"

namespace mano {
namespace detail {
namespace {

struct branches {
    moments softmax, taylor;
};

class confscore_softrun_estimator : public component<confscore_softrun_estimator, branches> {
public:
    block_needs needs() const override {
        block_needs n;
        n.taylor = n.extras = true;
        return n;
    }
    void add(const block& b) override {
        for (std::size_t r = 0; r < b.count; ++r) {
            s.softmax.add(b.stats[r].max_prob);
            s.taylor.add(b.stats[r].taylor_max);
        }
    }
    nlohmann::json to_json() const override { return {{"softmax", s.softmax.to_json()}, {"taylor", s.taylor.to_json()}}; }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        s.softmax = moments::from_json(j.at("softmax"), static_cast<double>(n), 1, "\"softmax\"");
        s.taylor = moments::from_json(j.at("taylor"), static_cast<double>(n), 1, "\"taylor\"");
    }
    void finalize(const final_context& c, result& r) const override {
        const moments& m = c.used == normalization::softmax ? s.softmax : s.taylor;
        const double n = static_cast<double>(c.n);
        r[method::confscore_softrun] = estimate{m.sum / n, m.mean_se(n), std::nullopt};
    }

private:
    void merge_from(const branches& o, std::size_t, std::size_t) override {
        s.softmax.add(o.softmax);
        s.taylor.add(o.taylor);
    }
};

}  // namespace

std::unique_ptr<estimator> make_confscore_softrun(const estimator_setup&) {
    return std::make_unique<confscore_softrun_estimator>();
}

}  // namespace detail
}  // namespace mano
