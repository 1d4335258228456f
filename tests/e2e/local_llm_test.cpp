// A real llama.cpp server (tests/local_llm/build_server.sh) serving a tiny model of random weights
// (tests/local_llm/tiny_model.py): `evoteam doctor` lists its model, and `evoteam optimize` runs against it to its
// normal end whatever the model says, its meter agreeing with the usage the server reported (read through a
// recording proxy), a context overflow survived, nothing of the key or the model's words outside the run
// directory, and the server stopped after. The model's replies are noise (llama.cpp's tool-call grammar is lazy: it
// starts only once the model writes "<tool_call>", which random weights do not), so each turn ends as the loop
// ends a model that calls no tool. The "local-llm" CTest label; skipped when the server could not be built.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

#if __has_include(<httplib.h>)
#include <httplib.h>
#define EVOTEAM_HAVE_HTTPLIB 1
#endif

#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

extern char** environ;

#ifdef EVOTEAM_HAVE_HTTPLIB
namespace evoteam {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_model = "evoteam-tiny";
constexpr const char* k_key = "sk-local-llm-canary-DO-NOT-LEAK-7f3a";

// The server's install directory, from the build script's fixture.
std::optional<fs::path> server_dir() {
  const char* dir = std::getenv("EVOTEAM_LLAMA_SERVER_DIR");
  if (dir == nullptr || !fs::is_regular_file(fs::path(dir) / "bin" / "llama-server")) return std::nullopt;
  return fs::path(dir);
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    throw std::runtime_error("no free loopback port: bind failed");
  }
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  ::close(fd);
  return ntohs(address.sin_port);
}

bool port_open(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool open = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return open;
}

// llama-server on a free loopback port, with tool calling (--jinja) and a context of `context` tokens; stopped
// (SIGTERM, then SIGKILL) when it goes out of scope.
class LlamaServer {
 public:
  LlamaServer(const fs::path& dir, const fs::path& model, int context, const fs::path& log) : m_port(free_port()) {
    const std::vector<std::string> args = {(dir / "bin" / "llama-server").string(),
                                           "-m",
                                           model.string(),
                                           "--alias",
                                           k_model,
                                           "--host",
                                           "127.0.0.1",
                                           "--port",
                                           std::to_string(m_port),
                                           "--jinja",
                                           "-c",
                                           std::to_string(context),
                                           "-np",
                                           "1",
                                           "-t",
                                           "2",
                                           "--log-file",
                                           log.string()};
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&m_pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) m_pid = -1;
    posix_spawn_file_actions_destroy(&actions);
    httplib::Client client("127.0.0.1", m_port);
    for (int i = 0; i < 600 && m_pid > 0; ++i) {
      if (auto health = client.Get("/health"); health && health->status == 200) {
        m_ready = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ~LlamaServer() { stop(); }

  void stop() {
    if (m_pid <= 0) return;
    ::kill(m_pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && ::waitpid(m_pid, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (::waitpid(m_pid, &status, WNOHANG) == 0) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, &status, 0);
    }
    m_pid = -1;
  }

  bool ready() const { return m_ready; }
  int port() const { return m_port; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(m_port) + "/v1"; }

 private:
  int m_port;
  pid_t m_pid = -1;
  bool m_ready = false;
};

// Forwards every request to the server and keeps each chat reply it passes back: what the server reported.
class RecordingProxy {
 public:
  explicit RecordingProxy(int upstream) : m_upstream(upstream) {
    auto forward = [this](const httplib::Request& request, httplib::Response& response) {
      httplib::Client client("127.0.0.1", m_upstream);
      client.set_read_timeout(300, 0);
      httplib::Result reply = request.method == "GET" ? client.Get(request.path)
                                                      : client.Post(request.path, request.body, "application/json");
      if (!reply) {
        response.status = 502;
        return;
      }
      response.status = reply->status;
      response.set_content(reply->body, "application/json");
      if (request.path == "/v1/chat/completions") {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_replies.push_back({reply->status, reply->body});
      }
    };
    m_server.Get(".*", forward);
    m_server.Post(".*", forward);
    m_port = m_server.bind_to_any_port("127.0.0.1");
    m_thread = std::thread([this] { m_server.listen_after_bind(); });
  }
  ~RecordingProxy() {
    m_server.stop();
    m_thread.join();
  }

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(m_port) + "/v1"; }
  std::vector<std::pair<int, std::string>> replies() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_replies;
  }

 private:
  int m_upstream;
  int m_port = 0;
  httplib::Server m_server;
  std::thread m_thread;
  mutable std::mutex m_mutex;
  std::vector<std::pair<int, std::string>> m_replies;
};

ProcessResult run_evoteam_with(const std::vector<std::string>& args, const fs::path& home,
                               std::chrono::seconds timeout) {
  return run_evoteam(
      args, timeout,
      scrubbed_env({{"OPENAI_API_KEY", k_key}, {"HOME", home.string()}, {"TMPDIR", (home / "tmp").string()}}));
}

class LocalLlm : public ::testing::Test {
 protected:
  void SetUp() override {
    std::optional<fs::path> dir = server_dir();
    if (!dir) GTEST_SKIP() << "llama-server not built (tests/local_llm/build_server.sh; EVOTEAM_LLAMA_SERVER_DIR)";
    m_server_dir = *dir;
    fs::create_directories(m_dir / "home" / "tmp");
    m_model = m_dir / "tiny.gguf";
    Command write_model;
    write_model.env = scrubbed_env({{"PYTHONPATH", (m_server_dir / "python").string()}});
    write_model.argv = {"python3", (fs::path(EVOTEAM_SOURCE_DIR) / "tests/local_llm/tiny_model.py").string(),
                        (m_server_dir / "vocab" / "ggml-vocab-llama-spm.gguf").string(),
                        (m_server_dir / "vocab" / "Qwen-Qwen2.5-7B-Instruct.jinja").string(), m_model.string()};
    write_model.timeout = std::chrono::seconds(120);
    const ProcessResult written = system_runner().run(write_model);
    ASSERT_TRUE(written.ok()) << testing::describe(written);
  }

  // optimize on host_matmul, bounded: one role, a few short replies per turn, two cycles.
  ProcessResult optimize(const std::string& base_url, const fs::path& runs) {
    return run_evoteam_with({"--set",        "eval.cache_dir=" + (m_dir / "cache").string(),
                             "--set",        "llm.max_tokens=48",
                             "--set",        "llm.max_retries=0",
                             "--set",        "agent.max_steps=4",
                             "--set",        "supervisor.policy=rules",
                             "optimize",     testing::k_task.string(),
                             "--provider",   "openai",
                             "--base-url",   base_url,
                             "--model",      k_model,
                             "--team",       "single",
                             "--max-cycles", "2",
                             "--runs-dir",   runs.string(),
                             "--json"},
                            m_dir / "home", std::chrono::seconds(600));
  }

  testing::TempDir m_dir;
  fs::path m_server_dir;
  fs::path m_model;
};

TEST_F(LocalLlm, DoctorListsTheServedModelAndItsToolCalls) {
  LlamaServer server(m_server_dir, m_model, 2048, m_dir / "server.log");
  ASSERT_TRUE(server.ready()) << read_file(m_dir / "server.log");
  const ProcessResult doctor =
      run_evoteam_with({"doctor", "--provider", "openai", "--base-url", server.base_url(), "--json"}, m_dir / "home",
                       std::chrono::seconds(120));
  const nlohmann::json report = testing::parse_stdout(doctor);
  ASSERT_TRUE(report.is_object()) << testing::describe(doctor);
  EXPECT_EQ(report["models"], nlohmann::json::array({k_model})) << report.dump(2);
  EXPECT_EQ(report["serves_model"], true) << report.dump(2);
  EXPECT_EQ(report["context_window"], 2048) << report.dump(2);
  EXPECT_EQ(report["local"], true);
  EXPECT_EQ(report["tools_accepted"], true) << report.dump(2);
}

TEST_F(LocalLlm, OptimizeEndsNormallyWithTheServersUsageAndLeavesNothingOutside) {
  const fs::path runs = m_dir / "runs";
  int port = 0;
  ProcessResult result;
  std::vector<std::pair<int, std::string>> replies;
  {
    LlamaServer server(m_server_dir, m_model, 16384, m_dir / "server.log");
    ASSERT_TRUE(server.ready()) << read_file(m_dir / "server.log");
    port = server.port();
    RecordingProxy proxy(server.port());
    result = optimize(proxy.base_url(), runs);
    replies = proxy.replies();
  }
  EXPECT_FALSE(port_open(port)) << "the server is still running";
  ASSERT_TRUE(result.spawned && !result.timed_out && result.signal == 0) << testing::describe(result);
  // Its normal end: finished (0) or a budget (5), never a crash or invalid input.
  EXPECT_TRUE(result.exit_code == 0 || result.exit_code == 5) << testing::describe(result);
  const nlohmann::json summary = testing::parse_stdout(result);
  ASSERT_TRUE(summary.is_object()) << testing::describe(result);
  const fs::path run_dir = summary.at("run_dir").get<std::string>();
  EXPECT_TRUE(fs::is_regular_file(run_dir / "report.html"));
  EXPECT_TRUE(fs::is_regular_file(run_dir / "report.md"));
  EXPECT_NE(read_file(run_dir / "report.md").find("priced at zero"), std::string::npos);

  // The meter's tokens are the sum of the usage the server sent.
  ASSERT_FALSE(replies.empty());
  std::uint64_t reported = 0;
  std::vector<std::string> model_words;
  for (const auto& [status, body] : replies) {
    if (status != 200) continue;
    const nlohmann::json reply = nlohmann::json::parse(body);
    ASSERT_TRUE(reply.contains("usage")) << body;
    reported +=
        reply["usage"]["prompt_tokens"].get<std::uint64_t>() + reply["usage"]["completion_tokens"].get<std::uint64_t>();
    const nlohmann::json& message = reply["choices"][0]["message"];
    if (message.contains("content") && message["content"].is_string() &&
        message["content"].get<std::string>().size() >= 16)
      model_words.push_back(message["content"].get<std::string>().substr(0, 16));
    if (message.contains("tool_calls"))
      for (const nlohmann::json& call : message["tool_calls"]) {
        const std::string arguments = call["function"]["arguments"].get<std::string>();
        if (arguments.size() >= 12) model_words.push_back(arguments);
      }
  }
  std::uint64_t metered = 0;
  for (const nlohmann::json& record : testing::journal_records(run_dir))
    if (record.value("type", "") == "budget_tick") {
      metered = 0;
      for (const auto& [kind, count] : record["tokens"].items()) metered += count.get<std::uint64_t>();
    }
  EXPECT_EQ(metered, reported);
  std::uint64_t summarized = 0;
  for (const auto& [kind, count] : summary.at("tokens").items()) summarized += count.get<std::uint64_t>();
  EXPECT_EQ(summarized, reported) << summary.dump(2);

  // Neither the key nor what the model wrote is anywhere outside the run directory (the home, the cache).
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(m_dir.path())) {
    if (!entry.is_regular_file() || entry.path().string().rfind(runs.string(), 0) == 0) continue;
    if (entry.path() == m_dir / "server.log" || entry.path() == m_model) continue;
    const std::string text = read_file(entry.path());
    EXPECT_EQ(text.find(k_key), std::string::npos) << entry.path();
    for (const std::string& words : model_words) EXPECT_EQ(text.find(words), std::string::npos) << entry.path();
  }
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(runs)) {
    if (entry.is_regular_file()) {
      EXPECT_EQ(read_file(entry.path()).find(k_key), std::string::npos) << entry.path();
    }
  }
}

// A context smaller than the prompt: every request is refused as too long; each turn is shortened, retried once
// and ended as context_overflow, and the run still ends normally with its report.
TEST_F(LocalLlm, AContextOverflowIsSurvived) {
  const fs::path runs = m_dir / "runs";
  LlamaServer server(m_server_dir, m_model, 256, m_dir / "server.log");
  ASSERT_TRUE(server.ready()) << read_file(m_dir / "server.log");
  RecordingProxy proxy(server.port());
  const ProcessResult result = optimize(proxy.base_url(), runs);
  ASSERT_TRUE(result.spawned && !result.timed_out && result.signal == 0) << testing::describe(result);
  EXPECT_TRUE(result.exit_code == 0 || result.exit_code == 5) << testing::describe(result);
  const nlohmann::json summary = testing::parse_stdout(result);
  ASSERT_TRUE(summary.is_object()) << testing::describe(result);
  const fs::path run_dir = summary.at("run_dir").get<std::string>();
  EXPECT_TRUE(fs::is_regular_file(run_dir / "report.md"));
  int overflowed = 0;
  for (const auto& [status, body] : proxy.replies())
    overflowed += status == 400 && body.find("exceed_context_size_error") != std::string::npos ? 1 : 0;
  EXPECT_GE(overflowed, 2);
  int ended_typed = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(run_dir))
    if (entry.path().filename() == "transcript.jsonl")
      ended_typed += read_file(entry.path()).find("\"stop\":\"context_overflow\"") != std::string::npos ? 1 : 0;
  EXPECT_GE(ended_typed, 1);
}

}  // namespace
}  // namespace evoteam
#endif  // EVOTEAM_HAVE_HTTPLIB
