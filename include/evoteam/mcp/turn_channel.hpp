#pragma once
// The path from a coding-agent CLI's tool call back into the daemon's turn. The daemon serves the turn's tools on
// a Unix socket (TurnChannel) and writes a binding file into the member's directory: which run, cycle and role the
// turn is, the socket, a token only this turn knows, and the tools with their schemas. `evoteam mcp --turn FILE`,
// started by the CLI, reads the binding and forwards each call over the socket (TurnChannelClient). So every call
// goes through the daemon's own lab — same evaluator, journal and budgets as a built-in member's — and a call
// after the turn (socket gone) or from another turn (token differs) is a tool error, never a crash.
#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/mcp/mcp_server.hpp>

namespace evoteam {

struct TurnBinding {
  std::string run_id;
  int cycle = 0;
  std::string role;
  std::filesystem::path socket;
  std::string token;
  std::string instructions;
  std::vector<McpTool> tools;

  std::string scope() const;  // "run R, cycle N, role X"
};

// Written atomically, readable by its owner only (the token is the turn's capability).
void write_turn_binding(const std::filesystem::path& path, const TurnBinding& binding);
// Throws InvalidInput naming the file and the field when it is missing or malformed.
TurnBinding read_turn_binding(const std::filesystem::path& path);

// A fresh random token for a turn (hex, 128 bits from the system's random source).
std::string make_turn_token();

// Serves one turn's calls from its own thread, one call at a time, until closed (or destroyed). The socket lives
// in a private directory under the system's temporary directory (socket paths are short).
class TurnChannel {
 public:
  TurnChannel(McpToolService& service, std::string token);
  ~TurnChannel();
  TurnChannel(const TurnChannel&) = delete;
  TurnChannel& operator=(const TurnChannel&) = delete;

  const std::filesystem::path& socket_path() const { return m_socket; }
  const std::filesystem::path& directory() const { return m_dir; }
  // Stops serving and removes the socket: later calls find the turn ended. Idempotent.
  void close();

 private:
  void serve();
  void answer(int connection);

  McpToolService& m_service;
  std::string m_token;
  std::filesystem::path m_dir;
  std::filesystem::path m_socket;
  int m_listener = -1;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

// The MCP server's tools in turn mode: the binding's tools, each call sent to the daemon's channel.
class TurnChannelClient : public McpToolService {
 public:
  explicit TurnChannelClient(TurnBinding binding);
  std::vector<McpTool> tools() override { return m_binding.tools; }
  McpToolResult call(const std::string& name, const nlohmann::json& arguments) override;
  std::string instructions() override { return m_binding.instructions; }

 private:
  TurnBinding m_binding;
};

}  // namespace evoteam
