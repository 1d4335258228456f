// The host harness's stack wipe (kernels/common/host/stack_scrub.cpp): what a call leaves 2 MiB down the stack is
// gone before the next call from the same depth, and without the wipe it would still be there.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "kernels/common/host/stack_scrub.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EVOTEAM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define EVOTEAM_SANITIZED 1
#endif
#endif
#ifndef EVOTEAM_SANITIZED
#define EVOTEAM_SANITIZED 0
#endif

namespace {

constexpr std::uint64_t k_marker = 0x5ca1ab1e0ddba11ull;

// Like a candidate with a memo at the bottom of a 2 MiB frame: returns what it found there, then leaves the marker.
__attribute__((noinline)) std::uint64_t find_then_leave_marker() {
  auto* deep = static_cast<volatile std::uint64_t*>(__builtin_alloca(2u << 20));
  __asm__ __volatile__("" : "+r"(deep));  // what lies there is whatever an earlier call left: the point of the test
  const std::uint64_t found = deep[0];
  deep[0] = k_marker;
  __asm__ __volatile__("" : : "r"(deep) : "memory");
  return found;
}

// The harness's order: the wipe, then the call, both from this frame.
__attribute__((noinline)) std::uint64_t call(bool scrub) {
  if (scrub) evoteam_harness::scrub_stack();
  return find_then_leave_marker();
}

TEST(StackScrub, WhatACallLeftDeepOnTheStackIsGoneBeforeTheNextCall) {
#if EVOTEAM_SANITIZED
  // The harness is built without sanitizers; theirs lay frames and allocas out their own way.
  GTEST_SKIP() << "the stack layout under test is the uninstrumented harness's";
#endif
  ASSERT_TRUE(evoteam_harness::prepare_stack_scrub());
  call(false);
  // Without the wipe the marker survives: the check below can fail.
  EXPECT_EQ(call(false), k_marker);
  EXPECT_NE(call(true), k_marker);
  EXPECT_NE(call(true), k_marker);
}

}  // namespace
