#include "guarded_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

namespace evoteam_harness {
namespace {

constexpr unsigned char k_guard_before = 0xA5;
constexpr unsigned char k_guard_after = 0x5A;
constexpr int k_max_regions = 512;
constexpr unsigned k_slots = 16;
constexpr std::size_t k_huge_page = 2u << 20;
constexpr std::size_t k_huge_page_min_payload = 256u << 10;

struct Region {
  std::atomic<std::uintptr_t> map_begin{0};
  std::uintptr_t map_end = 0;
  std::uintptr_t inner_begin = 0;
  std::uintptr_t inner_end = 0;
  std::uintptr_t payload_begin = 0;
  std::uintptr_t payload_end = 0;
  const char* name = nullptr;
  bool is_output = false;
};

Region g_regions[k_max_regions];

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t round_up(std::size_t value, std::size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// Guards are checked after every call, and a huge-page layout makes the leading one up to 2 MiB: compare whole
// chunks with memcmp against a pattern and look at single bytes only inside a chunk that differs.
constexpr std::size_t k_chunk = 4096;

struct GuardPatterns {
  unsigned char before[k_chunk];
  unsigned char after[k_chunk];
  GuardPatterns() {
    std::memset(before, k_guard_before, k_chunk);
    std::memset(after, k_guard_after, k_chunk);
  }
};

const unsigned char* pattern_of(unsigned char value) {
  static const GuardPatterns patterns;
  return value == k_guard_before ? patterns.before : patterns.after;
}

// First byte in [begin, end) that is not `value`, or null.
const unsigned char* first_differing(const unsigned char* begin, const unsigned char* end, unsigned char value) {
  const unsigned char* pattern = pattern_of(value);
  for (const unsigned char* chunk = begin; chunk < end; chunk += k_chunk) {
    const std::size_t size = std::min<std::size_t>(k_chunk, static_cast<std::size_t>(end - chunk));
    if (std::memcmp(chunk, pattern, size) == 0) continue;
    for (const unsigned char* byte = chunk; byte < chunk + size; ++byte)
      if (*byte != value) return byte;
  }
  return nullptr;
}

// Last byte in [begin, end) that is not `value`, or null.
const unsigned char* last_differing(const unsigned char* begin, const unsigned char* end, unsigned char value) {
  const unsigned char* pattern = pattern_of(value);
  for (const unsigned char* chunk_end = end; chunk_end > begin;) {
    const std::size_t size = std::min<std::size_t>(k_chunk, static_cast<std::size_t>(chunk_end - begin));
    const unsigned char* chunk = chunk_end - size;
    if (std::memcmp(chunk, pattern, size) != 0)
      for (const unsigned char* byte = chunk_end; byte-- > chunk;)
        if (*byte != value) return byte;
    chunk_end = chunk;
  }
  return nullptr;
}

}  // namespace

GuardedBuffer::GuardedBuffer(std::size_t bytes, std::size_t guard_bytes, const char* name, bool is_output,
                             unsigned slot)
    : m_bytes(bytes) {
  const std::size_t page = page_size();
  const std::size_t guard = round_up(guard_bytes < 64 ? 64 : guard_bytes, 64);
  const std::size_t offset = static_cast<std::size_t>(slot % k_slots) * 64;
  std::size_t inner = round_up(guard + round_up(bytes, 64) + offset + guard, page);
  // Large buffers live in 2 MiB-aligned transparent huge pages where the kernel offers them: a cache indexed by
  // physical address then sees the same layout in every process, instead of whatever 4 KiB frames this one got,
  // so timings of a stride-sensitive kernel do not shift from one evaluation to the next.
  const bool huge = bytes >= k_huge_page_min_payload;
  if (huge) inner = round_up(inner, k_huge_page);
  const std::size_t slack = huge ? k_huge_page : 0;
  m_map_bytes = inner + 2 * page;
  void* map = mmap(nullptr, m_map_bytes + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw std::bad_alloc();
  m_map = static_cast<unsigned char*>(map);
  if (huge) {
    // Keep the part whose inner region starts on a huge-page boundary; return the slack around it.
    // Aligning an address is integer arithmetic on purpose.
    // NOLINTBEGIN(performance-no-int-to-ptr)
    auto* aligned =
        reinterpret_cast<unsigned char*>(round_up(reinterpret_cast<std::uintptr_t>(m_map) + page, k_huge_page)) - page;
    // NOLINTEND(performance-no-int-to-ptr)
    const std::size_t before = static_cast<std::size_t>(aligned - m_map);
    if (before > 0) munmap(m_map, before);
    if (slack - before > 0) munmap(aligned + m_map_bytes, slack - before);
    m_map = aligned;
    madvise(m_map + page, inner, MADV_HUGEPAGE);
  }
  mprotect(m_map, page, PROT_NONE);
  mprotect(m_map + page + inner, page, PROT_NONE);
  m_inner_begin = m_map + page;
  m_inner_end = m_inner_begin + inner;
  // Payload end sits `guard + offset` bytes before the trailing page; the rest in front is the leading guard.
  const std::size_t payload_start = (inner - guard - offset - bytes) / 64 * 64;
  m_payload = m_inner_begin + payload_start;
  std::memset(m_inner_begin, k_guard_before, payload_start);
  std::memset(m_payload + bytes, k_guard_after, static_cast<std::size_t>(m_inner_end - (m_payload + bytes)));
  for (int i = 0; i < k_max_regions; ++i) {
    std::uintptr_t expected = 0;
    Region& region = g_regions[i];
    if (region.map_begin.load() != 0) continue;
    region.map_end = reinterpret_cast<std::uintptr_t>(m_map + m_map_bytes);
    region.inner_begin = reinterpret_cast<std::uintptr_t>(m_inner_begin);
    region.inner_end = reinterpret_cast<std::uintptr_t>(m_inner_end);
    region.payload_begin = reinterpret_cast<std::uintptr_t>(m_payload);
    region.payload_end = reinterpret_cast<std::uintptr_t>(m_payload + bytes);
    region.name = name;
    region.is_output = is_output;
    if (region.map_begin.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(m_map))) {
      m_slot = i;
      break;
    }
  }
}

GuardedBuffer::~GuardedBuffer() { release(); }

GuardedBuffer::GuardedBuffer(GuardedBuffer&& other) noexcept { *this = std::move(other); }

GuardedBuffer& GuardedBuffer::operator=(GuardedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    m_map = other.m_map;
    m_map_bytes = other.m_map_bytes;
    m_payload = other.m_payload;
    m_bytes = other.m_bytes;
    m_inner_begin = other.m_inner_begin;
    m_inner_end = other.m_inner_end;
    m_slot = other.m_slot;
    other.m_map = nullptr;
    other.m_slot = -1;
  }
  return *this;
}

void GuardedBuffer::release() {
  if (m_slot >= 0) g_regions[m_slot].map_begin.store(0);
  if (m_map != nullptr) munmap(m_map, m_map_bytes);
  m_map = nullptr;
  m_slot = -1;
}

void GuardedBuffer::set_read_only(bool read_only) const {
  if (m_map == nullptr) return;
  mprotect(m_inner_begin, static_cast<std::size_t>(m_inner_end - m_inner_begin),
           read_only ? PROT_READ : PROT_READ | PROT_WRITE);
}

GuardDamage GuardedBuffer::check_guards() const {
  GuardDamage damage;
  // Scan outward from the payload so the reported offset is the closest corrupted byte.
  const unsigned char* before = last_differing(m_inner_begin, m_payload, k_guard_before);
  if (before != nullptr) return {true, false, static_cast<std::int64_t>(m_payload - 1 - before)};
  const unsigned char* after = first_differing(m_payload + m_bytes, m_inner_end, k_guard_after);
  if (after != nullptr) return {true, true, static_cast<std::int64_t>(after - (m_payload + m_bytes))};
  return damage;
}

AddressInfo classify_address(std::uintptr_t address) {
  AddressInfo info;
  for (const Region& region : g_regions) {
    const std::uintptr_t begin = region.map_begin.load();
    if (begin == 0 || address < begin || address >= region.map_end) continue;
    info.tensor = region.name;
    info.is_output = region.is_output;
    if (address < region.inner_begin)
      info.region = "page_before";
    else if (address >= region.inner_end)
      info.region = "page_after";
    else if (address < region.payload_begin)
      info.region = "guard_before";
    else if (address >= region.payload_end)
      info.region = "guard_after";
    else
      info.region = "payload";
    return info;
  }
  return info;
}

}  // namespace evoteam_harness
