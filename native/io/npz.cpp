// .npz: a zip archive of .npy members, stored (numpy.savez) or deflated (numpy.savez_compressed).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <zlib.h>

#include "io/detail.hpp"

namespace mano {
namespace io {
namespace detail {

namespace {

std::uint64_t le(const unsigned char* p, int bytes) {
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

struct zip_member {
    std::string name;
    std::uint16_t flags = 0, method = 0;
    std::uint32_t crc = 0;
    std::uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

constexpr std::uint32_t u32_max = 0xFFFFFFFFu;

// An archive's members and where its central directory starts.
struct zip_directory {
    std::vector<zip_member> members;
    std::uint64_t offset = 0;  // of the central directory: every member's data ends before it
};

[[noreturn]] void damaged(const std::string& path, const std::string& what) {
    fail(path, "is not a valid .npz (zip) archive: " + what);
}

// Where the central directory lies: its entries, bytes, offset, and where it must end.
struct directory_place {
    std::uint64_t entries = 0, size = 0, offset = 0, end = 0;
};

// The end-of-central-directory record (and its ZIP64 locator and record when the archive needs
// 64-bit sizes, counts or offsets). Nothing may follow the record but its comment, and the
// directory must end where the record (or ZIP64 record) begins: bytes elsewhere would be read
// differently by other tools.
directory_place find_directory(const file_handle& file) {
    const std::string& path = file.path();
    const std::uint64_t size = file.size();
    const std::size_t tail_len = static_cast<std::size_t>(std::min<std::uint64_t>(size, 22 + 0xFFFF));
    std::vector<unsigned char> tail(tail_len);
    file.read_at(size - tail_len, tail.data(), tail_len);
    std::size_t eocd = std::string::npos, loose = std::string::npos;
    for (std::size_t p = tail_len >= 22 ? tail_len - 22 + 1 : 0; p-- > 0;) {
        if (std::memcmp(&tail[p], "PK\x05\x06", 4) != 0) continue;
        const std::uint64_t end = p + 22 + le(&tail[p + 20], 2);
        if (end == tail_len) {
            eocd = p;
            break;
        }
        if (end < tail_len && loose == std::string::npos) loose = p;
    }
    if (eocd == std::string::npos && loose != std::string::npos)
        damaged(path, "it has " + std::to_string(tail_len - loose - 22 - le(&tail[loose + 20], 2)) +
                          " bytes after its end-of-central-directory record (was something appended to it?)");
    if (eocd == std::string::npos) damaged(path, "it has no end-of-central-directory record (is the file truncated?)");
    const unsigned char* e = &tail[eocd];
    const std::uint64_t eocd_offset = size - tail_len + eocd;
    if (le(e + 4, 2) != 0 || le(e + 6, 2) != 0) damaged(path, "it spans several disks");
    directory_place d{le(e + 10, 2), le(e + 12, 4), le(e + 16, 4), eocd_offset};
    if (eocd_offset >= 20 && eocd >= 20 && std::memcmp(e - 20, "PK\x06\x07", 4) == 0) {
        const std::uint64_t record = le(e - 20 + 8, 8);
        unsigned char z[56];
        if (record > eocd_offset - 20 || eocd_offset - 20 - record < 56) damaged(path, "its ZIP64 locator points outside the file");
        file.read_at(record, z, 56);
        if (std::memcmp(z, "PK\x06\x06", 4) != 0) damaged(path, "its ZIP64 end-of-central-directory record is missing");
        if (le(z + 16, 4) != 0 || le(z + 20, 4) != 0) damaged(path, "it spans several disks");
        d = {le(z + 32, 8), le(z + 40, 8), le(z + 48, 8), record};
    } else if (d.entries == 0xFFFF || d.size == u32_max || d.offset == u32_max) {
        damaged(path, "it needs a ZIP64 end-of-central-directory record but has none");
    }
    return d;
}

// The directory's place checked against mano's limits and the file.
void check_place(const std::string& path, const directory_place& d) {
    if (d.entries > npz_max_members)
        fail(path, "is a .npz archive of " + std::to_string(d.entries) + " members, more than the " +
                       std::to_string(npz_max_members) + " mano reads (save the logits in an archive of their own)");
    if (d.size > npz_max_directory_bytes)
        fail(path, "is a .npz archive whose central directory is " + std::to_string(d.size) + " bytes, more than the " +
                       std::to_string(npz_max_directory_bytes) + " mano reads (save the logits in an archive of their own)");
    if (d.offset > d.end || d.size > d.end - d.offset)
        damaged(path, "its central directory (" + std::to_string(d.size) + " bytes at offset " + std::to_string(d.offset) +
                          ") lies outside the file (is it truncated?)");
    if (d.offset + d.size != d.end)
        damaged(path, "its central directory ends " + std::to_string(d.end - d.offset - d.size) +
                          " bytes before its end record (was something inserted into it?)");
    if (d.entries > d.size / 46) damaged(path, "its central directory is too small for " + std::to_string(d.entries) + " entries");
}

// ZIP64 extended information: the 64-bit values of the fields that hold 0xFFFFFFFF, in order.
void read_zip64_extra(const std::string& path, zip_member& m, const unsigned char* extra, std::size_t extra_len) {
    for (std::size_t x = 0; x + 4 <= extra_len;) {
        const std::size_t id = le(extra + x, 2), len = le(extra + x + 2, 2);
        if (x + 4 + len > extra_len) break;
        if (id == 1) {
            const unsigned char* field = extra + x + 4;
            std::size_t left = len;
            const auto take = [&](std::uint64_t& value) {
                if (value != u32_max) return;
                if (left < 8) damaged(path, "member '" + printable(m.name, 60) + "' has a short ZIP64 extra field");
                value = le(field, 8);
                field += 8;
                left -= 8;
            };
            take(m.uncompressed);
            take(m.compressed);
            take(m.local_offset);
            return;
        }
        x += 4 + len;
    }
    damaged(path, "member '" + printable(m.name, 60) + "' needs a ZIP64 extra field but has none");
}

// The central directory, found through the end-of-central-directory record (find_directory).
zip_directory read_directory(const file_handle& file) {
    const std::string& path = file.path();
    const directory_place place = find_directory(file);
    check_place(path, place);
    std::vector<unsigned char> directory(static_cast<std::size_t>(place.size));
    file.read_at(place.offset, directory.data(), directory.size());
    zip_directory out;
    out.offset = place.offset;
    out.members.reserve(static_cast<std::size_t>(place.entries));
    std::size_t at = 0;
    for (std::uint64_t i = 0; i < place.entries; ++i) {
        if (directory.size() - at < 46) damaged(path, "its central directory ends inside an entry");
        const unsigned char* h = &directory[at];
        if (std::memcmp(h, "PK\x01\x02", 4) != 0)
            damaged(path, "central directory entry " + std::to_string(i) + " has a bad signature");
        const std::size_t name_len = le(h + 28, 2), extra_len = le(h + 30, 2), comment_len = le(h + 32, 2);
        if (directory.size() - at - 46 < name_len + extra_len + comment_len)
            damaged(path, "its central directory ends inside an entry");
        const unsigned char* name = h + 46;
        zip_member m;
        m.name.assign(reinterpret_cast<const char*>(name), name_len);
        m.flags = static_cast<std::uint16_t>(le(h + 8, 2));
        m.method = static_cast<std::uint16_t>(le(h + 10, 2));
        m.crc = static_cast<std::uint32_t>(le(h + 16, 4));
        m.compressed = le(h + 20, 4);
        m.uncompressed = le(h + 24, 4);
        m.local_offset = le(h + 42, 4);
        const bool disk_in_extra = le(h + 34, 2) == 0xFFFF;
        if (m.compressed == u32_max || m.uncompressed == u32_max || m.local_offset == u32_max || disk_in_extra)
            read_zip64_extra(path, m, name + name_len, extra_len);
        out.members.push_back(std::move(m));
        at += 46 + name_len + extra_len + comment_len;
    }
    return out;
}

std::string array_name(const std::string& member) {
    if (member.size() > 4 && member.compare(member.size() - 4, 4, ".npy") == 0) return member.substr(0, member.size() - 4);
    return member;
}

// Where a member's (compressed) bytes start, from its local header; checks that the header
// names the member as the directory does and that its bytes lie before the next member's header
// and the central directory (overlapping members are read differently by different tools).
std::uint64_t member_data_offset(const file_handle& file, const zip_directory& dir, const zip_member& m,
                                 const std::string& where) {
    unsigned char h[30];
    if (m.local_offset >= dir.offset || dir.offset - m.local_offset < 30)
        fail(where, "its local header lies outside the archive's members (the archive is damaged)");
    file.read_at(m.local_offset, h, 30);
    if (std::memcmp(h, "PK\x03\x04", 4) != 0) fail(where, "its local header has a bad signature (the archive is damaged)");
    const std::size_t name_len = le(h + 26, 2);
    std::string name(name_len, '\0');
    if (name_len > 0) file.read_at(m.local_offset + 30, name.data(), name_len);
    if (name != m.name)
        fail(where, "its local header names it '" + printable(name, 60) +
                        "' (zip readers disagree on which name counts; the archive is damaged)");
    const std::uint64_t data = m.local_offset + 30 + name_len + le(h + 28, 2);
    std::uint64_t limit = dir.offset;  // the next local header, or the central directory
    for (const zip_member& other : dir.members)
        if (other.local_offset > m.local_offset && other.local_offset < limit) limit = other.local_offset;
    if (data <= limit && m.compressed <= limit - data) return data;
    const std::string bytes = "its " + std::to_string(m.compressed) + " bytes at offset " + std::to_string(data);
    if (limit < dir.offset)
        fail(where, bytes + " overlap another member (at offset " + std::to_string(limit) + "); the archive is damaged");
    if (data <= file.size() && m.compressed <= file.size() - data)
        fail(where, bytes + " run into the central directory (the archive is damaged)");
    fail(where, "is truncated: " + bytes + " run past the end of the file (" + std::to_string(file.size()) + " bytes)");
}

// Two members with one array name (two "logits.npy", or "logits" and "logits.npy"): NumPy reads
// one of them and other tools another, so the archive is refused.
void check_unique_names(const std::string& path, const std::vector<zip_member>& members) {
    std::vector<std::size_t> order(members.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto name = [&](std::size_t i) { return array_name(members[i].name); };
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return name(a) < name(b); });
    for (std::size_t i = 1; i < order.size(); ++i)
        if (name(order[i - 1]) == name(order[i])) {
            const std::string& a = members[std::min(order[i - 1], order[i])].name;
            const std::string& b = members[std::max(order[i - 1], order[i])].name;
            fail(path, "is a .npz archive with two members named '" + printable(a, 60) + "'" +
                           (a == b ? "" : " and '" + printable(b, 60) + "'") +
                           " (NumPy reads one, other tools the other; write the archive again with one array of each name)");
        }
}

// A deflated member inflated in order with zlib; finish() checks the end of the stream and
// the CRC-32.
class inflate_stream final : public byte_stream {
public:
    inflate_stream(shared_file file, std::uint64_t data_offset, const zip_member& m, std::string where)
        : file_(std::move(file)), data_offset_(data_offset), member_(m), where_(std::move(where)), input_(1 << 16) {
        if (inflateInit2(&z_, -MAX_WBITS) != Z_OK) fail(where_, "zlib could not start inflating");
    }
    ~inflate_stream() override { inflateEnd(&z_); }
    inflate_stream(const inflate_stream&) = delete;
    inflate_stream& operator=(const inflate_stream&) = delete;

    void read(void* out, std::size_t n) override {
        auto* bytes = static_cast<unsigned char*>(out);
        std::size_t done = 0;
        while (done < n) {
            const std::size_t piece = std::min<std::size_t>(n - done, std::size_t{1} << 30);
            const std::size_t got = inflate_some(bytes + done, piece);
            if (got < piece)
                fail(where_, "is truncated: it inflates to only " + std::to_string(produced_ + got) +
                                 " bytes but its directory entry declares " + std::to_string(member_.uncompressed));
            crc_ = static_cast<std::uint32_t>(crc32_z(crc_, bytes + done, piece));
            produced_ += piece;
            done += piece;
        }
    }

    void finish() override {
        unsigned char extra = 0;
        if (inflate_some(&extra, 1) != 0)
            fail(where_, "inflates to more than the " + std::to_string(member_.uncompressed) +
                             " bytes its directory entry declares (the archive is damaged)");
        if (crc_ != member_.crc) fail(where_, "fails its CRC-32 check: the archive is damaged");
    }

    // Back to the first byte: a deflate stream can only be decoded from its start.
    void restart() {
        inflateReset(&z_);
        z_.avail_in = 0;
        consumed_ = 0;
        produced_ = 0;
        crc_ = 0;
        ended_ = false;
    }

private:
    // Up to n bytes; fewer only where the stream ends.
    std::size_t inflate_some(unsigned char* out, std::size_t n) {
        z_.next_out = out;
        z_.avail_out = static_cast<uInt>(n);
        while (z_.avail_out > 0 && !ended_) {
            if (z_.avail_in == 0) {
                const std::size_t take = static_cast<std::size_t>(
                    std::min<std::uint64_t>(input_.size(), member_.compressed - consumed_));
                if (take == 0)
                    fail(where_, "its deflate stream is truncated (it ends after " + std::to_string(produced_ + n - z_.avail_out) +
                                     " of " + std::to_string(member_.uncompressed) + " bytes)");
                file_->read_at(data_offset_ + consumed_, input_.data(), take);
                consumed_ += take;
                z_.next_in = input_.data();
                z_.avail_in = static_cast<uInt>(take);
            }
            const int status = inflate(&z_, Z_NO_FLUSH);
            if (status == Z_STREAM_END) ended_ = true;
            else if (status == Z_MEM_ERROR) throw std::bad_alloc();
            else if (status != Z_OK && !(status == Z_BUF_ERROR && z_.avail_in == 0))
                fail(where_, std::string("its deflate stream is corrupt (zlib: ") + (z_.msg ? z_.msg : "error " + std::to_string(status)) + ")");
        }
        return n - z_.avail_out;
    }

    shared_file file_;
    std::uint64_t data_offset_;
    zip_member member_;
    std::string where_;
    z_stream z_{};
    std::vector<unsigned char> input_;
    std::uint64_t consumed_ = 0, produced_ = 0;
    std::uint32_t crc_ = 0;
    bool ended_ = false;
};

// A deflated C-order member: rows come out of the inflater in order. Reading rows before the
// current position restarts the inflate from the member's start (correct, but costs a pass).
class inflate_reader final : public matrix_reader {
public:
    struct layout {
        shared_file file;
        std::uint64_t data_offset = 0;  // of the compressed bytes in the archive
        zip_member member;
        std::string where;
        std::uint64_t header_bytes = 0;  // the .npy header inside the member
        element_type element;
    };

    inflate_reader(const std::string& path, layout l, std::unique_ptr<inflate_stream> stream_after_header,
                   std::size_t rows, std::size_t cols)
        : layout_(std::move(l)), stream_(std::move(stream_after_header)) {
        path_ = path;
        rows_ = rows;
        cols_ = cols;
        type_ = *float_dtype(layout_.element);
        if (!stream_) rewind();
    }

    bool random_access() const noexcept override { return false; }

    logits_view read(std::size_t first, std::size_t count) override {
        if (first > rows_ || count > rows_ - first)
            fail(layout_.where, "rows " + std::to_string(first) + " to " + std::to_string(first + count) +
                                    " were asked for, but the array has " + std::to_string(rows_) + " rows");
        const std::size_t row_bytes = cols_ * layout_.element.size;
        if (first < next_row_) rewind();
        if (first > next_row_) stream_->skip(static_cast<std::uint64_t>(first - next_row_) * row_bytes);
        const std::size_t bytes = count * row_bytes;
        buffer_.resize((bytes + sizeof(double) - 1) / sizeof(double));
        stream_->read(buffer_.data(), bytes);
        next_row_ = first + count;
        if (next_row_ == rows_ && !finished_) {
            stream_->finish();
            finished_ = true;
        }
        if (layout_.element.swap) swap_bytes(buffer_.data(), count * cols_, layout_.element.size);
        switch (type_) {
            case dtype::float64: return logits_view(buffer_.data(), count, cols_);
            case dtype::float32: return logits_view(reinterpret_cast<const float*>(buffer_.data()), count, cols_);
            default: return logits_view(reinterpret_cast<const std::uint16_t*>(buffer_.data()), type_, count, cols_);
        }
    }

    std::unique_ptr<matrix_reader> clone() const override {
        return std::make_unique<inflate_reader>(path_, layout_, nullptr, rows_, cols_);
    }

private:
    void rewind() {
        if (!stream_) stream_ = std::make_unique<inflate_stream>(layout_.file, layout_.data_offset, layout_.member, layout_.where);
        else stream_->restart();
        stream_->skip(layout_.header_bytes);
        next_row_ = 0;
        finished_ = false;
    }

    layout layout_;
    std::unique_ptr<inflate_stream> stream_;
    std::size_t next_row_ = 0;
    bool finished_ = false;
    std::vector<double> buffer_;
};

// One member of an opened archive, ready to read: its stream positioned after the .npy header.
struct opened_member {
    std::string where;
    zip_member member;
    std::uint64_t data_offset = 0;
    std::unique_ptr<byte_stream> stream;
    npy_header header;
};

opened_member open_member(const shared_file& file, const read_options& opts, const std::string& default_name) {
    const std::string& path = file->path();
    const zip_directory dir = read_directory(*file);
    check_unique_names(path, dir.members);
    std::vector<std::string> names;
    for (const auto& m : dir.members) names.push_back(array_name(m.name));
    const zip_member& m = dir.members[choose_member(path, names, opts.key, default_name, "a .npz archive")];
    opened_member out;
    out.where = path + ": member '" + printable(m.name, 200) + "'";
    out.member = m;
    if (m.flags & 1) fail(out.where, "is encrypted");
    if (m.method != 0 && m.method != 8)
        fail(out.where, "uses zip compression method " + std::to_string(m.method) +
                            "; only stored (numpy.savez) and deflated (numpy.savez_compressed) members can be read");
    out.data_offset = member_data_offset(*file, dir, m, out.where);
    if (m.method == 0) {
        if (m.compressed != m.uncompressed)
            fail(out.where, "is stored with a compressed size (" + std::to_string(m.compressed) +
                                ") unlike its size (" + std::to_string(m.uncompressed) + "); the archive is damaged");
        out.stream = std::make_unique<file_stream>(file, out.data_offset, m.compressed, out.where, m.crc);
    } else {
        // Deflate cannot expand data by more than about 1032:1; a larger claim is a damaged header.
        if (m.uncompressed / 1032 > m.compressed + 64)
            fail(out.where, "declares " + std::to_string(m.uncompressed) + " bytes, more than deflate can produce from its " +
                                std::to_string(m.compressed) + " compressed bytes (the archive is damaged)");
        out.stream = std::make_unique<inflate_stream>(file, out.data_offset, m, out.where);
    }
    out.header = read_npy_header(out.where, *out.stream, m.uncompressed);
    return out;
}

}  // namespace

std::uint32_t crc32_update(std::uint32_t crc, const void* bytes, std::size_t n) {
    return static_cast<std::uint32_t>(crc32_z(crc, static_cast<const Bytef*>(bytes), n));
}

std::unique_ptr<matrix_reader> open_npz_matrix(shared_file file, const read_options& opts) {
    const std::string path = file->path();
    opened_member om = open_member(file, opts, "logits");
    const npy_header& h = om.header;
    const element_type e = npy_matrix_element(om.where, h);
    check_matrix_shape(om.where, h.shape);
    check_npy_data_size(om.where, h, e.size, om.member.uncompressed);
    dense_array a;
    a.where = om.where;
    a.element = e;
    a.rows = h.shape[0];
    a.cols = h.shape[1];
    a.fortran = h.fortran;
    if (om.member.method == 0) {
        a.file = file;
        a.offset = om.data_offset + h.data_offset;
        if (!h.fortran) {
            a.member_crc = om.member.crc;
            a.header_crc = static_cast<file_stream&>(*om.stream).running_crc();
        }
        return make_dense_reader(path, std::move(a));
    }
    if (!h.fortran) {
        inflate_reader::layout l{file, om.data_offset, om.member, om.where, h.data_offset, e};
        std::unique_ptr<inflate_stream> stream(static_cast<inflate_stream*>(om.stream.release()));
        return std::make_unique<inflate_reader>(path, std::move(l), std::move(stream), static_cast<std::size_t>(a.rows),
                                                static_cast<std::size_t>(a.cols));
    }
    // A deflated column-major member cannot be read a row chunk at a time: inflate it once into
    // an anonymous temporary file, then read that like a stored member. The file is bounded by
    // the member's compressed size, so a small archive cannot fill the disk.
    const std::uint64_t data_bytes = om.member.uncompressed - h.data_offset;
    const std::uint64_t compressed = om.member.compressed;
    const std::uint64_t most = std::max(npz_fortran_inflate_floor,
                                        compressed > std::numeric_limits<std::uint64_t>::max() / npz_fortran_inflate_ratio
                                            ? std::numeric_limits<std::uint64_t>::max()
                                            : compressed * npz_fortran_inflate_ratio);
    if (data_bytes > most)
        fail(om.where, "is a deflated Fortran-order array of " + std::to_string(data_bytes) + " bytes, more than the " +
                           std::to_string(most) + " mano inflates into a temporary file for it (" +
                           std::to_string(npz_fortran_inflate_ratio) + " times its compressed size, at least " +
                           std::to_string(npz_fortran_inflate_floor >> 20) +
                           " MiB); save it in C order (np.ascontiguousarray) or uncompressed (np.savez)");
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> temporary(std::tmpfile(), &std::fclose);
    if (!temporary) fail(om.where, std::string("cannot create a temporary file to inflate it into: ") + std::strerror(errno));
    std::vector<unsigned char> chunk(std::size_t{1} << 20);
    for (std::uint64_t done = 0; done < data_bytes;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), data_bytes - done));
        om.stream->read(chunk.data(), n);
        if (std::fwrite(chunk.data(), 1, n, temporary.get()) != n)
            fail(om.where, std::string("cannot write the temporary file it is inflated into: ") + std::strerror(errno));
        done += n;
    }
    om.stream->finish();
    auto inflated = std::make_shared<file_handle>(temporary.release(), om.where + " (inflated)");
    a.file = inflated;
    a.offset = 0;
    return make_dense_reader(path, std::move(a));
}

std::vector<std::int64_t> read_npz_labels(shared_file file, const read_options& opts) {
    opened_member om = open_member(file, opts, "labels");
    const element_type e = npy_label_element(om.where, om.header);
    const std::uint64_t n = label_count(om.where, om.header.shape);
    check_npy_data_size(om.where, om.header, e.size, om.member.uncompressed);
    check_label_rows(om.where, n, opts);
    return read_label_stream(om.where, e, n, *om.stream);
}

}  // namespace detail
}  // namespace io
}  // namespace mano
