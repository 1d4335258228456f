#pragma once
// Small text helpers shared by every module: lists joined with a separator, fixed-point numbers, durations a
// person reads at a glance, and whitespace trimming. Output formats here are part of what the CLI, the journal's
// reasons and the agents' tool results print, so changing one changes texts that tests and users read.
#include <concepts>
#include <ranges>
#include <string>
#include <string_view>

namespace evoteam {

// The items of `items` with `separator` between each two: the names {"a", "b", "c"} joined with ", " give
// "a, b, c". No items give ""; an empty item still counts, so {"", "b"} joined with "," gives ",b".
// clang-format off (clang-format 14 cannot lay out requires-clauses)
template <std::ranges::input_range Range>
requires std::convertible_to<std::ranges::range_reference_t<Range>, std::string_view> std::string join(
    Range&& items, std::string_view separator) {
  // clang-format on
  std::string text;
  bool first = true;
  for (auto&& item : items) {
    if (!first) text += separator;
    text += std::string_view(item);
    first = false;
  }
  return text;
}

// The same with each item written by `to_text` first, for lists of things that are not strings:
// join(ranks, ", ", [](int rank) { return std::to_string(rank); }).
// clang-format off
template <std::ranges::input_range Range, typename ToText>
  requires std::invocable<ToText&, std::ranges::range_reference_t<Range>>
std::string join(Range&& items, std::string_view separator, ToText to_text) {
  // clang-format on
  std::string text;
  bool first = true;
  for (auto&& item : items) {
    if (!first) text += separator;
    text += to_text(item);
    first = false;
  }
  return text;
}

// `value` with exactly `digits` digits after the point, rounded as printf's "%.*f" rounds:
// fixed(2.0 / 3, 3) == "0.667", fixed(-1.5, 0) == "-2", fixed(-0.001, 2) == "-0.00". Not-a-number and
// infinities print as printf prints them ("nan", "-nan", "inf", "-inf"), so a broken figure stays visible
// rather than turning into a plausible number. `digits` must not be negative.
std::string fixed(double value, int digits);

// A duration in the unit that keeps its digits readable: "12.50 us" below a millisecond, "1.234 ms" below a
// second, "2.000 s" from a second up. Negative values print in microseconds; not-a-number in seconds ("nan s").
std::string human_duration(double seconds);

// The text before the first newline (all of it when there is none).
std::string first_line(std::string_view text);

// `text` without the spaces, tabs, carriage returns and newlines at either end; whitespace-only text gives "".
std::string trim(std::string_view text);

}  // namespace evoteam
