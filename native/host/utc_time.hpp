#pragma once
// Times of a monitoring history (docs/monitor.md): UTC text "YYYY-MM-DDTHH:MM:SSZ" for the years
// 1 to 9999, which sorts as the times do, so the history's order and its reference period are
// those of time.

#include <string>

namespace mano {
namespace history {

// An ISO 8601 time (a date, or a date and time with an optional fraction and Z or +HH:MM offset)
// as UTC "YYYY-MM-DDTHH:MM:SSZ"; throws mano::error naming `what` (the option that gave it) when
// it is not one, or falls outside the years 1 to 9999 in UTC.
std::string utc_time(const std::string& text, const std::string& what);

// Whether `text` is a time as utc_time gives it (a stored time a report may trust to sort).
bool is_utc_time(const std::string& text);

// Now, as utc_time gives it.
std::string now_utc();

}  // namespace history
}  // namespace mano
