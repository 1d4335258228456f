// Text helpers shared by every module (see text.hpp for the formats).
#include <evoteam/core/text.hpp>

#include <cstdio>

#include <evoteam/core/error.hpp>

namespace evoteam {

std::string fixed(double value, int digits) {
  EVOTEAM_CHECK(digits >= 0, "fixed() needs a digit count of at least 0, got " + std::to_string(digits));
  // Measured once, so a large value is never cut short by a fixed buffer.
  const int size = std::snprintf(nullptr, 0, "%.*f", digits, value);
  std::string text(static_cast<std::size_t>(size), '\0');
  std::snprintf(text.data(), text.size() + 1, "%.*f", digits, value);
  return text;
}

std::string human_duration(double seconds) {
  if (seconds < 1e-3) return fixed(seconds * 1e6, 2) + " us";
  if (seconds < 1.0) return fixed(seconds * 1e3, 3) + " ms";
  return fixed(seconds, 3) + " s";
}

std::string trim(std::string_view text) {
  constexpr std::string_view k_whitespace = " \t\r\n";
  const std::size_t begin = text.find_first_not_of(k_whitespace);
  if (begin == std::string_view::npos) return "";
  const std::size_t end = text.find_last_not_of(k_whitespace);
  return std::string(text.substr(begin, end - begin + 1));
}

std::string first_line(std::string_view text) { return std::string(text.substr(0, text.find('\n'))); }

}  // namespace evoteam
