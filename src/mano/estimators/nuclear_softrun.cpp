// Nuclear on MaNo's softrun normalization: the nuclear norm of the rows of the branch the
// criterion picks. With T = 1 and Nuclear computed too, the softmax branch is Nuclear's matrix
// and is not kept twice.
#include "mano/estimators/estimator.hpp"

namespace mano {
namespace detail {
namespace {

class nuclear_softrun_estimator : public estimator {
public:
    explicit nuclear_softrun_estimator(const estimator_setup& e) : taylor_(e.k, e.gram) {
        if (e.opts.temperature != 1.0 || !e.opts.wants(method::nuclear)) softmax_.emplace(e.k, e.gram);
    }
    std::unique_ptr<estimator> clone() const override { return std::make_unique<nuclear_softrun_estimator>(*this); }
    block_needs needs() const override {
        block_needs n;
        n.taylor = n.softrun_rows = n.gram = true;
        return n;
    }
    void begin(std::size_t rows) override {
        if (softmax_) softmax_->begin(rows);
        taylor_.begin(rows);
    }
    void add(const block& b) override {
        if (softmax_) softmax_->add(b.softmax_rows, b.count);
        taylor_.add(b.taylor_rows, b.count);
    }
    void commit() override {
        if (softmax_) softmax_->commit();
        taylor_.commit();
    }
    void rollback() override {
        if (softmax_) softmax_->rollback();
        taylor_.rollback();
    }
    void merge(const estimator& other, std::size_t, std::size_t) override {
        const auto& o = static_cast<const nuclear_softrun_estimator&>(other);
        if (softmax_) softmax_->whole.add(o.softmax_->whole);
        taylor_.whole.add(o.taylor_.whole);
    }
    nlohmann::json to_json() const override {
        return {{"softmax", softmax_ ? softmax_->whole.to_json() : nlohmann::json()}, {"taylor", taylor_.whole.to_json()}};
    }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        check_state(j.at("softmax").is_null() != softmax_.has_value(),
                    std::string("\"softmax\" is ") + (softmax_ ? "missing but these options need it (the temperature is not 1 or nuclear is not computed)"
                                                              : "present but these options share Nuclear's matrix"));
        if (softmax_) softmax_->load(j.at("softmax"), n, "\"softmax\": ", true);
        taylor_.load(j.at("taylor"), n, "\"taylor\": ", true);
    }
    void finalize(const final_context& c, result& r) const override {
        double value;
        if (c.used != normalization::softmax) value = taylor_.whole.nuclear(c.n);
        else if (softmax_) value = softmax_->whole.nuclear(c.n);
        else value = *r.value(method::nuclear);  // finalized before: the table's order
        r[method::nuclear_softrun] = estimate{value, std::nullopt, std::nullopt};
    }

private:
    std::optional<pending_gram> softmax_;
    pending_gram taylor_;
};

}  // namespace

std::unique_ptr<estimator> make_nuclear_softrun(const estimator_setup& e) {
    return std::make_unique<nuclear_softrun_estimator>(e);
}

}  // namespace detail
}  // namespace mano
