// The OpenAI Chat Completions reply parser (choices, tool calls whose arguments are JSON inside a string, usage)
// and the error-body reader.
#include "fuzz/fuzz_support.hpp"
#include "fuzz/llm_reply.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  evoteam::fuzz::parse_reply_every_way(evoteam::fuzz::as_text(data, size), evoteam::parse_openai_reply, "openai");
  return 0;
}
