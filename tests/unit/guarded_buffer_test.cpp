// The host harness's guarded buffers: guard damage found on either side with the offset of the closest
// corrupted byte, for small buffers and for the huge-page layout of large ones.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "kernels/common/host/guarded_buffer.hpp"

namespace evoteam_harness {
namespace {

constexpr std::size_t k_guard_bytes = 4096;

class GuardedBufferSizes : public ::testing::TestWithParam<std::size_t> {};

TEST_P(GuardedBufferSizes, IntactGuardsReportNoDamage) {
  GuardedBuffer buffer(GetParam(), k_guard_bytes, "C", true, 3);
  std::memset(buffer.data(), 0x11, buffer.bytes());  // the payload itself is the candidate's to write
  EXPECT_FALSE(buffer.check_guards().damaged);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % 64, 0u);
}

TEST_P(GuardedBufferSizes, AWriteAfterThePayloadIsFoundWithItsOffset) {
  for (std::size_t offset : {std::size_t{0}, std::size_t{5}, std::size_t{4095}}) {
    GuardedBuffer buffer(GetParam(), k_guard_bytes, "C", true, 5);
    static_cast<unsigned char*>(buffer.data())[buffer.bytes() + offset] = 0;
    const GuardDamage damage = buffer.check_guards();
    EXPECT_TRUE(damage.damaged) << offset;
    EXPECT_TRUE(damage.after) << offset;
    EXPECT_EQ(damage.offset, static_cast<std::int64_t>(offset));
  }
}

TEST_P(GuardedBufferSizes, AWriteBeforeThePayloadIsFoundWithTheClosestOffset) {
  GuardedBuffer buffer(GetParam(), k_guard_bytes, "C", true, 7);
  unsigned char* payload = static_cast<unsigned char*>(buffer.data());
  payload[-4000] = 0;  // far, in another chunk of the scan
  payload[-9] = 0;     // close: the one reported
  const GuardDamage damage = buffer.check_guards();
  EXPECT_TRUE(damage.damaged);
  EXPECT_FALSE(damage.after);
  EXPECT_EQ(damage.offset, 8);
}

TEST_P(GuardedBufferSizes, TheFarthestGuardByteIsCheckedToo) {
  GuardedBuffer buffer(GetParam(), k_guard_bytes, "C", true, 0);
  unsigned char* payload = static_cast<unsigned char*>(buffer.data());
  payload[-static_cast<std::ptrdiff_t>(k_guard_bytes)] = 0;
  EXPECT_TRUE(buffer.check_guards().damaged);
}

// 1000 bytes and 300 KB take the plain layout and the huge-page one (at least 256 KiB).
INSTANTIATE_TEST_SUITE_P(Host, GuardedBufferSizes,
                         ::testing::Values(std::size_t{1000}, std::size_t{300} * 1000, std::size_t{3} << 20));

TEST(GuardedBufferLayout, LargeBuffersStartTheirGuardedRegionOnAHugePageBoundary) {
  GuardedBuffer buffer(std::size_t{1} << 20, k_guard_bytes, "C", true, 0);
  // The payload ends guard + slot bytes before the end of a 2 MiB-aligned region of whole huge pages.
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(buffer.data()) + buffer.bytes() + k_guard_bytes;
  EXPECT_EQ(end % (std::uintptr_t{2} << 20), 0u);
}

}  // namespace
}  // namespace evoteam_harness
