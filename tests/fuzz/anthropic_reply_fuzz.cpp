// The Anthropic Messages reply parser (content blocks, tool_use input, usage) and the error-body reader.
#include "fuzz/fuzz_support.hpp"
#include "fuzz/llm_reply.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  evoteam::fuzz::parse_reply_every_way(evoteam::fuzz::as_text(data, size), evoteam::parse_anthropic_reply, "anthropic");
  return 0;
}
