// UTC timestamps for ids, journals and notes.
#include <evoteam/core/timestamp.hpp>

#include <chrono>
#include <ctime>

namespace evoteam {

namespace {

std::tm utc_now(std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  return parts;
}

}  // namespace

std::string utc_compact_timestamp() {
  const std::tm parts = utc_now(std::chrono::system_clock::now());
  char buffer[32];
  const std::size_t n = std::strftime(buffer, sizeof buffer, "%Y%m%dT%H%M%SZ", &parts);
  return std::string(buffer, n);
}

std::string utc_iso_timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::tm parts = utc_now(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char buffer[40];
  const std::size_t n = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &parts);
  char with_millis[48];
  std::snprintf(with_millis, sizeof with_millis, "%.*s.%03dZ", static_cast<int>(n), buffer,
                static_cast<int>(millis < 0 ? millis + 1000 : millis));
  return with_millis;
}

}  // namespace evoteam
