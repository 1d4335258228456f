// The coding-agent CLI table without a CLI: what each stream line is charged, how a turn's failure reads, what a
// turn's environment and command line hold, and what run files keep of secrets. The real CLIs run in RealCli.*.
#include <gtest/gtest.h>

#include <algorithm>

#include <evoteam/agent/agent_cli.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/team/role.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace agent_cli_test {

bool holds(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// Claude Code with --include-partial-messages: a call's input is charged when it starts and its output as it grows,
// so a turn cut in the middle of a call has been charged what the stream showed (the assistant line alone says 1).
TEST(AgentCliStream, ClaudeCodesTokensAreChargedAsTheRawStreamShowsThem) {
  std::unique_ptr<AgentCliStream> stream = agent_cli_for("claude-code").stream();
  const AgentCliEvent started = stream->read(
      R"({"type":"stream_event","event":{"type":"message_start","message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":900,"output_tokens":1,"cache_read_input_tokens":100}}}})");
  EXPECT_EQ(started.usage, (Usage{900, 1, 100, 0}));
  EXPECT_EQ(started.model, "claude-sonnet-4-5");
  // The whole message as Claude Code prints it mid-stream: nothing new.
  EXPECT_EQ(
      stream
          ->read(
              R"({"type":"assistant","message":{"id":"m1","content":[],"usage":{"input_tokens":900,"output_tokens":1,"cache_read_input_tokens":100}}})")
          .usage,
      Usage{});
  EXPECT_EQ(
      stream->read(R"({"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":480}}})").usage,
      (Usage{0, 479, 0, 0}));
  // A subagent's call streams beside the main one (its parent tool use names it).
  EXPECT_EQ(
      stream
          ->read(
              R"({"type":"stream_event","parent_tool_use_id":"t1","event":{"type":"message_start","message":{"id":"s1","usage":{"input_tokens":50,"output_tokens":1}}}})")
          .usage,
      (Usage{50, 1, 0, 0}));
  EXPECT_EQ(
      stream
          ->read(
              R"({"type":"stream_event","parent_tool_use_id":"t1","event":{"type":"message_delta","usage":{"output_tokens":20}}})")
          .usage,
      (Usage{0, 19, 0, 0}));
  EXPECT_EQ(
      stream->read(R"({"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":500}}})").usage,
      (Usage{0, 20, 0, 0}))
      << "the main call's count went on growing";
  // The result's totals leave the subagent out; modelUsage holds every call, a side call the stream never showed
  // among them: only that is new.
  const AgentCliEvent result = stream->read(
      R"({"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.01,"usage":{"input_tokens":900,"output_tokens":500,"cache_read_input_tokens":100},
          "modelUsage":{"claude-sonnet-4-5":{"inputTokens":950,"outputTokens":520,"cacheReadInputTokens":100},
                        "claude-haiku-4-5":{"inputTokens":30,"outputTokens":5}}})");
  EXPECT_TRUE(result.final);
  EXPECT_EQ(result.usage, (Usage{30, 5, 0, 0}));
}

// A line with a number no double holds is text, not an event, and never an exception out of the daemon.
TEST(AgentCliStream, ANumberPastAnyDoubleIsALineOfTextForEveryReader) {
  for (const char* member : {"claude-code", "codex", "mycli {prompt}"}) {
    std::unique_ptr<AgentCliStream> stream = agent_cli_for(member).stream();
    EXPECT_FALSE(stream->read(R"({"type":"result","usage":{"input_tokens":1e600}})").parsed) << member;
  }
}

TEST(AgentCliStream, AClaudeCodeResultWithoutTextSaysWhatEndedIt) {
  std::unique_ptr<AgentCliStream> stream = agent_cli_for("claude-code").stream();
  const AgentCliEvent ended =
      stream->read(R"({"type":"result","subtype":"error_max_turns","is_error":false,"num_turns":3})");
  ASSERT_TRUE(ended.failure.has_value());
  EXPECT_EQ(*ended.failure, "error_max_turns after 3 turns");
  const AgentCliEvent offline =
      stream->read(R"({"type":"result","subtype":"success","is_error":true,"result":"API Error: Connection error."})");
  EXPECT_TRUE(offline.unreachable);
  EXPECT_FALSE(offline.auth_failure);
}

// Codex says `error` while it reconnects and goes on: a notice; only turn.failed fails the turn.
TEST(AgentCliStream, ACodexErrorEventIsANoticeAndTurnFailedTheFailure) {
  std::unique_ptr<AgentCliStream> stream = agent_cli_for("codex").stream();
  const AgentCliEvent reconnect = stream->read(R"({"type":"error","message":"Reconnecting... 1/5"})");
  EXPECT_FALSE(reconnect.failure.has_value());
  EXPECT_EQ(reconnect.notice.value_or(""), "Reconnecting... 1/5");
  EXPECT_FALSE(reconnect.final);
  const AgentCliEvent failed =
      stream->read(R"({"type":"turn.failed","error":{"message":"stream disconnected before completion"}})");
  EXPECT_TRUE(failed.final);
  EXPECT_TRUE(failed.unreachable);
}

TEST(AgentCli, EachCliIsToldHowToRunHeadlessWithEvoteamsTools) {
  testing::TempDir temp;
  AgentCliInvocation turn{"do it",     temp.path(),
                          temp.path(), {"/bin/evoteam", "mcp", "--turn", "/b.json"},
                          {"compile"}, true,
                          "",          0,
                          60,          "http://127.0.0.1:9/v1",
                          0.25};
  const std::vector<std::string> claude = agent_cli_for("claude-code").argv(turn);
  EXPECT_TRUE(holds(claude, "--include-partial-messages"));
  EXPECT_TRUE(holds(claude, "--max-budget-usd"));
  EXPECT_TRUE(holds(claude, "0.250000"));
  const std::vector<std::string> codex = agent_cli_for("codex").argv(turn);
  // Headless, nobody approves a call: without this every call of evoteam's was cancelled.
  EXPECT_TRUE(holds(codex, R"(mcp_servers.evoteam.default_tools_approval_mode="approve")"));
  EXPECT_TRUE(holds(codex, R"(model_providers.evoteam.base_url="http://127.0.0.1:9/v1")"));
  EXPECT_TRUE(holds(codex, "model_providers.evoteam.supports_websockets=false"));
  EXPECT_EQ(codex.back(), "do it");
}

// A turn's environment: the CLI's documented gateway settings and agent.cli.env's entries, nothing else of the
// daemon's; secret values are redacted wherever evoteam writes text, and run files keep a secret by name.
TEST(AgentCli, ATurnGetsItsGatewaySettingsAndTheSecretsAmongThemStayOutOfRunFiles) {
  AgentMemberSettings settings;
  settings.env = {"CORP_GATEWAY_TOKEN=tok-0123456789abcdef", "MY_REGION", "UNSET_ONE"};
  const std::map<std::string, std::string> daemon = {{"ANTHROPIC_BASE_URL", "https://gateway.example/anthropic"},
                                                     {"ANTHROPIC_AUTH_TOKEN", "gw-secret-abcdef012345"},
                                                     {"HTTPS_PROXY", "http://user:pw-0123456789@proxy:3128"},
                                                     {"MY_REGION", "eu-west-1"},
                                                     {"UNRELATED_SECRET_KEY", "never-passed-0123456789"}};
  const std::map<std::string, std::string> passed =
      cli_passed_environment(agent_cli_for("claude-code"), settings, daemon);
  EXPECT_EQ(passed.at("ANTHROPIC_BASE_URL"), "https://gateway.example/anthropic");
  EXPECT_EQ(passed.at("ANTHROPIC_AUTH_TOKEN"), "gw-secret-abcdef012345");
  EXPECT_EQ(passed.at("HTTPS_PROXY"), "http://user:pw-0123456789@proxy:3128");
  EXPECT_EQ(passed.at("CORP_GATEWAY_TOKEN"), "tok-0123456789abcdef");
  EXPECT_EQ(passed.at("MY_REGION"), "eu-west-1");
  EXPECT_EQ(passed.count("UNSET_ONE"), 0U);
  EXPECT_EQ(passed.count("UNRELATED_SECRET_KEY"), 0U);
  const std::string logged = redact("token tok-0123456789abcdef and gw-secret-abcdef012345 via pw-0123456789@proxy");
  EXPECT_EQ(logged.find("tok-0123456789abcdef"), std::string::npos) << logged;
  EXPECT_EQ(logged.find("gw-secret-abcdef012345"), std::string::npos) << logged;
  EXPECT_EQ(recorded_cli_env(nlohmann::json(settings.env)),
            nlohmann::json({"CORP_GATEWAY_TOKEN", "MY_REGION", "UNSET_ONE"}));
}

// A template member's words may hold its key: run files name it by its program, and the key is redacted.
TEST(AgentCli, ATemplatesKeyIsNeitherItsNameNorLeftInText) {
  const AgentCli cli = agent_cli_for("/opt/bin/mycli --api-key sk-live-template-0123456789 --ask {prompt}");
  EXPECT_EQ(cli.name, "template:mycli");
  EXPECT_EQ(redact("argv: mycli --api-key sk-live-template-0123456789").find("0123456789"), std::string::npos);
  const AgentCli with_env = agent_cli_for("othercli MY_TOKEN=plain-secret-value-42 {prompt}");
  EXPECT_EQ(redact("plain-secret-value-42"), "[REDACTED]");
}

TEST(AgentCli, TheFailureWordsOfAnEndpointNobodyReachesAreToldFromARefusal) {
  EXPECT_TRUE(looks_like_unreachable("API Error: Connection error."));
  EXPECT_TRUE(looks_like_unreachable("error sending request for url (http://127.0.0.1:9/v1/responses)"));
  EXPECT_FALSE(looks_like_unreachable("Invalid API key · Please run /login"));
  EXPECT_TRUE(is_secret_variable_name("AWS_SECRET_ACCESS_KEY"));
  EXPECT_TRUE(is_secret_variable_name("https_proxy"));
  EXPECT_FALSE(is_secret_variable_name("CLOUD_ML_REGION"));
}

// A member reads of the tools it has, and of the GPU architectures its task builds for only.
TEST(RolePrompt, ASectionOfAnotherArchitectureIsDroppedAndTheToolsSectionReplaced) {
  const std::string prompt =
      "# Task: t\nbody\n# Hopper (sm_90a)\nwgmma\n# Blackwell (sm_100a)\ntcgen05\n# Tools\nread_file {path}\n# "
      "End\nx\n";
  const std::string host = fit_prompt(prompt, {}, "Tools", std::string("evoteam's tools: compile."));
  EXPECT_EQ(host, "# Task: t\nbody\n# Tools\nevoteam's tools: compile.\n\n# End\nx\n");
  const std::string hopper = fit_prompt(prompt, {"sm_90a"});
  EXPECT_NE(hopper.find("wgmma"), std::string::npos);
  EXPECT_EQ(hopper.find("tcgen05"), std::string::npos);
  EXPECT_NE(hopper.find("read_file"), std::string::npos) << "no replacement asked: the section stays";
}

}  // namespace agent_cli_test
}  // namespace evoteam
