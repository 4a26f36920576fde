// The xtensor bridge: containers are scored in place, and views wrap memory without copying.
#include <catch2/catch.hpp>

#include <xtensor/xarray.hpp>
#include <xtensor/xrandom.hpp>
#include <xtensor/xtensor.hpp>

#include <mano/scan/xtensor.hpp>

#include "support.hpp"

TEST_CASE("xtensor containers are scored in place", "[xtensor]") {
    xt::random::seed(4);
    const xt::xtensor<float, 2> q = xt::random::randn<float>({300, 12}, 0.0f, 3.0f);
    const auto direct = mano::score(mano::logits_view(q.data(), 300, 12));
    const auto via = mano::score(mano::view_of(q));
    CHECK(via.value(mano::method::mano).value() == direct.value(mano::method::mano).value());
    CHECK(via.n == 300);

    const auto wrapped = mano::as_xtensor<float>(mano::view_of(q));
    CHECK(wrapped.data() == q.data());  // no copy
    CHECK(wrapped(17, 5) == q(17, 5));
    CHECK(wrapped.shape()[1] == 12);

    xt::xarray<double, xt::layout_type::column_major> columns = xt::zeros<double>({4, 3});
    CHECK_THROWS_WITH(mano::view_of(columns), Catch::Contains("row-major"));
    CHECK_THROWS_WITH(mano::as_xtensor<double>(mano::view_of(q)), Catch::Contains("float32, not float64"));
}
