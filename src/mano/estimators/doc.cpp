// DoC (Guillory et al., 2021): the source accuracy minus the drop in mean confidence (maximum
// softmax probability at temperature T) from the source set to this one.
#include <algorithm>

#include "mano/estimators/estimator.hpp"

namespace mano {
namespace detail {
namespace {

class doc_estimator : public stateless<doc_estimator> {
public:
    explicit doc_estimator(const options& o) : source_(o.source) {}
    void finalize(const final_context& c, result& r) const override {
        if (!source_) return;
        const double n = static_cast<double>(c.n);
        // An accuracy: the difference of confidences can carry it past 0 or 1 (a source set far
        // more confident than accurate, a target far less confident than the source).
        const double doc = source_->accuracy - (source_->confscore - c.max_prob.sum / n);
        r[method::doc] = estimate{std::clamp(doc, 0.0, 1.0), c.max_prob.mean_se(n), std::nullopt};
    }

private:
    std::optional<source_model> source_;
};

}  // namespace

std::unique_ptr<estimator> make_doc(const estimator_setup& e) { return std::make_unique<doc_estimator>(e.opts); }

}  // namespace detail
}  // namespace mano
