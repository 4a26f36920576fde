#include "io/json.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <utility>
#include <vector>

#include <mano/base/error.hpp>
#include <mano/base/text.hpp>

namespace mano {
namespace io {

namespace {

// Thrown from the parser's callback to stop at the first level too deep, or at a key that an
// object already has (the parser would keep the last value silently, where another reader
// may take the first: an ambiguous file is refused).
struct too_deep {};
struct duplicate_key {
    std::string key;
};

// Parses `input` (text or a stream, read as it goes) with the depth limit.
template <class Input>
nlohmann::json parse_limited(Input&& input, const std::string& path, const std::string& what) {
    std::vector<std::set<std::string>> keys;  // of each object being read, innermost last
    try {
        return nlohmann::json::parse(std::forward<Input>(input),
                                     [&keys](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
            using event_t = nlohmann::json::parse_event_t;
            if (depth > json_max_depth) throw too_deep{};
            if (event == event_t::object_start) keys.emplace_back();
            if (event == event_t::object_end && !keys.empty()) keys.pop_back();
            if (event == event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
                throw duplicate_key{parsed.get<std::string>()};
            return true;
        });
    } catch (const duplicate_key& d) {
        throw error(path + ": " + what + " has the key \"" + printable(d.key, 60) + "\" twice in one object; keep one");
    } catch (const too_deep&) {
        throw error(path + ": " + what + " nests deeper than " + std::to_string(json_max_depth) +
                    " levels, the limit of mano's JSON readers");
    } catch (const nlohmann::json::parse_error& e) {
        // The parser's reason ("invalid string: ill-formed UTF-8 byte", "unexpected end of input;
        // expected ..."), without the file's text it quotes after "; last read:".
        std::string reason = e.what();
        const auto dash = reason.find(" - ");
        reason = dash == std::string::npos ? "" : reason.substr(dash + 3);
        const auto quoted = reason.find("; last read");
        if (quoted != std::string::npos) reason.resize(quoted);
        throw error(path + ": " + what + " is not valid JSON (at byte " + std::to_string(e.byte) +
                    (reason.empty() ? "" : ": " + printable(reason, 200)) + ")");
    } catch (const nlohmann::json::exception&) {  // out_of_range: a number like 1e999
        throw error(path + ": " + what + " holds a number beyond the range of a double");
    }
}

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& path, const std::string& what) {
    return parse_limited(text, path, what);
}

namespace {

// The regular file at `path`, opened, once its size is known to be within `max_bytes`.
std::ifstream open_limited(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
    std::error_code ec;
    const bool regular = std::filesystem::is_regular_file(path, ec);
    const auto size = regular ? std::filesystem::file_size(path, ec) : 0;
    if (!regular || ec) throw error(path + ": cannot open this " + what + " (not a readable regular file)");
    if (size > max_bytes)
        throw error(path + ": this " + what + " is " + std::to_string(size) + " bytes, over the " + std::to_string(max_bytes) +
                    "-byte limit of mano's " + what + " reader");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(path + ": cannot open this " + what);
    return in;
}

}  // namespace

std::string read_text(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
    std::ifstream in = open_limited(path, what, max_bytes);
    std::string text;
    char block[1 << 16];
    while (in.read(block, sizeof block) || in.gcount() > 0) {
        text.append(block, static_cast<std::size_t>(in.gcount()));
        if (text.size() > max_bytes)  // grown since its size was read
            throw error(path + ": this " + what + " is over the " + std::to_string(max_bytes) + "-byte limit of mano's " + what +
                        " reader");
    }
    if (in.bad()) throw error(path + ": cannot read this " + what);
    return text;
}

nlohmann::json read_json(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
    std::ifstream in = open_limited(path, what, max_bytes);
    return parse_limited(in, path, what);
}

}  // namespace io
}  // namespace mano
