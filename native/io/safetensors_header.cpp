// The .safetensors header rules (header.hpp): its JSON read as events under small fixed limits,
// every tensor's entry checked, the data spans tiling the data section.
#include "io/header.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "io/json.hpp"

namespace mano {
namespace io {
namespace detail {

std::optional<element_type> safetensors_element(const std::string& dtype) {
    element_type e;
    e.swap = !host_is_little_endian();  // safetensors data is little-endian
    if (dtype == "F16") e = {scalar_kind::floating, 2, e.swap};
    else if (dtype == "BF16") e = {scalar_kind::bfloat, 2, e.swap};
    else if (dtype == "F32") e = {scalar_kind::floating, 4, e.swap};
    else if (dtype == "F64") e = {scalar_kind::floating, 8, e.swap};
    else if (dtype == "I8") e = {scalar_kind::signed_integer, 1, false};
    else if (dtype == "I16") e = {scalar_kind::signed_integer, 2, e.swap};
    else if (dtype == "I32") e = {scalar_kind::signed_integer, 4, e.swap};
    else if (dtype == "I64") e = {scalar_kind::signed_integer, 8, e.swap};
    else if (dtype == "U8") e = {scalar_kind::unsigned_integer, 1, false};
    else if (dtype == "U16") e = {scalar_kind::unsigned_integer, 2, e.swap};
    else if (dtype == "U32") e = {scalar_kind::unsigned_integer, 4, e.swap};
    else if (dtype == "U64") e = {scalar_kind::unsigned_integer, 8, e.swap};
    else return std::nullopt;
    return e;
}

namespace {

const std::string not_safetensors = "is not a valid .safetensors file: ";

// Bytes per element of the dtypes the format names; 0 for one mano does not know (its size is
// then not checked).
std::size_t dtype_size(const std::string& dtype) {
    static const std::pair<const char*, std::size_t> sizes[] = {
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"U16", 2}, {"I16", 2}, {"F16", 2},
        {"BF16", 2}, {"U32", 4}, {"I32", 4}, {"F32", 4},     {"U64", 8},     {"I64", 8}, {"F64", 8}, {"C64", 8}};
    for (const auto& [name, size] : sizes)
        if (dtype == name) return size;
    return 0;
}

// 64-bit FNV-1a: tensor names are told apart by it (a collision refuses a file, never misreads one).
std::uint64_t fnv1a(const std::string& text) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return h;
}

// Refuses a string, or a run of other bytes between two of {}[],: (a number, a word, spaces),
// longer than safetensors_max_string_bytes: a JSON parser holds one such run at a time, so with
// the header read as the parser asks for it, memory stays small whatever the header's length.
class run_limit {
public:
    explicit run_limit(const std::string& path) : path_(path) {}

    // Called once per byte, in order.
    void consume(char c) {
        if (in_string_) {
            if (escaped_) escaped_ = false;
            else if (c == '\\') escaped_ = true;
            else if (c == '"') in_string_ = false, run_ = 0;
            if (in_string_ && ++run_ > safetensors_max_string_bytes)
                fail(path_, not_safetensors + "its header has a string longer than " +
                                std::to_string(safetensors_max_string_bytes) + " bytes, the limit of mano's reader");
        } else if (c == '"') {
            in_string_ = true;
            run_ = 0;
        } else if (c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}') {
            run_ = 0;
        } else if (++run_ > safetensors_max_string_bytes) {
            fail(path_, not_safetensors + "its header has a number, word or run of spaces longer than " +
                            std::to_string(safetensors_max_string_bytes) + " bytes, the limit of mano's reader");
        }
    }

private:
    const std::string& path_;
    bool in_string_ = false, escaped_ = false;
    std::size_t run_ = 0;
};

// The header's bytes, read through a small buffer as the JSON parser asks for them.
class header_bytes {
public:
    header_bytes(const std::string& path, const read_at_function& read, std::uint64_t offset, std::uint64_t length)
        : read_(read), offset_(offset), length_(length), buffer_(std::size_t{1} << 16), runs_(path) {}

    char at(std::uint64_t position) {
        if (position < first_ || position >= first_ + filled_) {
            first_ = position;
            filled_ = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_.size(), length_ - position));
            read_(offset_ + position, buffer_.data(), filled_);
        }
        return buffer_[static_cast<std::size_t>(position - first_)];
    }

    // Called once per byte, in order, as the parser moves past it.
    void consume(char c) { runs_.consume(c); }

private:
    const read_at_function& read_;
    std::uint64_t offset_, length_;
    std::vector<char> buffer_;
    std::uint64_t first_ = 0;
    std::size_t filled_ = 0;
    run_limit runs_;
};

// An input iterator over header_bytes, for nlohmann::json::sax_parse.
class header_iterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = char;

    header_iterator(header_bytes* bytes, std::uint64_t position) : bytes_(bytes), position_(position) {}
    char operator*() const { return bytes_->at(position_); }
    header_iterator& operator++() {
        bytes_->consume(bytes_->at(position_));
        ++position_;
        return *this;
    }
    bool operator==(const header_iterator& other) const { return position_ == other.position_; }
    bool operator!=(const header_iterator& other) const { return position_ != other.position_; }

private:
    header_bytes* bytes_;
    std::uint64_t position_;
};

// What the header says, kept small: every tensor's data span (checked against the others once
// the header is read), and the dtype and shape of only the tensor asked for and the first one.
struct header_summary {
    struct span {
        std::uint64_t begin, end;
        std::size_t tensor;
    };
    std::vector<span> spans;
    std::vector<std::string> names;  // as messages show them
    std::optional<safetensors_tensor> first, wanted;
};

// Reads the header as JSON events (nlohmann's SAX interface), checking each tensor's entry as it
// ends, without building the document: a header of many values costs no more than a small one.
class header_reader {
public:
    using json = nlohmann::json;

    header_reader(const std::string& path, std::uint64_t data_size, std::string wanted)
        : path_(path), data_size_(data_size), wanted_(std::move(wanted)) {}

    header_summary& summary() { return summary_; }

    bool null() { return value(kind::other, "null"); }
    bool boolean(bool) { return value(kind::other, "a boolean"); }
    bool number_integer(json::number_integer_t v) {
        return v < 0 ? value(kind::other, "a negative number") : number(static_cast<std::uint64_t>(v));
    }
    bool number_unsigned(json::number_unsigned_t v) { return number(v); }
    bool number_float(json::number_float_t, const json::string_t&) { return value(kind::other, "a number with a fraction or exponent"); }
    bool binary(json::binary_t&) { return value(kind::other, "binary data"); }
    bool string(json::string_t& s) {
        if (top() == context::tensor && field_ == field::dtype) {
            entry_.dtype = s;
            return true;
        }
        return value(kind::other, "a string");
    }
    bool start_object(std::size_t) { return value(kind::object, "an object"); }
    bool start_array(std::size_t) { return value(kind::array, "a list"); }
    bool end_object() { return end(); }
    bool end_array() { return end(); }

    bool key(json::string_t& k) {
        if (top() == context::root) {
            field_ = field::none;
            if (k == "__metadata__") {
                field_ = field::metadata;
                if (seen_metadata_) duplicate(k);
                seen_metadata_ = true;
                return true;
            }
            if (!names_seen_.insert(fnv1a(k)).second) duplicate(k);
            if (summary_.names.size() == safetensors_max_tensors)
                fail(path_, "is a .safetensors file of more than " + std::to_string(safetensors_max_tensors) +
                                " tensors, the most mano reads (save the logits in a file of their own)");
            entry_ = safetensors_tensor{};
            entry_.where = path_ + ": tensor '" + printable(k, 200) + "'";
            entry_wanted_ = k == wanted_;
            summary_.names.push_back(printable(k, 40));
            seen_ = 0;
        } else if (top() == context::tensor) {
            field_ = k == "dtype" ? field::dtype : k == "shape" ? field::shape : k == "data_offsets" ? field::offsets : field::none;
            if (field_ != field::none) {
                const unsigned bit = 1u << static_cast<unsigned>(field_);
                if (seen_ & bit) duplicate(k);
                seen_ |= bit;
            }
        }
        return true;
    }

    bool parse_error(std::size_t position, const std::string&, const json::exception&) {
        fail(path_, not_safetensors + "its header is not valid JSON (at byte " + std::to_string(position) + " of the header)");
    }

private:
    enum class context { root, tensor, shape, offsets, skip };
    enum class field { none, dtype, shape, offsets, metadata };
    enum class kind { object, array, other };

    context top() const { return stack_.empty() ? context::skip : stack_.back(); }

    [[noreturn]] void duplicate(const std::string& k) const {
        fail(path_, not_safetensors + "its header has the key \"" + printable(k, 60) + "\" twice in one object; keep one");
    }

    void push(context c) {
        if (stack_.size() >= static_cast<std::size_t>(json_max_depth))
            fail(path_, not_safetensors + "its header nests deeper than " + std::to_string(json_max_depth) +
                            " levels, the limit of mano's JSON readers");
        stack_.push_back(c);
    }

    bool number(std::uint64_t v) {
        if (top() == context::shape) {
            if (entry_.shape.size() == 64) fail(entry_.where, "has a shape of more than 64 dimensions");
            entry_.shape.push_back(v);
            return true;
        }
        if (top() == context::offsets) {
            if (offsets_.size() == 2) fail(entry_.where, "its data_offsets is not a list [begin, end]");
            offsets_.push_back(v);
            return true;
        }
        return value(kind::other, "a number");
    }

    // A value starts (an object, a list or a scalar mano has not taken above).
    bool value(kind k, const char* what) {
        if (!started_) {
            if (k != kind::object) fail(path_, not_safetensors + "its header is not a JSON object");
            started_ = true;
            push(context::root);
            return true;
        }
        switch (top()) {
            case context::root:
                if (field_ == field::metadata) break;
                if (k != kind::object) fail(entry_.where, "its header entry needs \"dtype\", \"shape\" and \"data_offsets\"");
                push(context::tensor);
                return true;
            case context::tensor:
                if (field_ == field::dtype) fail(entry_.where, "its dtype is not a string");
                if (field_ == field::shape) {
                    if (k != kind::array) fail(entry_.where, "its shape is not a list");
                    push(context::shape);
                    return true;
                }
                if (field_ == field::offsets) {
                    if (k != kind::array) fail(entry_.where, "its data_offsets is not a list [begin, end]");
                    offsets_.clear();
                    push(context::offsets);
                    return true;
                }
                break;
            case context::shape: fail(entry_.where, std::string("its shape holds ") + what + ", not a non-negative integer");
            case context::offsets: fail(entry_.where, std::string("its data_offsets holds ") + what + ", not a non-negative integer");
            case context::skip: break;
        }
        if (k != kind::other) push(context::skip);  // a value mano does not read: only its depth counts
        return true;
    }

    bool end() {
        const context c = top();
        stack_.pop_back();
        if (c == context::offsets && offsets_.size() != 2) fail(entry_.where, "its data_offsets is not a list [begin, end]");
        if (c == context::tensor) finish_entry();
        return true;
    }

    void finish_entry() {
        constexpr unsigned all = 1u << static_cast<unsigned>(field::dtype) | 1u << static_cast<unsigned>(field::shape) |
                                 1u << static_cast<unsigned>(field::offsets);
        if (seen_ != all)
            fail(entry_.where, "its header entry needs \"dtype\", \"shape\" and \"data_offsets\"");
        const std::uint64_t begin = offsets_[0], end = offsets_[1];
        if (begin > end || end > data_size_)
            fail(entry_.where, "its data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                   "] lie outside the data section (" + std::to_string(data_size_) +
                                   " bytes; is the file truncated?)");
        entry_.offset = begin;  // relative to the data section until the caller adds the header
        entry_.bytes = end - begin;
        if (const std::size_t item = dtype_size(entry_.dtype)) {
            std::uint64_t expected = item;
            for (const std::uint64_t extent : entry_.shape)
                if (__builtin_mul_overflow(expected, extent, &expected))
                    fail(entry_.where, "has a shape too large to address: " + shape_text(entry_.shape));
            if (expected != entry_.bytes)
                fail(entry_.where, "has shape " + shape_text(entry_.shape) + " of " + entry_.dtype + " (" +
                                       std::to_string(expected) + " bytes) but its data_offsets span " +
                                       std::to_string(entry_.bytes) + " bytes");
        }
        const std::size_t index = summary_.names.size() - 1;
        summary_.spans.push_back({begin, end, index});
        if (index == 0) summary_.first = entry_;
        if (entry_wanted_) summary_.wanted = entry_;
    }

    const std::string& path_;
    std::uint64_t data_size_;
    std::string wanted_;
    header_summary summary_;
    std::vector<context> stack_;
    bool started_ = false, seen_metadata_ = false, entry_wanted_ = false;
    field field_ = field::none;
    unsigned seen_ = 0;  // bits of the fields the current entry has
    safetensors_tensor entry_;
    std::vector<std::uint64_t> offsets_;
    std::unordered_set<std::uint64_t> names_seen_;  // fnv1a of each tensor name
};

// The data section holds every tensor's bytes back to back and nothing else (the format's rule:
// a gap, an overlap or trailing bytes would be read differently by other tools).
void check_spans(const std::string& path, header_summary& h, std::uint64_t data_size) {
    auto& spans = h.spans;
    std::sort(spans.begin(), spans.end(),
              [](const auto& a, const auto& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
    std::uint64_t covered = 0;
    for (std::size_t i = 0; i < spans.size(); ++i) {
        const auto& s = spans[i];
        const std::string name = "'" + h.names[s.tensor] + "'";
        if (s.begin < covered)
            fail(path, not_safetensors + "the data of tensors '" + h.names[spans[i - 1].tensor] + "' and " + name +
                           " overlap (data_offsets [" + std::to_string(spans[i - 1].begin) + ", " +
                           std::to_string(spans[i - 1].end) + "] and [" + std::to_string(s.begin) + ", " +
                           std::to_string(s.end) + "])");
        if (s.begin > covered)
            fail(path, not_safetensors + "its data section has " + std::to_string(s.begin - covered) +
                           " bytes that no tensor holds, before tensor " + name +
                           " (the format stores tensors back to back)");
        covered = s.end;
    }
    if (covered != data_size)
        fail(path, not_safetensors + "it has " + std::to_string(data_size - covered) +
                       " bytes after the last tensor's data (the format ends the file there; is it damaged?)");
}

}  // namespace

std::uint64_t safetensors_header_length(const std::string& path, std::uint64_t size, const unsigned char* first) {
    if (size < 8) fail(path, not_safetensors + "it is shorter than the 8-byte header length (" + std::to_string(size) + " bytes)");
    std::uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | first[i];
    if (header_len > safetensors_header_max_bytes)
        fail(path, not_safetensors + "its header length " + std::to_string(header_len) + " is over the format's limit of " +
                       std::to_string(safetensors_header_max_bytes) + " bytes");
    if (header_len > size - 8)
        fail(path, not_safetensors + "its header length " + std::to_string(header_len) +
                       " is larger than the rest of the file (" + std::to_string(size - 8) + " bytes)");
    return header_len;
}

namespace {

// The tensor the caller wants, once the header's events went through `reader`.
safetensors_tensor chosen_tensor(const std::string& path, header_reader& reader, std::uint64_t header_len,
                                 std::uint64_t data_size, const std::string& key, const std::string& default_name,
                                 const char* how_to_choose) {
    header_summary& h = reader.summary();
    if (h.names.empty()) fail(path, "is a .safetensors file that holds no arrays");
    std::optional<safetensors_tensor> chosen = key.empty() && h.names.size() == 1 ? h.first : h.wanted;
    if (!chosen) fail_no_member(path, h.names, h.names.size(), wanted_member(key, default_name), !key.empty(), how_to_choose);
    check_spans(path, h, data_size);
    chosen->offset += 8 + header_len;
    return *chosen;
}

}  // namespace

safetensors_tensor read_safetensors_header(const std::string& path, std::uint64_t size, const read_at_function& read,
                                           const std::string& key, const std::string& default_name,
                                           const char* how_to_choose) {
    unsigned char first[8] = {};
    if (size >= 8) read(0, first, 8);
    const std::uint64_t header_len = safetensors_header_length(path, size, first);
    const std::uint64_t data_size = size - 8 - header_len;
    header_reader reader(path, data_size, wanted_member(key, default_name));
    header_bytes bytes(path, read, 8, header_len);
    nlohmann::json::sax_parse(header_iterator(&bytes, 0), header_iterator(&bytes, header_len), &reader);
    return chosen_tensor(path, reader, header_len, data_size, key, default_name, how_to_choose);
}

safetensors_tensor parse_safetensors_header(const std::string& path, std::uint64_t size, const std::string& header,
                                            const std::string& key, const std::string& default_name,
                                            const char* how_to_choose) {
    const std::uint64_t header_len = header.size();
    if (size < 8 + header_len) fail(path, not_safetensors + "its header is longer than the file");
    const std::uint64_t data_size = size - 8 - header_len;
    run_limit runs(path);
    for (const char c : header) runs.consume(c);
    header_reader reader(path, data_size, wanted_member(key, default_name));
    nlohmann::json::sax_parse(header, &reader);
    return chosen_tensor(path, reader, header_len, data_size, key, default_name, how_to_choose);
}

}  // namespace detail
}  // namespace io
}  // namespace mano
