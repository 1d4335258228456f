// The scripted provider's routing: a line addressed with "for" goes to that caller only, unaddressed lines go to
// anyone in order, and concurrent callers each get their own lines whatever order their threads call in.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/llm/llm.hpp>

#include "llm/providers.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;

// One scripted reply line whose only text block is `text`; `caller` empty leaves it unaddressed.
std::string reply_line(const std::string& text, const std::string& caller = "") {
  nlohmann::json line = {{"content", {{{"type", "text"}, {"text", text}}}},
                         {"stop_reason", "end_turn"},
                         {"usage", {{"input_tokens", 1}, {"output_tokens", 1}}}};
  if (!caller.empty()) line["for"] = caller;
  return line.dump() + "\n";
}

class ScriptedRouting : public ::testing::Test {
 protected:
  ScriptedRouting() : m_prices(PriceTable::load(fs::path(EVOTEAM_SOURCE_DIR) / "configs/models.json")) {}

  std::unique_ptr<LlmProvider> provider(const std::string& script) {
    write_file_atomic(m_dir / "script.jsonl", script);
    ProviderSettings settings;
    settings.provider = "scripted";
    settings.scripted_file = m_dir / "script.jsonl";
    return make_provider(settings, m_prices);
  }

  // The reply's text, or "<failure kind>" when the call brought none.
  static std::string ask(LlmProvider& provider, const std::string& caller) {
    LlmRequest request;
    request.caller = caller;
    LlmResult result = provider.complete(request);
    if (!result.ok()) return "<" + to_string(result.failure().kind) + ">";
    return result.response().content.at(0).text;
  }

  testing::TempDir m_dir;
  PriceTable m_prices;
};

TEST_F(ScriptedRouting, ACallerTakesItsOwnLinesFirstThenUnaddressedOnesInOrder) {
  auto scripted = provider(reply_line("any 1") + reply_line("debugger 1", "debugger") + reply_line("any 2") +
                           reply_line("supervisor 1", "supervisor") + reply_line("debugger 2", "debugger"));
  EXPECT_EQ(ask(*scripted, "supervisor"), "supervisor 1");
  EXPECT_EQ(ask(*scripted, "debugger"), "debugger 1");
  // The optimizer has no line of its own: the first unaddressed one, never another caller's.
  EXPECT_EQ(ask(*scripted, "optimizer"), "any 1");
  EXPECT_EQ(ask(*scripted, "debugger"), "debugger 2");
  // The debugger's own lines are used up: it falls back to the unaddressed ones.
  EXPECT_EQ(ask(*scripted, "debugger"), "any 2");
  // Only addressed lines were left for no one, so the supervisor's script has ended.
  EXPECT_EQ(ask(*scripted, "supervisor"), "<script_ended>");
}

TEST_F(ScriptedRouting, AScriptWithoutForReplaysInOrderWhoeverAsks) {
  auto scripted = provider(reply_line("one") + reply_line("two") + reply_line("three"));
  EXPECT_EQ(ask(*scripted, "optimizer"), "one");
  EXPECT_EQ(ask(*scripted, "supervisor"), "two");
  EXPECT_EQ(ask(*scripted, ""), "three");
  EXPECT_EQ(ask(*scripted, "optimizer"), "<script_ended>");
}

TEST_F(ScriptedRouting, ACallWithoutACallerNeverTakesAnAddressedLine) {
  auto scripted = provider(reply_line("for the optimizer", "optimizer") + reply_line("for anyone"));
  EXPECT_EQ(ask(*scripted, ""), "for anyone");
  EXPECT_EQ(ask(*scripted, ""), "<script_ended>");
  EXPECT_EQ(ask(*scripted, "optimizer"), "for the optimizer");
}

TEST_F(ScriptedRouting, FailuresAndMalformedRepliesAreRoutedToo) {
  auto scripted = provider(R"({"for": "debugger", "failure": {"kind": "http_status", "http_status": 529}})"
                           "\n" +
                           std::string(R"({"for": "optimizer", "malformed": "cut off"})") + "\n" + reply_line("any"));
  EXPECT_EQ(ask(*scripted, "optimizer"), "<malformed_reply>");
  EXPECT_EQ(ask(*scripted, "supervisor"), "any");
  EXPECT_EQ(ask(*scripted, "debugger"), "<http_status>");
}

TEST_F(ScriptedRouting, AForThatNamesNoCallerIsRefusedNamingTheLine) {
  for (const char* bad : {R"({"for": 7, "content": []})", R"({"for": "", "content": []})"}) {
    try {
      provider(std::string("// a comment\n") + bad + "\n");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find("script.jsonl:2"), std::string::npos) << error.what();
    }
  }
}

// Two members call from their own threads at once, many times: each gets exactly its own lines, in its order.
TEST_F(ScriptedRouting, ConcurrentCallersEachGetTheirOwnLinesInOrder) {
  constexpr int k_lines = 200;
  std::string script;
  for (int i = 0; i < k_lines; ++i)
    script += reply_line("optimizer " + std::to_string(i), "optimizer") +
              reply_line("debugger " + std::to_string(i), "debugger");
  auto scripted = provider(script);
  std::map<std::string, std::vector<std::string>> got;
  std::mutex got_mutex;
  std::atomic<bool> go{false};
  auto member = [&](const std::string& role) {
    while (!go) std::this_thread::yield();
    for (int i = 0; i < k_lines; ++i) {
      std::string text = ask(*scripted, role);
      std::lock_guard<std::mutex> lock(got_mutex);
      got[role].push_back(text);
    }
  };
  std::thread optimizer(member, "optimizer"), debugger(member, "debugger");
  go = true;
  optimizer.join();
  debugger.join();
  for (const std::string role : {"optimizer", "debugger"}) {
    ASSERT_EQ(got[role].size(), static_cast<std::size_t>(k_lines)) << role;
    for (int i = 0; i < k_lines; ++i) EXPECT_EQ(got[role][i], role + " " + std::to_string(i));
  }
  EXPECT_EQ(ask(*scripted, "optimizer"), "<script_ended>");
}

// The caller is the scripted provider's business: no server ever sees it.
TEST(LlmRequestCaller, NeitherWireFormatCarriesTheCaller) {
  LlmRequest request;
  request.model = "m";
  request.caller = "debugger";
  request.messages.push_back(Message{Role::user, {ContentBlock::make_text("hello")}});
  EXPECT_EQ(anthropic_request_body(request, false).dump().find("debugger"), std::string::npos);
  EXPECT_EQ(openai_request_body(request, "max_tokens").dump().find("debugger"), std::string::npos);
}

// "latency_s" plays the model's time to answer: callers wait for their own lines at once, never for each other's,
// and a latency that is not a number of seconds is refused naming the line.
TEST_F(ScriptedRouting, LatencyIsWaitedOutsideTheLockSoCallersWaitAtOnce) {
  nlohmann::json slow = nlohmann::json::parse(reply_line("slow optimizer", "optimizer"));
  slow["latency_s"] = 0.6;
  nlohmann::json slow_too = nlohmann::json::parse(reply_line("slow debugger", "debugger"));
  slow_too["latency_s"] = 0.6;
  auto scripted = provider(slow.dump() + "\n" + slow_too.dump() + "\n");
  std::string first, second;
  const auto start = std::chrono::steady_clock::now();
  std::thread optimizer([&] { first = ask(*scripted, "optimizer"); });
  std::thread debugger([&] { second = ask(*scripted, "debugger"); });
  optimizer.join();
  debugger.join();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(first, "slow optimizer");
  EXPECT_EQ(second, "slow debugger");
  EXPECT_GE(wall_s, 0.6);
  EXPECT_LT(wall_s, 1.1) << "the callers waited for each other";

  nlohmann::json bad = nlohmann::json::parse(reply_line("x"));
  bad["latency_s"] = -1;
  try {
    provider(bad.dump() + "\n");
    ADD_FAILURE() << "a negative latency was accepted";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("script.jsonl:1: \"latency_s\""), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace evoteam
