#pragma once

namespace mano {

// Student's t distribution with `dof` degrees of freedom (any real dof > 0), for the prediction
// intervals of a calibration (docs/cli.md, "mano calibrate and mano predict"). Both functions are
// computed from the regularized incomplete beta function, accurate to about 1e-13 relative over
// dof in [1, 1e6] and probabilities in [1e-10, 1 - 1e-10], tails included.

// P(T <= t). t may be +-infinity; throws mano::error when t is NaN or dof is not a finite number > 0.
double student_t_cdf(double t, double dof);

// The t with P(T <= t) = probability, for probability in (0, 1) (open: the quantiles of 0 and 1 are
// infinite). Throws mano::error when probability is outside (0, 1) or dof is not a finite number > 0.
// Returns +-infinity only where the quantile exceeds the double range (dof far below 1).
double student_t_quantile(double probability, double dof);

// The standard normal distribution: Phi(x) = P(Z <= x) from erfc, and its inverse on (0, 1)
// (Acklam's rational approximation refined by one Halley step: about 1e-15 relative). The probit
// link of a calibration's lines and the z of the label-shift intervals use them.
double normal_cdf(double x);
double normal_quantile(double probability);

}  // namespace mano
