#include "mano/result.hpp"

namespace mano {

nlohmann::json result::to_json() const {
    nlohmann::json m = {
        {"score", mano.score},
        {"criterion", mano.criterion},
        {"normalization", normalization_name(mano.used)},
        {"p", mano.p},
        {"eta", mano.eta},
        {"taylor_order", mano.taylor_order},
    };
    if (mano.criterion_fixed) m["criterion_fixed"] = true;
    if (mano.batch_size > 0) {
        m["batch_size"] = mano.batch_size;
        m["batches"] = mano.batches;
    }
    return {{"n", n}, {"k", k}, {"methods", {{"mano", m}}}};
}

}  // namespace mano
