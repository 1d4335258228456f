#pragma once
// A loopback HTTP server that plays an LLM provider (Anthropic Messages or OpenAI Chat Completions) from a
// queue of canned replies, and records every request. Raw sockets, so it can also misbehave on purpose:
// reset the connection, cut a body short, answer late. One thread per connection; the destructor stops all.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam::testing {

enum class FakeProtocol { anthropic, openai };

struct FakeReply {
  enum class Action {
    respond,        // status, headers, body
    reset,          // read the request, then reset the connection (RST)
    truncate_body,  // announce the whole body, send half of it, close
  };
  Action action = Action::respond;
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds delay{0};  // wait before answering

  static FakeReply json(int status, const nlohmann::json& body);
  static FakeReply text(int status, std::string body);
  static FakeReply reset_connection();
};

struct RecordedRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

class FakeLlmServer {
 public:
  explicit FakeLlmServer(FakeProtocol protocol);
  ~FakeLlmServer();
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  // What the provider's *_BASE_URL should be: the host for Anthropic, host + "/v1" for OpenAI.
  std::string base_url() const;
  FakeProtocol protocol() const { return m_protocol; }

  void push(FakeReply reply);
  std::vector<RecordedRequest> requests() const;
  std::size_t pending() const;

 private:
  void accept_loop();
  void serve(int fd);

  FakeProtocol m_protocol;
  int m_listen_fd = -1;
  int m_port = 0;
  bool m_stopping = false;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<FakeReply> m_replies;
  std::vector<RecordedRequest> m_requests;
  std::vector<std::thread> m_connections;
  std::thread m_acceptor;
};

// --- Reply builders --------------------------------------------------------------------------------------

struct FakeUsage {
  std::uint64_t input = 0;  // anthropic input_tokens; openai prompt_tokens minus cached
  std::uint64_t output = 0;
  std::uint64_t cache_read = 0;   // anthropic cache_read_input_tokens; openai cached_tokens
  std::uint64_t cache_write = 0;  // anthropic cache_creation_input_tokens
};

struct FakeToolCall {
  std::string id;
  std::string name;
  nlohmann::json input;  // an object; for OpenAI a string is sent verbatim as the arguments
};

// A reply in the server's protocol: optional text, then tool calls.
nlohmann::json fake_reply_body(FakeProtocol protocol, const std::string& text, const std::vector<FakeToolCall>& calls,
                               const FakeUsage& usage);
// The same, as a 200 reply.
FakeReply fake_reply(FakeProtocol protocol, const std::string& text, const std::vector<FakeToolCall>& calls,
                     const FakeUsage& usage);
// An error reply in the protocol's error shape.
FakeReply fake_error(FakeProtocol protocol, int status, const std::string& type, const std::string& message);

}  // namespace evoteam::testing
