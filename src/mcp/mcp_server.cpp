// The MCP server: a line is parsed, checked as a JSON-RPC 2.0 message, and its method dispatched; every failure
// before a tool runs is a JSON-RPC error naming what was wrong.
#include <evoteam/mcp/mcp_server.hpp>

#include <algorithm>
#include <exception>
#include <istream>
#include <ostream>

namespace evoteam {

namespace {

constexpr const char* k_version_meta_key = "io.modelcontextprotocol/protocolVersion";
constexpr const char* k_server_info_meta_key = "io.modelcontextprotocol/serverInfo";

// A request that cannot be served: answered as a JSON-RPC error.
struct RpcError {
  McpErrorCode code;
  std::string message;
  nlohmann::json data;
};

// One line of the reply. Text that is not UTF-8 (a parse error quoting the bytes it met, a tool's output) is sent
// with U+FFFD in place of each bad byte: a reply that cannot be written would end the server.
std::string reply_line(const nlohmann::json& reply) {
  return reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string error_reply(const nlohmann::json& id, const RpcError& error) {
  nlohmann::json body = {{"code", static_cast<int>(error.code)}, {"message", error.message}};
  if (!error.data.is_null()) body["data"] = error.data;
  return reply_line({{"jsonrpc", "2.0"}, {"id", id}, {"error", body}});
}

// A request id is a string or an integer (JSON-RPC 2.0; MCP forbids null).
bool valid_id(const nlohmann::json& id) { return id.is_string() || id.is_number_integer(); }

nlohmann::json server_info(const std::string& version) { return {{"name", "evoteam"}, {"version", version}}; }

nlohmann::json capabilities() { return {{"tools", {{"listChanged", false}}}}; }

// The stateless revision's results say they are complete, and list results how long they may be cached.
void stamp_stateless(nlohmann::json& result, bool cacheable) {
  result["resultType"] = "complete";
  if (cacheable) {
    result["ttlMs"] = 0;
    result["cacheScope"] = "private";
  }
}

}  // namespace

const std::vector<std::string>& mcp_handshake_versions() {
  static const std::vector<std::string> versions = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};
  return versions;
}

const std::string& mcp_stateless_version() {
  static const std::string version = "2026-07-28";
  return version;
}

McpSession::McpSession(McpToolService& service, std::string server_version)
    : m_service(service), m_server_version(std::move(server_version)) {}

std::optional<std::string> McpSession::handle(const std::string& line) {
  nlohmann::json message;
  try {
    message = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& error) {  // not JSON, or a number no double holds ("1e600")
    return error_reply(nullptr, {McpErrorCode::parse_error, std::string("parse error: ") + error.what(), {}});
  }
  if (message.is_array()) return error_reply(nullptr, {McpErrorCode::invalid_request, "batches are not supported", {}});
  if (!message.is_object())
    return error_reply(nullptr, {McpErrorCode::invalid_request, "a message must be a JSON object", {}});
  const bool has_id = message.contains("id");
  const nlohmann::json id = has_id && valid_id(message["id"]) ? message["id"] : nlohmann::json(nullptr);
  if (!message.contains("method")) {
    // A response to us (we send no requests) is dropped; anything else is not a message.
    if (message.contains("result") || message.contains("error")) return std::nullopt;
    return error_reply(id, {McpErrorCode::invalid_request, "a request needs a \"method\"", {}});
  }
  // Compared as JSON: a "jsonrpc" that is no string (2, [], null) is the wrong version, not an exception.
  if (!message.contains("jsonrpc") || message["jsonrpc"] != "2.0")
    return error_reply(id, {McpErrorCode::invalid_request, "\"jsonrpc\" must be \"2.0\"", {}});
  if (!message["method"].is_string())
    return error_reply(id, {McpErrorCode::invalid_request, "\"method\" must be a string", {}});
  if (!has_id) return std::nullopt;  // a notification (initialized, cancelled): nothing to answer
  if (!valid_id(message["id"]))
    return error_reply(nullptr, {McpErrorCode::invalid_request, "\"id\" must be a string or an integer", {}});
  const nlohmann::json params = message.value("params", nlohmann::json::object());
  try {
    if (!params.is_object()) throw RpcError{McpErrorCode::invalid_params, "\"params\" must be an object", {}};
    // A stateless request names its revision in _meta; a handshake client agreed on one at initialize.
    bool stateless = false;
    if (params.contains("_meta") && params["_meta"].is_object() && params["_meta"].contains(k_version_meta_key)) {
      const nlohmann::json& requested = params["_meta"][k_version_meta_key];
      if (requested != mcp_stateless_version())
        throw RpcError{McpErrorCode::unsupported_version,
                       "unsupported protocol version",
                       {{"supported", {mcp_stateless_version()}}, {"requested", requested}}};
      stateless = true;
    }
    nlohmann::json result = dispatch(message["method"].get<std::string>(), params, stateless);
    return reply_line({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
  } catch (const RpcError& error) {
    return error_reply(id, error);
  } catch (const std::exception& error) {
    // A fault behind the tool (the daemon's channel, the evaluator's infrastructure), not the client's mistake.
    return error_reply(id, {McpErrorCode::internal_error, error.what(), {}});
  }
}

nlohmann::json McpSession::dispatch(const std::string& method, const nlohmann::json& params, bool stateless) {
  if (method == "initialize") return initialize(params);
  if (method == "server/discover") return discover();
  if (method == "ping") {
    nlohmann::json result = nlohmann::json::object();
    if (stateless) stamp_stateless(result, false);
    return result;
  }
  if (method == "tools/list") return list_tools(stateless);
  if (method == "tools/call") return call_tool(params, stateless);
  throw RpcError{McpErrorCode::method_not_found, "method not found: " + method, {}};
}

// The client proposes a revision; a known one is agreed to, else the newest this server speaks is offered.
nlohmann::json McpSession::initialize(const nlohmann::json& params) {
  if (!params.contains("protocolVersion") || !params["protocolVersion"].is_string())
    throw RpcError{McpErrorCode::invalid_params, "initialize needs a \"protocolVersion\" string", {}};
  const std::string proposed = params["protocolVersion"].get<std::string>();
  const std::vector<std::string>& known = mcp_handshake_versions();
  m_version = std::find(known.begin(), known.end(), proposed) != known.end() ? proposed : known.back();
  return {{"protocolVersion", m_version},
          {"capabilities", capabilities()},
          {"serverInfo", server_info(m_server_version)},
          {"instructions", m_service.instructions()}};
}

nlohmann::json McpSession::discover() {
  m_version = mcp_stateless_version();
  nlohmann::json result = {{"supportedVersions", {mcp_stateless_version()}},
                           {"capabilities", capabilities()},
                           {"instructions", m_service.instructions()},
                           {"_meta", {{k_server_info_meta_key, server_info(m_server_version)}}}};
  stamp_stateless(result, true);
  return result;
}

nlohmann::json McpSession::list_tools(bool stateless) {
  nlohmann::json tools = nlohmann::json::array();
  for (const McpTool& tool : m_service.tools())
    tools.push_back({{"name", tool.name}, {"description", tool.description}, {"inputSchema", tool.input_schema}});
  nlohmann::json result = {{"tools", std::move(tools)}};
  if (stateless) stamp_stateless(result, true);
  return result;
}

nlohmann::json McpSession::call_tool(const nlohmann::json& params, bool stateless) {
  if (!params.contains("name") || !params["name"].is_string())
    throw RpcError{McpErrorCode::invalid_params, "tools/call needs a tool \"name\"", {}};
  const std::string name = params["name"].get<std::string>();
  const nlohmann::json arguments = params.value("arguments", nlohmann::json::object());
  if (!arguments.is_object())
    throw RpcError{McpErrorCode::invalid_params, "the \"arguments\" of " + name + " must be an object", {}};
  const std::vector<McpTool> tools = m_service.tools();
  if (std::none_of(tools.begin(), tools.end(), [&](const McpTool& tool) { return tool.name == name; }))
    throw RpcError{McpErrorCode::invalid_params, "unknown tool: " + name, {}};
  const McpToolResult called = m_service.call(name, arguments);
  nlohmann::json result = {{"content", {{{"type", "text"}, {"text", called.text}}}}, {"isError", called.is_error}};
  if (stateless) stamp_stateless(result, false);
  return result;
}

void serve_mcp(std::istream& in, std::ostream& out, McpToolService& service, const std::string& server_version) {
  McpSession session(service, server_version);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (std::optional<std::string> answer = session.handle(line)) out << *answer << '\n' << std::flush;
  }
}

}  // namespace evoteam
