#pragma once
// Everything a user of the core needs: #include <mano/mano.hpp>

#include "mano/accumulator.hpp"
#include "mano/architecture.hpp"
#include "mano/calibration.hpp"
#include "mano/error.hpp"
#include "mano/evaluation.hpp"
#include "mano/features.hpp"
#include "mano/half.hpp"
#include "mano/logits_view.hpp"
#include "mano/options.hpp"
#include "mano/registry.hpp"
#include "mano/result.hpp"
#include "mano/source.hpp"
#include "mano/student_t.hpp"
#include "mano/text.hpp"
#include "mano/transport.hpp"
#include "mano/version.hpp"
