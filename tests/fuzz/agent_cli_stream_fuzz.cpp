// The readers of the coding-agent CLIs' event streams (Claude Code, Codex, a command template): a CLI's output is
// whatever the CLI, or a model steering it, prints. Each input is a stream, one line per line, read by all three
// readers in turn; no line may throw, and what they charge must never decrease.
#include <evoteam/agent/agent_cli.hpp>

#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = evoteam::fuzz::as_text(data, size);
  for (const char* member : {"claude-code", "codex", "mycli {prompt}"}) {
    std::unique_ptr<evoteam::AgentCliStream> stream = evoteam::agent_cli_for(member).stream();
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      // A stream reader answers every line; it never throws, whatever the line holds.
      const evoteam::AgentCliEvent event = stream->read(text.substr(start, end - start));
      if (event.reported_cost_usd && !(*event.reported_cost_usd == *event.reported_cost_usd)) std::abort();  // NaN
      start = end + 1;
    }
  }
  return 0;
}
