// The turn's channel: one request line and one answer line per connection, over a Unix socket.
#include <evoteam/mcp/turn_channel.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

namespace evoteam {

namespace {

constexpr std::size_t k_max_message_bytes = 64u * 1024 * 1024;  // a whole kernel source fits many times
constexpr int k_accept_poll_ms = 200;                           // how soon close() is noticed
constexpr int k_request_read_ms = 10'000;                       // a client that connects but never speaks

nlohmann::json tool_to_json(const McpTool& tool) {
  return {{"name", tool.name}, {"description", tool.description}, {"input_schema", tool.input_schema}};
}

// Reads until a newline (not kept) or end of input; false on a timeout, an error or an oversized message.
bool read_line(int fd, std::string& line, int timeout_ms) {
  std::array<char, 64 * 1024> buffer;
  while (true) {
    if (const std::size_t newline = line.find('\n'); newline != std::string::npos) {
      line.resize(newline);
      return true;
    }
    if (timeout_ms >= 0) {
      pollfd waiting{fd, POLLIN, 0};
      if (::poll(&waiting, 1, timeout_ms) <= 0) return false;
    }
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return !line.empty();
    line.append(buffer.data(), static_cast<std::size_t>(got));
    if (line.size() > k_max_message_bytes) return false;
  }
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t put = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    done += static_cast<std::size_t>(put);
  }
  return true;
}

sockaddr_un address_of(const std::filesystem::path& socket) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string text = socket.string();
  if (text.size() >= sizeof address.sun_path) throw InvalidInput("socket path too long: " + text);
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
  return address;
}

}  // namespace

std::string TurnBinding::scope() const {
  return "run " + run_id + ", cycle " + std::to_string(cycle) + ", role " + role;
}

void write_turn_binding(const std::filesystem::path& path, const TurnBinding& binding) {
  nlohmann::json tools = nlohmann::json::array();
  for (const McpTool& tool : binding.tools) tools.push_back(tool_to_json(tool));
  const nlohmann::json document = {{"run_id", binding.run_id}, {"cycle", binding.cycle},
                                   {"role", binding.role},     {"socket", binding.socket.string()},
                                   {"token", binding.token},   {"instructions", binding.instructions},
                                   {"tools", std::move(tools)}};
  write_file_atomic(path, document.dump(1) + "\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TurnBinding read_turn_binding(const std::filesystem::path& path) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& error) {
    throw InvalidInput(path.string() + ": not a turn binding: " + error.what());
  } catch (const IoError& error) {
    throw InvalidInput(std::string("cannot read the turn binding: ") + error.what());
  }
  auto text = [&](const char* field) {
    if (!document.is_object() || !document.contains(field) || !document[field].is_string())
      throw InvalidInput(path.string() + ": the turn binding needs a string \"" + field + "\"");
    return document[field].get<std::string>();
  };
  TurnBinding binding;
  binding.run_id = text("run_id");
  binding.role = text("role");
  binding.socket = text("socket");
  binding.token = text("token");
  binding.instructions = text("instructions");
  if (!document.contains("cycle") || !document["cycle"].is_number_integer())
    throw InvalidInput(path.string() + ": the turn binding needs an integer \"cycle\"");
  binding.cycle = document["cycle"].get<int>();
  if (!document.contains("tools") || !document["tools"].is_array())
    throw InvalidInput(path.string() + ": the turn binding needs a list \"tools\"");
  for (const nlohmann::json& tool : document["tools"]) {
    if (!tool.is_object() || !tool.contains("name") || !tool["name"].is_string() || !tool.contains("input_schema"))
      throw InvalidInput(path.string() + ": a tool of the turn binding needs \"name\" and \"input_schema\"");
    binding.tools.push_back({tool["name"].get<std::string>(), tool.value("description", ""), tool["input_schema"]});
  }
  return binding;
}

std::string make_turn_token() {
  std::random_device source;
  char text[33];
  for (int i = 0; i < 4; ++i) std::snprintf(text + 8 * i, 9, "%08x", static_cast<unsigned>(source()));
  return std::string(text, 32);
}

TurnChannel::TurnChannel(McpToolService& service, std::string token) : m_service(service), m_token(std::move(token)) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/evoteam-turn-XXXXXX";
  if (pattern.size() > 80) pattern = "/tmp/evoteam-turn-XXXXXX";  // keep the socket path under sun_path's limit
  if (::mkdtemp(pattern.data()) == nullptr)
    throw IoError("cannot create a directory for the turn's socket: " + errno_text(errno));
  m_dir = pattern;
  m_socket = m_dir / "tools.sock";
  m_listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (m_listener < 0) throw IoError("cannot create the turn's socket: " + errno_text(errno));
  const sockaddr_un address = address_of(m_socket);
  if (::bind(m_listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(m_listener, 8) != 0) {
    const int err = errno;
    close();
    throw IoError("cannot listen on " + m_socket.string() + ": " + errno_text(err));
  }
  m_thread = std::thread([this] { serve(); });
}

TurnChannel::~TurnChannel() { close(); }

void TurnChannel::close() {
  m_stop = true;
  if (m_thread.joinable()) m_thread.join();
  if (m_listener >= 0) ::close(m_listener);
  m_listener = -1;
  std::error_code ignored;
  if (!m_dir.empty()) std::filesystem::remove_all(m_dir, ignored);
}

void TurnChannel::serve() {
  while (!m_stop) {
    pollfd waiting{m_listener, POLLIN, 0};
    if (::poll(&waiting, 1, k_accept_poll_ms) <= 0) continue;
    const int connection = ::accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    answer(connection);
    ::close(connection);
  }
}

// One call: {"token", "tool", "arguments"} in, {"text", "is_error"} out. A tool that throws answers with the
// fault as an error result: the CLI's model reads it, the daemon's turn goes on.
void TurnChannel::answer(int connection) {
  std::string line;
  if (!read_line(connection, line, k_request_read_ms)) return;
  McpToolResult result;
  try {
    const nlohmann::json request = nlohmann::json::parse(line);
    if (request.value("token", "") != m_token) {
      result = {"this tool server is bound to another turn: the call was refused", true};
    } else {
      result = m_service.call(request.value("tool", ""), request.value("arguments", nlohmann::json::object()));
    }
  } catch (const std::exception& error) {
    result = {std::string("the daemon could not serve the call: ") + error.what(), true};
  }
  // A tool's text may hold bytes that are not UTF-8 (a compiler's output): replaced, so the answer is still sent.
  write_all(connection, nlohmann::json{{"text", result.text}, {"is_error", result.is_error}}.dump(
                            -1, ' ', false, nlohmann::json::error_handler_t::replace) +
                            "\n");
}

TurnChannelClient::TurnChannelClient(TurnBinding binding) : m_binding(std::move(binding)) {}

McpToolResult TurnChannelClient::call(const std::string& name, const nlohmann::json& arguments) {
  const McpToolResult ended = {"the turn this server serves (" + m_binding.scope() + ") has ended: no more tool calls",
                               true};
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw IoError("cannot create a socket: " + errno_text(errno));
  const sockaddr_un address = address_of(m_binding.socket);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return ended;
  }
  const std::string request =
      nlohmann::json{{"token", m_binding.token}, {"tool", name}, {"arguments", arguments}}.dump() + "\n";
  std::string line;
  // No deadline on the answer: an evaluation may take minutes, and the daemon bounds the turn.
  const bool answered = write_all(fd, request) && read_line(fd, line, -1);
  ::close(fd);
  if (!answered) return ended;
  try {
    const nlohmann::json answer = nlohmann::json::parse(line);
    return {answer.value("text", ""), answer.value("is_error", true)};
  } catch (const nlohmann::json::exception&) {  // unparsable, or a field of the wrong type
    return {"the daemon's answer was not readable", true};
  }
}

}  // namespace evoteam
