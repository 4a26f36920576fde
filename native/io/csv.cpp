// .csv / .tsv: one row per line (lines end with LF, CRLF or CR), numbers parsed
// locale-independently (std::from_chars), an optional header and an optional label column. One
// pass at open counts the rows and indexes every 1024th, so read() can start anywhere after a
// short scan. Lines longer than csv_max_line_bytes or wider than csv_max_columns are refused.
#include <algorithm>
#include <cstring>
#include <string_view>

#include "io/csv_columns.hpp"
#include "io/detail.hpp"
#include "mano/base/number_text.hpp"

namespace mano {
namespace io {
namespace detail {

namespace {

constexpr std::size_t index_stride = 1024;

// Empty, or only spaces and tabs (as a spreadsheet leaves them): skipped like an empty line.
bool is_blank(std::string_view line) { return line.find_first_not_of(" \t\v\f") == std::string_view::npos; }

[[noreturn]] void fail_long_line(const std::string& path, std::uint64_t line) {
    fail(path, "line " + std::to_string(line) + " is longer than " + std::to_string(csv_max_line_bytes) +
                   " bytes, the limit of mano's CSV reader (is this a text file of one row per line? store very "
                   "wide logits as .npy)");
}

// The lines of a file from a byte offset, read through a buffer that grows only to hold one line,
// and at most a line of csv_max_line_bytes.
class line_scanner {
public:
    line_scanner(const file_handle& file, std::uint64_t offset, std::uint64_t line_number)
        : file_(&file), next_offset_(offset), next_line_(line_number) {}

    // The next line, without its end ("\n", "\r\n" or "\r"); false at the end of the file.
    bool next(std::string_view& line) {
        for (;;) {
            const char* start = buffer_.data() + begin_;
            const std::size_t available = end_ - begin_;
            std::size_t length = 0;
            while (length < available && start[length] != '\n' && start[length] != '\r') ++length;
            if (length > csv_max_line_bytes) fail_long_line(file_->path(), next_line_);
            std::size_t consumed = length;
            if (length == available) {  // no line end in the buffer
                if (!eof_) {
                    fill();
                    continue;
                }
                if (available == 0) return false;
            } else if (start[length] == '\r' && length + 1 == available && !eof_) {
                fill();  // a '\r' that ends the buffer may be the first half of "\r\n": read on to see
                continue;
            } else {
                consumed += start[length] == '\r' && length + 1 < available && start[length + 1] == '\n' ? 2 : 1;
            }
            line = std::string_view(start, length);
            if (next_offset_ == 0 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // UTF-8 byte-order mark
            line_offset_ = next_offset_;
            line_number_ = next_line_++;
            next_offset_ += consumed;
            begin_ += consumed;
            return true;
        }
    }

    std::uint64_t line_number() const noexcept { return line_number_; }
    std::uint64_t line_offset() const noexcept { return line_offset_; }

private:
    void fill() {
        if (begin_ > 0) {
            std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
            end_ -= begin_;
            begin_ = 0;
        }
        // Room for the longest line mano takes and its "\r\n"; a longer line is refused above.
        constexpr std::size_t most = static_cast<std::size_t>(csv_max_line_bytes) + 2;
        if (end_ == buffer_.size()) {
            if (buffer_.size() >= most) fail_long_line(file_->path(), next_line_);
            buffer_.resize(std::min(most, std::max<std::size_t>(buffer_.size() * 2, std::size_t{1} << 18)));
        }
        const std::uint64_t at = next_offset_ + end_;
        const std::size_t got = at >= file_->size() ? 0 : file_->read_some_at(at, buffer_.data() + end_, buffer_.size() - end_);
        end_ += got;
        if (got == 0) eof_ = true;
    }

    const file_handle* file_;
    std::vector<char> buffer_;
    std::size_t begin_ = 0, end_ = 0;
    bool eof_ = false;
    std::uint64_t next_offset_, next_line_;
    std::uint64_t line_offset_ = 0, line_number_ = 0;
};

// Splits a line at the delimiter; a field in "..." may hold the delimiter, and "" stands for ".
// Fields are views of the line with surrounding spaces dropped (quotes kept; see unquote). Keeps
// at most `keep` fields and returns how many the line has.
std::size_t split(std::string_view line, char delimiter, std::vector<std::string_view>& fields, std::size_t keep) {
    fields.clear();
    std::size_t count = 0;
    std::size_t at = 0;
    for (;;) {
        std::size_t start = at;
        while (start < line.size() && (line[start] == ' ' || (line[start] == '\t' && delimiter != '\t'))) ++start;
        std::size_t end = start;
        if (start < line.size() && line[start] == '"') {
            end = start + 1;
            for (;;) {
                const auto quote = line.find('"', end);
                if (quote == std::string_view::npos) {
                    end = line.size();
                    break;
                }
                if (quote + 1 < line.size() && line[quote + 1] == '"') {
                    end = quote + 2;
                    continue;
                }
                end = quote + 1;
                break;
            }
        }
        const auto next = line.find(delimiter, end);
        std::size_t stop = next == std::string_view::npos ? line.size() : next;
        std::size_t last = stop;
        while (last > start && (line[last - 1] == ' ' || (line[last - 1] == '\t' && delimiter != '\t'))) --last;
        if (count++ < keep) fields.push_back(line.substr(start, last - start));
        if (next == std::string_view::npos) return count;
        at = next + 1;
    }
}

std::string unquote(std::string_view field) {
    if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
        std::string out;
        for (std::size_t i = 1; i + 1 < field.size(); ++i) {
            out += field[i];
            if (field[i] == '"' && field[i + 1] == '"') ++i;
        }
        return out;
    }
    return std::string(field);
}

std::string_view inner(std::string_view field) {
    if (field.size() >= 2 && field.front() == '"' && field.back() == '"') return field.substr(1, field.size() - 2);
    return field;
}

// A field's number and label by the core's rule (mano/base/number_text.hpp), which audit files
// read too, once its quotes are gone.
bool parse_number(std::string_view field, double& value) { return parse_real(inner(field), value); }

bool parse_label(std::string_view field, std::int64_t& value) { return parse_whole_label(inner(field), value); }

// A field as a message shows it: quoted when it is short (the text of any number fits), else
// only its length, so an error never repeats a line of a file that is not what it was said to be.
std::string shown(std::string_view field, const char* what = "field") {
    constexpr std::size_t most = 24;
    if (field.size() <= most) return "'" + printable(field, most) + "'";
    return std::string("a ") + what + " of " + std::to_string(field.size()) + " bytes";
}

struct csv_layout {
    char delimiter = ',';
    bool header = false;
    std::vector<std::string> names;
    std::size_t fields = 0;                  // per row
    std::optional<std::size_t> label_index;  // in fields
    std::vector<bool> skip;                  // per field: not a logit (the label column, a column left out)
    std::vector<std::string> notes;          // what was left out or taken as labels (csv_columns.hpp)
    csv_columns columns;                     // the columns' rule's answer (csv_columns.hpp)
    std::uint64_t rows = 0;
    struct mark {
        std::uint64_t offset, line;
    };
    std::vector<mark> index;  // where data rows 0, 1024, 2048, ... start
};

// Counts the data rows from `offset` on and indexes every index_stride-th; blank lines are skipped.
void index_rows(const file_handle& file, std::uint64_t offset, std::uint64_t line, csv_layout& layout) {
    std::vector<char> chunk(std::size_t{1} << 20);
    std::uint64_t line_start = offset, length = 0;
    bool filled = false;  // the line has a byte other than a space or a tab (is_blank)
    const auto end_line = [&] {
        if (filled) {
            if (layout.rows % index_stride == 0) layout.index.push_back({line_start, line});
            ++layout.rows;
        }
        ++line;
        length = 0;
        filled = false;
    };
    bool after_cr = false;  // the last byte was a '\r', so a '\n' now ends no further line
    for (std::uint64_t at = offset; at < file.size();) {
        const std::size_t n = file.read_some_at(at, chunk.data(), static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), file.size() - at)));
        if (n == 0) fail(file.path(), "ends before its size said (did the file change while it was read?)");
        for (std::size_t i = 0; i < n; ++i) {
            const char c = chunk[i];
            if (c != '\n' && c != '\r') {
                if (++length > csv_max_line_bytes) fail_long_line(file.path(), line);
                filled = filled || (c != ' ' && c != '\t' && c != '\v' && c != '\f');
                after_cr = false;
                continue;
            }
            if (!(after_cr && c == '\n')) end_line();
            after_cr = c == '\r';
            line_start = at + i + 1;
        }
        at += n;
    }
    if (length > 0) end_line();
}

[[noreturn]] void fail_wide_line(const std::string& path, std::uint64_t line, std::size_t fields) {
    fail(path, "line " + std::to_string(line) + " has " + std::to_string(fields) + " fields, more than the " +
                   std::to_string(csv_max_columns) + " columns mano's CSV reader takes (store very wide logits as .npy)");
}

// A first line is data when every field is a number, and a header when none is, or when
// its numbers are 0, 1, 2, ... in order beside names (the column names pandas writes for
// an unnamed array; an empty first field is pandas' index). Anything else is refused: a
// line of numbers with a malformed one ("1,,2", "1d3,2") must not pass for a header and
// drop a row.
bool first_line_is_header(const std::string& path, const std::vector<std::string_view>& fields, std::uint64_t first_line) {
    double value = 0;
    std::size_t numbers = 0;
    bool counts_up = true;
    std::optional<std::size_t> other, misfit;  // the first field that is not a number; one no header has
    for (std::size_t j = 0; j < fields.size(); ++j) {
        if (parse_number(fields[j], value)) {
            counts_up = counts_up && value == static_cast<double>(numbers) && inner(fields[j]).find('.') == std::string_view::npos;
            ++numbers;
            continue;
        }
        if (!other) other = j;
        if (!misfit && j > 0 && is_blank(inner(fields[j]))) misfit = j;
    }
    if (numbers > 0 && other && (!counts_up || misfit)) {
        const std::size_t j = misfit ? *misfit : *other;
        fail(path, "line " + std::to_string(first_line) + ", column " + std::to_string(j + 1) + ": " +
                       (is_blank(inner(fields[j])) ? std::string("an empty field") : shown(fields[j]) + ", not a number,") +
                       " in a line of numbers: the first line is neither a header (names, or pandas' 0, 1, 2, ...) "
                       "nor a row of numbers (set the header option if it is a header)");
    }
    return other.has_value() || (counts_up && numbers > 1);
}

// The next line that is not blank; false at the end of the file.
bool next_filled(line_scanner& scan, std::string_view& line) {
    while (scan.next(line))
        if (!is_blank(line)) return true;
    return false;
}

std::shared_ptr<const csv_layout> read_layout(const file_handle& file, const read_options& opts, char delimiter,
                                              bool for_labels) {
    const std::string& path = file.path();
    if (file.size() == 0) fail(path, "is empty");
    auto layout = std::make_shared<csv_layout>();
    line_scanner scan(file, 0, 1);
    std::string_view line;
    if (!next_filled(scan, line)) fail(path, "has no rows (only blank lines)");
    const std::uint64_t first_line = scan.line_number();
    // A .csv written with tabs: take the tab when the first line has no comma.
    if (delimiter == ',' && line.find(',') == std::string_view::npos && line.find('\t') != std::string_view::npos) delimiter = '\t';
    layout->delimiter = delimiter;
    std::vector<std::string_view> fields;
    const std::size_t count = split(line, delimiter, fields, csv_max_columns);
    if (count > csv_max_columns) fail_wide_line(path, first_line, count);
    layout->header = opts.header ? *opts.header : first_line_is_header(path, fields, first_line);
    layout->fields = fields.size();
    std::uint64_t data_offset = scan.line_offset(), data_line = first_line;
    if (layout->header) {
        for (const auto f : fields) layout->names.push_back(unquote(f));
        if (!next_filled(scan, line)) fail(path, "has a header (line " + std::to_string(first_line) + ") but no data rows");
        data_offset = scan.line_offset();
        data_line = scan.line_number();
        const std::size_t data_fields = split(line, delimiter, fields, layout->fields);
        if (data_fields != layout->names.size())
            fail(path, "line " + std::to_string(data_line) + " has " + std::to_string(data_fields) +
                           " fields but the header has " + std::to_string(layout->names.size()));
    }

    const csv_columns columns = resolve_csv_columns(path, layout->names, layout->fields, opts.label_column,
                                                    opts.label_column_option, false, for_labels);
    layout->label_index = columns.label;
    layout->notes = columns.notes;
    layout->columns = columns;
    layout->skip.assign(layout->fields, false);
    for (const std::size_t j : columns.dropped) layout->skip[j] = true;
    if (columns.label) layout->skip[*columns.label] = true;
    index_rows(file, data_offset, data_line, *layout);
    return layout;
}

class csv_reader final : public matrix_reader {
public:
    csv_reader(shared_file file, std::shared_ptr<const csv_layout> layout) : file_(std::move(file)), layout_(std::move(layout)) {
        path_ = file_->path();
        rows_ = static_cast<std::size_t>(layout_->rows);
        cols_ = static_cast<std::size_t>(std::count(layout_->skip.begin(), layout_->skip.end(), false));
        type_ = dtype::float64;
        notes_ = layout_->notes;
        has_labels_ = layout_->label_index.has_value();
    }

    logits_view read(std::size_t first, std::size_t count) override {
        if (first > rows_ || count > rows_ - first)
            fail(path_, "rows " + std::to_string(first) + " to " + std::to_string(first + count) +
                            " were asked for, but the file has " + std::to_string(rows_) + " rows");
        buffer_.resize(count * cols_);
        if (count == 0) return logits_view(buffer_.data(), 0, cols_);
        // Continue from where the last read stopped when that is closer than the index mark.
        const std::size_t mark = first / index_stride;
        if (!scan_ || next_row_ > first || next_row_ < mark * index_stride) {
            const auto& m = layout_->index[mark];
            scan_ = std::make_unique<line_scanner>(*file_, m.offset, m.line);
            next_row_ = mark * index_stride;
        }
        std::string_view line;
        double* out = buffer_.data();
        while (next_row_ < first + count) {
            if (!scan_->next(line)) fail(path_, "ends before row " + std::to_string(next_row_) + " (did the file change while it was read?)");
            if (is_blank(line)) continue;
            if (next_row_++ < first) continue;
            const std::size_t count = split(line, layout_->delimiter, fields_, layout_->fields);
            if (count != layout_->fields) ragged(count);
            for (std::size_t j = 0; j < fields_.size(); ++j) {
                if (layout_->skip[j]) continue;
                if (!parse_number(fields_[j], *out)) not_a_number(j);
                ++out;
            }
        }
        return logits_view(buffer_.data(), count, cols_);
    }

    std::unique_ptr<matrix_reader> clone() const override { return std::make_unique<csv_reader>(file_, layout_); }

private:
    [[noreturn]] void ragged(std::size_t count) const {
        fail(path_, "line " + std::to_string(scan_->line_number()) + " has " + std::to_string(count) +
                        " fields but the " + (layout_->header ? "header" : "first row") + " has " + std::to_string(layout_->fields));
    }
    [[noreturn]] void not_a_number(std::size_t j) const {
        const std::string name = layout_->header ? " (" + shown(layout_->names[j], "name") + ")" : "";
        fail(path_, "line " + std::to_string(scan_->line_number()) + ", column " + std::to_string(j + 1) + name + ": " +
                        (inner(fields_[j]).empty() ? std::string("empty field where a number was expected")
                                                   : shown(fields_[j]) + " is not a number"));
    }

    shared_file file_;
    std::shared_ptr<const csv_layout> layout_;
    std::unique_ptr<line_scanner> scan_;
    std::size_t next_row_ = 0;
    std::vector<std::string_view> fields_;
    std::vector<double> buffer_;
};

}  // namespace

std::unique_ptr<matrix_reader> open_csv_matrix(shared_file file, const read_options& opts, char delimiter) {
    auto layout = read_layout(*file, opts, delimiter, false);
    auto reader = std::make_unique<csv_reader>(std::move(file), layout);
    // an index under a name of its own is known by its first rows' values (csv_columns.hpp)
    const std::size_t rows = static_cast<std::size_t>(std::min<std::uint64_t>(layout->rows, csv_index_rows));
    const logits_view first = reader->read(0, rows);
    check_index_column(reader->path(), layout->names, layout->columns, layout->fields,
                       static_cast<const double*>(first.data()), rows, first.row_stride());
    return reader;
}

std::vector<std::int64_t> read_csv_labels(shared_file file, const read_options& opts, char delimiter) {
    const auto layout = read_layout(*file, opts, delimiter, true);
    const std::string& path = file->path();
    const std::size_t column = *layout->label_index;
    check_label_rows(path, layout->rows, opts);
    std::vector<std::int64_t> labels;
    labels.reserve(static_cast<std::size_t>(layout->rows));
    line_scanner scan(*file, layout->index[0].offset, layout->index[0].line);
    std::string_view line;
    std::vector<std::string_view> fields;
    while (labels.size() < layout->rows && scan.next(line)) {
        if (is_blank(line)) continue;
        const std::size_t count = split(line, layout->delimiter, fields, layout->fields);
        if (count != layout->fields)
            fail(path, "line " + std::to_string(scan.line_number()) + " has " + std::to_string(count) +
                           " fields but the " + (layout->header ? "header" : "first row") + " has " + std::to_string(layout->fields));
        std::int64_t value = 0;
        if (!parse_label(fields[column], value))
            fail(path, "line " + std::to_string(scan.line_number()) + ", column " + std::to_string(column + 1) + ": " +
                           shown(fields[column]) + " is not an integer class label");
        labels.push_back(value);
    }
    if (labels.size() != layout->rows) fail(path, "ends early (did the file change while it was read?)");
    return labels;
}

}  // namespace detail
}  // namespace io
}  // namespace mano
