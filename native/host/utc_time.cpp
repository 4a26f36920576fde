#include "host/utc_time.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <regex>

#include <mano/mano.hpp>

namespace mano {
namespace history {

namespace {

constexpr std::int64_t day_seconds = 86400;

bool leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in(std::int64_t year, int month) {
    static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && leap(year) ? 29 : days[month - 1];
}

// Days since 1970-01-01 of a date of the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil), and back.
std::int64_t days_from_civil(std::int64_t y, int m, int d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;
    const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

std::string format(std::int64_t seconds) {
    std::int64_t days = seconds / day_seconds, rest = seconds % day_seconds;
    if (rest < 0) rest += day_seconds, days -= 1;
    const std::int64_t z = days + 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
    const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
    const std::int64_t y = yoe + era * 400 + (m <= 2);
    char text[32];
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02dZ", static_cast<int>(y), m, d, static_cast<int>(rest / 3600),
                  static_cast<int>(rest / 60 % 60), static_cast<int>(rest % 60));
    return text;
}

const std::int64_t first_second = days_from_civil(1, 1, 1) * day_seconds;
const std::int64_t last_second = days_from_civil(9999, 12, 31) * day_seconds + day_seconds - 1;

}  // namespace

std::string utc_time(const std::string& text, const std::string& what) {
    static const std::regex iso(
        R"((\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?)");
    std::smatch m;
    const auto bad = [&](const std::string& why) {
        return error(what + " '" + printable(text, 80) + "': " + why +
                     "; give an ISO 8601 time such as 2026-11-27, 2026-11-27T06:00:00Z or 2026-11-27T08:00+02:00");
    };
    if (text.size() > 64 || !std::regex_match(text, m, iso)) throw bad("not an ISO 8601 date or time");
    const auto number = [&](int i) { return m[i].matched ? std::stoi(m[i].str()) : 0; };
    const int year = number(1), month = number(2), day = number(3), hour = number(4), minute = number(5), second = number(6);
    if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59)
        throw bad("a field is out of range (years 1 to 9999)");
    if (day > days_in(year, month)) throw bad("no such day");
    std::int64_t t = days_from_civil(year, month, day) * day_seconds + hour * 3600 + minute * 60 + second;
    if (m[7].matched && m[7].str() != "Z") {
        std::string offset = m[7].str();
        offset.erase(std::remove(offset.begin(), offset.end(), ':'), offset.end());
        const int hours = std::stoi(offset.substr(1, 2)), minutes = std::stoi(offset.substr(3, 2));
        if (hours > 23 || minutes > 59) throw bad("the UTC offset is out of range");
        const std::int64_t seconds = (hours * 60 + minutes) * 60;
        t -= offset[0] == '+' ? seconds : -seconds;
    }
    if (t < first_second || t > last_second) throw bad("in UTC it falls outside the years 1 to 9999");
    return format(t);
}

bool is_utc_time(const std::string& text) {
    // a hand check, not a regex: a report checks every point's time
    static constexpr char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    if (text.size() != sizeof shape - 1) return false;
    for (std::size_t i = 0; i < text.size(); ++i)
        if (shape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(text[i])) : text[i] != shape[i]) return false;
    const auto field = [&](std::size_t at, std::size_t digits) { return std::stoi(text.substr(at, digits)); };
    const int year = field(0, 4), month = field(5, 2), day = field(8, 2);
    return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= days_in(year, month) && field(11, 2) <= 23 &&
           field(14, 2) <= 59 && field(17, 2) <= 59;
}

std::string now_utc() {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    return format(std::chrono::duration_cast<std::chrono::seconds>(now).count());
}

}  // namespace history
}  // namespace mano
