#pragma once
// One harness-owned allocation per tensor: its own mmap, laid out as
//   [PROT_NONE page][0xA5 guard >= guard_bytes][payload][0x5A guard >= guard_bytes][PROT_NONE page]
// so small out-of-bounds writes land in the guard bytes (checked after every call) and large ones fault on
// the inaccessible pages. The payload is 64-byte aligned, at one of 16 cache-line slots before the trailing
// guard: the caller gives the tensors of one call different slots, so they never share their address bits
// below 4 KiB (loads of one would wait on stores to another, "4K aliasing", and the timing would depend on where
// the allocator happened to put them), and varies them between allocations so addresses change. Every live buffer is
// registered for the fault handler's address lookup.
#include <cstddef>
#include <cstdint>

// Slot of tensor `tensor` in layout variant `variant`: distinct for the tensors of one call (5 is coprime to 16).
inline unsigned layout_slot(std::size_t tensor, unsigned variant) {
  return static_cast<unsigned>((tensor * 5 + variant) % 16);
}

namespace evoteam_harness {

struct GuardDamage {
  bool damaged = false;
  bool after = false;       // false: before the payload
  std::int64_t offset = 0;  // bytes from the payload boundary (0 = the byte adjacent to it)
};

class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  // `name` must outlive the buffer (it is read from the fault handler). Throws std::bad_alloc on failure.
  GuardedBuffer(std::size_t bytes, std::size_t guard_bytes, const char* name, bool is_output, unsigned slot);
  ~GuardedBuffer();
  GuardedBuffer(GuardedBuffer&& other) noexcept;
  GuardedBuffer& operator=(GuardedBuffer&& other) noexcept;
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  void* data() const { return m_payload; }
  std::size_t bytes() const { return m_bytes; }
  GuardDamage check_guards() const;
  // Payload and guards read-only (an input during the calls: a write faults there and then, even one undone before
  // the call returns) or writable again.
  void set_read_only(bool read_only) const;

 private:
  void release();
  unsigned char* m_map = nullptr;
  std::size_t m_map_bytes = 0;
  unsigned char* m_payload = nullptr;
  std::size_t m_bytes = 0;
  unsigned char* m_inner_begin = nullptr;
  unsigned char* m_inner_end = nullptr;
  int m_slot = -1;
};

// What the fault handler knows about an address. `region` is one of: payload, guard_before, guard_after,
// page_before, page_after; `tensor` is null when the address is in no harness buffer.
struct AddressInfo {
  const char* tensor = nullptr;
  const char* region = "unknown";
  bool is_output = false;
};
AddressInfo classify_address(std::uintptr_t address);  // async-signal-safe

}  // namespace evoteam_harness
