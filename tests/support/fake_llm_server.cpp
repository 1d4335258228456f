// Loopback fake of the two provider protocols over raw sockets.
#include "support/fake_llm_server.hpp"

#include <evoteam/core/text.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace evoteam::testing {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

void send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client gave up (e.g. its timeout fired): nothing to do
    sent += static_cast<std::size_t>(n);
  }
}

// Reads one request; false when the client closed first.
bool read_request(int fd, RecordedRequest& request) {
  std::string data;
  char buffer[8192];
  std::size_t header_end = std::string::npos;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  std::size_t line_end = data.find("\r\n");
  const std::string request_line = data.substr(0, line_end);
  request.method = request_line.substr(0, request_line.find(' '));
  const std::size_t path_start = request_line.find(' ') + 1;
  request.path = request_line.substr(path_start, request_line.find(' ', path_start) - path_start);
  std::size_t pos = line_end + 2;
  while (pos < header_end) {
    std::size_t end = data.find("\r\n", pos);
    const std::string line = data.substr(pos, end - pos);
    if (std::size_t colon = line.find(':'); colon != std::string::npos)
      request.headers[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
    pos = end + 2;
  }
  std::size_t length = 0;
  if (auto found = request.headers.find("content-length"); found != request.headers.end())
    length = std::stoul(found->second);
  request.body = data.substr(header_end + 4);
  while (request.body.size() < length) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    request.body.append(buffer, static_cast<std::size_t>(n));
  }
  return true;
}

std::string reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 408: return "Request Timeout";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 529: return "Overloaded";
    default: return "Status";
  }
}

}  // namespace

FakeReply FakeReply::json(int status, const nlohmann::json& body) { return text(status, body.dump()); }

FakeReply FakeReply::text(int status, std::string body) {
  FakeReply reply;
  reply.status = status;
  reply.body = std::move(body);
  return reply;
}

FakeReply FakeReply::reset_connection() {
  FakeReply reply;
  reply.action = Action::reset;
  return reply;
}

FakeLlmServer::FakeLlmServer(FakeProtocol protocol) : m_protocol(protocol) {
  m_listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (m_listen_fd < 0) throw std::runtime_error("fake server: socket failed");
  int yes = 1;
  ::setsockopt(m_listen_fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(m_listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(m_listen_fd, 16) != 0)
    throw std::runtime_error("fake server: bind/listen failed");
  socklen_t size = sizeof address;
  ::getsockname(m_listen_fd, reinterpret_cast<sockaddr*>(&address), &size);
  m_port = ntohs(address.sin_port);
  m_acceptor = std::thread([this] { accept_loop(); });
}

FakeLlmServer::~FakeLlmServer() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  m_acceptor.join();
  for (std::thread& connection : m_connections) connection.join();
  ::close(m_listen_fd);
}

std::string FakeLlmServer::base_url() const {
  const std::string host = "http://127.0.0.1:" + std::to_string(m_port);
  return m_protocol == FakeProtocol::openai ? host + "/v1" : host;
}

void FakeLlmServer::push(FakeReply reply) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_replies.push_back(std::move(reply));
}

std::vector<RecordedRequest> FakeLlmServer::requests() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_requests;
}

std::size_t FakeLlmServer::pending() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_replies.size();
}

void FakeLlmServer::accept_loop() {
  while (true) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_stopping) return;
    }
    pollfd entry{m_listen_fd, POLLIN, 0};
    if (::poll(&entry, 1, 50) <= 0) continue;
    int fd = ::accept4(m_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(m_mutex);
    m_connections.emplace_back([this, fd] { serve(fd); });
  }
}

void FakeLlmServer::serve(int fd) {
  RecordedRequest request;
  if (!read_request(fd, request)) {
    ::close(fd);
    return;
  }
  FakeReply reply;
  {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_requests.push_back(request);
    if (m_replies.empty()) {
      reply = FakeReply::json(
          400, {{"error", {{"type", "invalid_request_error"}, {"message", "fake server: no reply queued"}}}});
    } else {
      reply = std::move(m_replies.front());
      m_replies.pop_front();
    }
    if (reply.delay.count() > 0) m_wake.wait_for(lock, reply.delay, [this] { return m_stopping; });
  }
  if (reply.action == FakeReply::Action::reset) {
    linger hard{1, 0};  // close with RST instead of FIN
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    ::close(fd);
    return;
  }
  std::string head = "HTTP/1.1 " + std::to_string(reply.status) + " " + reason_phrase(reply.status) + "\r\n";
  head += "Content-Type: application/json\r\nContent-Length: " + std::to_string(reply.body.size()) +
          "\r\nConnection: close\r\n";
  for (const auto& [name, value] : reply.headers) head += name + ": " + value + "\r\n";
  head += "\r\n";
  send_all(fd, head);
  send_all(fd,
           reply.action == FakeReply::Action::truncate_body ? reply.body.substr(0, reply.body.size() / 2) : reply.body);
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

nlohmann::json fake_reply_body(FakeProtocol protocol, const std::string& text, const std::vector<FakeToolCall>& calls,
                               const FakeUsage& usage) {
  if (protocol == FakeProtocol::anthropic) {
    nlohmann::json content = nlohmann::json::array();
    if (!text.empty()) content.push_back({{"type", "text"}, {"text", text}});
    for (const FakeToolCall& call : calls)
      content.push_back({{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", call.input}});
    return {{"id", "msg_fake"},
            {"type", "message"},
            {"role", "assistant"},
            {"model", "claude-sonnet-4-5-20250929"},
            {"content", content},
            {"stop_reason", calls.empty() ? "end_turn" : "tool_use"},
            {"stop_sequence", nullptr},
            {"usage",
             {{"input_tokens", usage.input},
              {"output_tokens", usage.output},
              {"cache_read_input_tokens", usage.cache_read},
              {"cache_creation_input_tokens", usage.cache_write}}}};
  }
  nlohmann::json message = {{"role", "assistant"},
                            {"content", text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text)}};
  if (!calls.empty()) {
    nlohmann::json tool_calls = nlohmann::json::array();
    for (const FakeToolCall& call : calls)
      tool_calls.push_back(
          {{"id", call.id},
           {"type", "function"},
           {"function",
            {{"name", call.name},
             {"arguments", call.input.is_string() ? call.input.get<std::string>() : call.input.dump()}}}});
    message["tool_calls"] = tool_calls;
  }
  const std::uint64_t prompt = usage.input + usage.cache_read;
  return {{"id", "chatcmpl-fake"},
          {"object", "chat.completion"},
          {"model", "gpt-5-2025-08-07"},
          {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", calls.empty() ? "stop" : "tool_calls"}}}},
          {"usage",
           {{"prompt_tokens", prompt},
            {"completion_tokens", usage.output},
            {"total_tokens", prompt + usage.output},
            {"prompt_tokens_details", {{"cached_tokens", usage.cache_read}}}}}};
}

FakeReply fake_reply(FakeProtocol protocol, const std::string& text, const std::vector<FakeToolCall>& calls,
                     const FakeUsage& usage) {
  return FakeReply::json(200, fake_reply_body(protocol, text, calls, usage));
}

FakeReply fake_error(FakeProtocol protocol, int status, const std::string& type, const std::string& message) {
  if (protocol == FakeProtocol::anthropic)
    return FakeReply::json(
        status, {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}, {"request_id", "req_fake"}});
  return FakeReply::json(status,
                         {{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", type}}}});
}

}  // namespace evoteam::testing
