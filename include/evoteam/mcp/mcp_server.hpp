#pragma once
// The Model Context Protocol's server side: JSON-RPC 2.0 messages, one per line, as a coding-agent CLI speaks them
// to a stdio server. It serves the tools of a McpToolService — one member's turn, or a run a person's own agent
// works on — and nothing else (no resources, prompts or sampling). Both eras of the protocol are served: the
// handshake revisions (initialize, then requests) and the stateless one (server/discover, then requests that carry
// their revision in `_meta`). Bad messages get the protocol's errors; a tool's own failure is a result with
// isError, never a protocol error.
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

struct McpTool {
  std::string name;
  std::string description;
  nlohmann::json input_schema;  // a JSON Schema object
};

struct McpToolResult {
  std::string text;
  bool is_error = false;
};

// What the server serves. `call` is asked only for a tool `tools()` lists; it answers every failure as a result.
class McpToolService {
 public:
  virtual ~McpToolService() = default;
  virtual std::vector<McpTool> tools() = 0;
  virtual McpToolResult call(const std::string& name, const nlohmann::json& arguments) = 0;
  // What the server is for, in the client's words for its model (initialize's `instructions`).
  virtual std::string instructions() = 0;
};

// The revisions served, oldest first: the handshake ones, then the stateless one.
const std::vector<std::string>& mcp_handshake_versions();
const std::string& mcp_stateless_version();

// The JSON-RPC error codes the server answers with.
enum class McpErrorCode : int {
  parse_error = -32700,
  invalid_request = -32600,
  method_not_found = -32601,
  invalid_params = -32602,
  internal_error = -32603,
  unsupported_version = -32022,
};

// One connection's protocol state: a line in, the line to answer with (none for a notification or a response).
class McpSession {
 public:
  McpSession(McpToolService& service, std::string server_version);
  std::optional<std::string> handle(const std::string& line);
  // The revision the client agreed on; empty before initialize or discover.
  const std::string& protocol_version() const { return m_version; }

 private:
  nlohmann::json dispatch(const std::string& method, const nlohmann::json& params, bool stateless);
  nlohmann::json initialize(const nlohmann::json& params);
  nlohmann::json discover();
  nlohmann::json list_tools(bool stateless);
  nlohmann::json call_tool(const nlohmann::json& params, bool stateless);

  McpToolService& m_service;
  std::string m_server_version;
  std::string m_version;
};

// Serves `in` until it ends, answering on `out` (flushed after every answer).
void serve_mcp(std::istream& in, std::ostream& out, McpToolService& service, const std::string& server_version);

}  // namespace evoteam
