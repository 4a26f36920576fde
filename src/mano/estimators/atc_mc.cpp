// ATC-MC (Garg et al., 2022): the share of rows whose maximum softmax probability at
// temperature T reaches the threshold fitted on the labeled source set (source_model).
#include "mano/detail/estimator.hpp"
#include "mano/detail/state.hpp"

namespace mano {
namespace detail {
namespace {

class atc_mc_estimator : public component<atc_mc_estimator, std::size_t> {
public:
    explicit atc_mc_estimator(const options& o) : source_(o.source) { s = 0; }
    block_needs needs() const override { return {}; }
    void add(const block& b) override {
        if (!source_) return;
        for (std::size_t r = 0; r < b.count; ++r) s += b.base[r].max_prob >= source_->atc_mc_threshold ? 1 : 0;
    }
    nlohmann::json to_json() const override { return s; }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        s = static_cast<std::size_t>(integer_of(j, "accumulator state", "atc_mc", 0, static_cast<std::int64_t>(n)));
    }
    void finalize(const final_context& c, result& r) const override {
        if (!source_) return;
        const double n = static_cast<double>(c.n), share = static_cast<double>(s) / n;
        r[method::atc_mc] = estimate{share, proportion_se(share, n), source_->atc_mc_threshold};
    }

private:
    void merge_from(const std::size_t& o, std::size_t, std::size_t) override { s += o; }
    std::optional<source_model> source_;
};

}  // namespace

std::unique_ptr<estimator> make_atc_mc(const estimator_setup& e) { return std::make_unique<atc_mc_estimator>(e.opts); }

}  // namespace detail
}  // namespace mano
