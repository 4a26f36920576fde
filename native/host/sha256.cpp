#include "host/sha256.hpp"

#include <openssl/evp.h>

#include "mano/base/error.hpp"

namespace mano {
namespace host {

// OpenSSL's libcrypto (Debian's libssl-dev): one EVP digest call.
std::string sha256_hex(const std::string& bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1)
        throw error("SHA-256: OpenSSL's EVP_Digest failed");
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < size; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 15];
    }
    return out;
}

}  // namespace host
}  // namespace mano
