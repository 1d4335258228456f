// seconds_since: elapsed steady-clock time in seconds.
#include <evoteam/core/clock.hpp>

#include <gtest/gtest.h>

#include <thread>

namespace evoteam {
namespace {

TEST(Clock, SecondsSinceNowIsAboutZero) {
  const double elapsed = seconds_since(std::chrono::steady_clock::now());
  EXPECT_GE(elapsed, 0.0);
  EXPECT_LT(elapsed, 1.0);
}

TEST(Clock, SecondsSinceCountsElapsedTime) {
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GE(seconds_since(start), 0.020);
}

TEST(Clock, SecondsSinceAPointInTheFutureIsNegative) {
  EXPECT_LT(seconds_since(std::chrono::steady_clock::now() + std::chrono::seconds(10)), -9.0);
}

}  // namespace
}  // namespace evoteam
