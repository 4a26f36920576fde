// ATC (Garg et al., 2022): the share of rows whose score at temperature T reaches the threshold
// fitted on the labeled source set (source_model), where the source's share equals its accuracy.
// Two scores, two methods of the table: ATC-MC the maximum softmax probability, ATC-NE the
// negative softmax entropy (a per-row extra of the kernel).
#include "mano/estimators/estimator.hpp"
#include "mano/base/detail/json_fields.hpp"

namespace mano {
namespace detail {
namespace {

template <method M>
class atc_estimator : public component<atc_estimator<M>, std::size_t> {
    static_assert(M == method::atc_mc || M == method::atc_ne);
    static constexpr bool by_entropy = M == method::atc_ne;

public:
    explicit atc_estimator(const options& o) : source_(o.source) { this->s = 0; }
    block_needs needs() const override {
        block_needs n;
        n.extras = by_entropy;
        return n;
    }
    void add(const block& b) override {
        if (!source_) return;
        const double t = threshold();
        for (std::size_t r = 0; r < b.count; ++r)
            this->s += (by_entropy ? -b.base[r].entropy : b.base[r].max_prob) >= t ? 1 : 0;
    }
    nlohmann::json to_json() const override { return this->s; }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        this->s = static_cast<std::size_t>(integer_of(j, "accumulator state", method_name(M), 0, static_cast<std::int64_t>(n)));
    }
    void finalize(const final_context& c, result& r) const override {
        if (!source_) return;
        const double n = static_cast<double>(c.n), share = static_cast<double>(this->s) / n;
        r[M] = estimate{share, proportion_se(share, n), threshold()};
    }

private:
    double threshold() const { return by_entropy ? source_->atc_ne_threshold : source_->atc_mc_threshold; }
    void merge_from(const std::size_t& o, std::size_t, std::size_t) override { this->s += o; }
    std::optional<source_model> source_;
};

}  // namespace

std::unique_ptr<estimator> make_atc_mc(const estimator_setup& e) {
    return std::make_unique<atc_estimator<method::atc_mc>>(e.opts);
}
std::unique_ptr<estimator> make_atc_ne(const estimator_setup& e) {
    return std::make_unique<atc_estimator<method::atc_ne>>(e.opts);
}

}  // namespace detail
}  // namespace mano
