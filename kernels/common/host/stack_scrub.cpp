#include "stack_scrub.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace evoteam_harness {
namespace {

constexpr std::uintptr_t k_max_stack = std::uintptr_t{64} << 20;
// Overwritten byte by byte right below the caller (the pages madvise itself runs on are in here).
constexpr std::size_t k_near_bytes = 64 * 1024;
std::uintptr_t g_stack_low = 0;  // the lowest address the main thread's stack may reach; 0: unknown

std::uintptr_t stack_top() {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return 0;
  char line[512];
  std::uintptr_t top = 0;
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    if (std::strstr(line, "[stack]") == nullptr) continue;
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line, "%lx-%lx", &begin, &end) == 2) top = end;
    break;
  }
  std::fclose(maps);
  return top;
}

}  // namespace

bool prepare_stack_scrub() {
  const std::uintptr_t top = stack_top();
  if (top == 0) return false;
  rlimit limit{};
  if (getrlimit(RLIMIT_STACK, &limit) != 0) return false;
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > k_max_stack) {
    limit.rlim_cur = k_max_stack;
    if (setrlimit(RLIMIT_STACK, &limit) != 0) return false;
  }
  g_stack_low = top - static_cast<std::uintptr_t>(limit.rlim_cur);
  return true;
}

__attribute__((noinline)) void scrub_stack() {
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  // Far below: every page the stack has grown into there goes back to the kernel and reads as zeros when touched
  // again. The madvise call runs on the part overwritten next, which lies above the range it drops.
  const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  const std::uintptr_t far_end = (here - k_near_bytes) & ~(page - 1);
  if (g_stack_low != 0 && far_end > g_stack_low) {
    // Addresses from /proc/self/maps and the stack limit: integer arithmetic on purpose.
    void* low = reinterpret_cast<void*>(g_stack_low);  // NOLINT(performance-no-int-to-ptr)
    madvise(low, far_end - g_stack_low, MADV_DONTNEED);
  }
  // Near: overwritten, at the depth the implementation is about to use.
  volatile unsigned char* near = static_cast<volatile unsigned char*>(__builtin_alloca(k_near_bytes + page));
  std::memset(const_cast<unsigned char*>(near), 0xA5, k_near_bytes + page);
  __asm__ __volatile__("" : : "r"(near) : "memory");
}

}  // namespace evoteam_harness
