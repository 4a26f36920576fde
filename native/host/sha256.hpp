#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex: the identity of a calibration file in
// a monitoring history (native/host/history.hpp), the same digest `sha256sum` prints, computed
// by OpenSSL's libcrypto.

#include <string>

namespace mano {
namespace host {

std::string sha256_hex(const std::string& bytes);

}  // namespace host
}  // namespace mano
