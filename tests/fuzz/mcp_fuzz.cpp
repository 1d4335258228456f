// `evoteam mcp`'s server: input is raw bytes on stdin (lines of JSON-RPC, or not; UTF-8, or not). Every answer must be
// one line of valid JSON, and the server must read to the end: a line that stops it is a finding. The tools answer
// with text holding the input's own bytes, so a reply carrying bytes that are not UTF-8 is reached too.
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <evoteam/mcp/mcp_server.hpp>

#include "fuzz/fuzz_support.hpp"

namespace {

class RawTools : public evoteam::McpToolService {
 public:
  explicit RawTools(std::string raw) : m_raw(std::move(raw)) {}
  std::vector<evoteam::McpTool> tools() override {
    return {{"echo", "says it back", {{"type", "object"}, {"properties", nlohmann::json::object()}}}};
  }
  evoteam::McpToolResult call(const std::string& name, const nlohmann::json& arguments) override {
    // The input's bytes as a tool's output (a compiler's log) may carry them.
    return {name + " " + arguments.dump() + " " + m_raw.substr(0, 64), arguments.contains("fail")};
  }
  std::string instructions() override { return "fuzz tools"; }

 private:
  std::string m_raw;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = evoteam::fuzz::as_text(data, size);
  RawTools tools(text);
  std::istringstream in(text + "\n{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}\n");
  std::ostringstream out;
  evoteam::fuzz::expect_clean_outcome([&] { evoteam::serve_mcp(in, out, tools, "fuzz"); });
  // Every answer is JSON, and the ping after the input is answered: the server kept serving.
  std::istringstream replies(out.str());
  bool answered_last = false;
  for (std::string line; std::getline(replies, line);) {
    const nlohmann::json reply = nlohmann::json::parse(line, nullptr, false);
    if (reply.is_discarded()) {
      std::fprintf(stderr, "fuzz: an answer that is not JSON: %s\n", line.c_str());
      std::abort();
    }
    answered_last = answered_last || (reply.is_object() && reply.contains("id") && reply["id"] == "last");
  }
  if (!answered_last) {
    std::fprintf(stderr, "fuzz: the server stopped before the last line\n");
    std::abort();
  }
  return 0;
}
