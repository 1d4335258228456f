// The shared text helpers: the exact texts they produce, since CLI output, verdict reasons and tool results are
// built from them.
#include <evoteam/core/text.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <evoteam/core/error.hpp>

namespace evoteam {
namespace {

TEST(TextJoin, PutsTheSeparatorBetweenItemsOnly) {
  EXPECT_EQ(join(std::vector<std::string>{"a", "b", "c"}, ", "), "a, b, c");
}

TEST(TextJoin, OfNoItemsIsEmpty) { EXPECT_EQ(join(std::vector<std::string>{}, ", "), ""); }

TEST(TextJoin, OfOneItemIsThatItem) { EXPECT_EQ(join(std::vector<std::string>{"only"}, ", "), "only"); }

TEST(TextJoin, KeepsEmptyItems) { EXPECT_EQ(join(std::vector<std::string>{"", "b", ""}, ","), ",b,"); }

TEST(TextJoin, TakesAnySeparatorIncludingNone) {
  const std::vector<std::string> items{"x", "y"};
  EXPECT_EQ(join(items, "\n- "), "x\n- y");
  EXPECT_EQ(join(items, ""), "xy");
}

TEST(TextJoin, FollowsTheRangesOrder) {
  EXPECT_EQ(join(std::set<std::string>{"b", "a"}, "|"), "a|b");
  const char* names[] = {"first", "second"};
  EXPECT_EQ(join(names, " then "), "first then second");
}

TEST(TextJoin, WritesEachItemWithTheGivenFunction) {
  EXPECT_EQ(join(std::vector<int>{0, 2, -3}, ", ", [](int rank) { return std::to_string(rank); }), "0, 2, -3");
  const std::map<std::string, std::string> params{{"BLOCK", "64"}, {"UNROLL", "4"}};
  EXPECT_EQ(join(params, ",", [](const auto& param) { return param.first + "=" + param.second; }), "BLOCK=64,UNROLL=4");
  EXPECT_EQ(join(std::vector<int>{}, ", ", [](int rank) { return std::to_string(rank); }), "");
}

TEST(TextFixed, RoundsToTheGivenDigits) {
  EXPECT_EQ(fixed(2.0 / 3, 3), "0.667");
  EXPECT_EQ(fixed(1.0, 2), "1.00");
  EXPECT_EQ(fixed(1234.5678, 1), "1234.6");
  EXPECT_EQ(fixed(0.25, 0), "0");  // halfway cases round to even, as printf does
  EXPECT_EQ(fixed(99.6, 0), "100");
}

TEST(TextFixed, KeepsTheSignOfNegativeNumbers) {
  EXPECT_EQ(fixed(-1.5, 0), "-2");
  EXPECT_EQ(fixed(-0.125, 2), "-0.12");
  EXPECT_EQ(fixed(-0.001, 2), "-0.00");  // a small negative value still shows it was negative
}

TEST(TextFixed, PrintsLargeValuesWhole) {
  EXPECT_EQ(fixed(1e40, 0).size(), 41u);
  EXPECT_EQ(fixed(1e20, 2), "100000000000000000000.00");
}

TEST(TextFixed, ShowsNonFiniteValuesAsSuch) {
  EXPECT_EQ(fixed(std::numeric_limits<double>::quiet_NaN(), 2), "nan");
  EXPECT_EQ(fixed(std::numeric_limits<double>::infinity(), 3), "inf");
  EXPECT_EQ(fixed(-std::numeric_limits<double>::infinity(), 0), "-inf");
}

TEST(TextFixed, RejectsANegativeDigitCount) { EXPECT_THROW(fixed(1.0, -1), Error); }

TEST(TextHumanDuration, ChoosesTheUnitByMagnitude) {
  EXPECT_EQ(human_duration(12.5e-6), "12.50 us");
  EXPECT_EQ(human_duration(0.0), "0.00 us");
  EXPECT_EQ(human_duration(1e-3), "1.000 ms");
  EXPECT_EQ(human_duration(0.25), "250.000 ms");
  EXPECT_EQ(human_duration(1.0), "1.000 s");
  EXPECT_EQ(human_duration(3725.5), "3725.500 s");
}

TEST(TextHumanDuration, PrintsNegativeInMicrosecondsAndNanInSeconds) {
  EXPECT_EQ(human_duration(-0.5), "-500000.00 us");
  EXPECT_EQ(human_duration(std::numeric_limits<double>::quiet_NaN()), "nan s");
}

TEST(TextTrim, DropsWhitespaceAtBothEnds) {
  EXPECT_EQ(trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(trim("\n\tkey"), "key");
  EXPECT_EQ(trim("value"), "value");
}

TEST(TextTrim, KeepsWhitespaceInside) { EXPECT_EQ(trim(" a \n b "), "a \n b"); }

TEST(TextTrim, OfWhitespaceOnlyOrEmptyIsEmpty) {
  EXPECT_EQ(trim(" \t\r\n "), "");
  EXPECT_EQ(trim(""), "");
}

TEST(TextTrim, LeavesOtherControlCharacters) { EXPECT_EQ(trim("\va\f"), "\va\f"); }

TEST(TextFirstLine, StopsAtTheFirstNewline) {
  EXPECT_EQ(first_line("gcc 12.2\nCopyright"), "gcc 12.2");
  EXPECT_EQ(first_line("one line"), "one line");
  EXPECT_EQ(first_line("\nsecond"), "");
  EXPECT_EQ(first_line(""), "");
}

}  // namespace
}  // namespace evoteam
