// The MCP server's protocol (one line in, one answer out), the turn channel between `evoteam mcp --turn` and the
// daemon, and the readers of the coding-agent CLIs' event streams.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <evoteam/agent/agent_cli.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/mcp/mcp_server.hpp>
#include <evoteam/mcp/turn_channel.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

class EchoTools : public McpToolService {
 public:
  std::vector<McpTool> tools() override {
    return {{"echo", "says it back", {{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}}}};
  }
  McpToolResult call(const std::string& name, const nlohmann::json& arguments) override {
    ++calls;
    if (arguments.contains("fail")) return {"it failed", true};
    return {name + ": " + arguments.value("text", ""), false};
  }
  std::string instructions() override { return "echo tools"; }
  int calls = 0;
};

nlohmann::json answer(McpSession& session, const std::string& line) {
  std::optional<std::string> reply = session.handle(line);
  EXPECT_TRUE(reply.has_value()) << line;
  return reply ? nlohmann::json::parse(*reply) : nlohmann::json();
}

TEST(McpServer, TheHandshakeAgreesOnAKnownRevisionAndOffersItsNewestOtherwise) {
  EchoTools tools;
  McpSession session(tools, "1.0");
  nlohmann::json reply = answer(
      session,
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  EXPECT_EQ(reply["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(reply["result"]["serverInfo"]["name"], "evoteam");
  EXPECT_EQ(reply["result"]["instructions"], "echo tools");
  reply =
      answer(session, R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}})");
  EXPECT_EQ(reply["id"], "a");
  EXPECT_EQ(reply["result"]["protocolVersion"], mcp_handshake_versions().back());
  EXPECT_FALSE(session.handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").has_value());
}

TEST(McpServer, ToolsAreListedAndCalledAndAToolsFailureIsAResult) {
  EchoTools tools;
  McpSession session(tools, "1.0");
  nlohmann::json reply = answer(session, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  ASSERT_EQ(reply["result"]["tools"].size(), 1u);
  EXPECT_EQ(reply["result"]["tools"][0]["name"], "echo");
  EXPECT_TRUE(reply["result"]["tools"][0].contains("inputSchema"));
  reply = answer(
      session, R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})");
  EXPECT_EQ(reply["result"]["content"][0]["text"], "echo: hi");
  EXPECT_FALSE(reply["result"]["isError"].get<bool>());
  reply = answer(session,
                 R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"fail":1}}})");
  EXPECT_TRUE(reply["result"]["isError"].get<bool>());
  EXPECT_FALSE(reply.contains("error"));
}

TEST(McpServer, BadMessagesGetTheProtocolsErrors) {
  EchoTools tools;
  McpSession session(tools, "1.0");
  EXPECT_EQ(answer(session, "{not json")["error"]["code"], -32700);
  EXPECT_TRUE(answer(session, "{not json")["id"].is_null());
  EXPECT_EQ(answer(session, "[1,2]")["error"]["code"], -32600);
  EXPECT_EQ(answer(session, R"({"jsonrpc":"1.0","id":5,"method":"ping"})")["error"]["code"], -32600);
  EXPECT_EQ(answer(session, R"({"jsonrpc":"2.0","id":6,"method":"resources/list"})")["error"]["code"], -32601);
  EXPECT_EQ(
      answer(session, R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}})")["error"]["code"],
      -32602);
  EXPECT_EQ(
      answer(session,
             R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":[1]}})")["error"]
                                                                                                          ["code"],
      -32602);
  EXPECT_EQ(answer(session, R"({"jsonrpc":"2.0","id":9,"method":"initialize","params":{}})")["error"]["code"], -32602);
  EXPECT_EQ(answer(session, R"({"jsonrpc":"2.0","id":10,"method":"ping"})")["result"], nlohmann::json::object());
  EXPECT_EQ(tools.calls, 0);
}

// A "jsonrpc" that is no string is an invalid request (-32600) like a wrong version, and the server goes on to the
// next line; it used to escape as a JSON type error and end `evoteam mcp` (mcp_fuzz stopped on it).
TEST(McpServer, AJsonrpcThatIsNoStringIsAnInvalidRequestAndTheServerGoesOn) {
  EchoTools tools;
  std::istringstream in(
      "{\"jsonrpc\":2,\"id\":1,\"method\":\"ping\"}\n"
      "{\"jsonrpc\":[\"2.0\"],\"id\":2,\"method\":\"ping\"}\n"
      "{\"jsonrpc\":null,\"method\":\"notifications/initialized\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
  std::ostringstream out;
  serve_mcp(in, out, tools, "1.0");
  std::istringstream replies(out.str());
  std::vector<nlohmann::json> answers;
  for (std::string line; std::getline(replies, line);) answers.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(answers.size(), 4u) << out.str();
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(answers[i]["error"]["code"], -32600) << answers[i].dump();
  EXPECT_EQ(answers[0]["id"], 1);
  EXPECT_EQ(answers[1]["id"], 2);
  EXPECT_EQ(answers[3]["id"], 3);
  EXPECT_EQ(answers[3]["result"], nlohmann::json::object());
}

// Bytes that are not UTF-8 are a parse error (-32700) answered in valid JSON, and the server keeps serving: the next
// line is answered as usual. A tool's text that is not UTF-8 reaches the client with U+FFFD in its place.
// A number no double holds stops the JSON parser with an error that is not a parse_error: it is one all the same, and
// the server goes on (it ended the server with exit 70).
TEST(McpServer, ANumberPastAnyDoubleIsAParseErrorAndTheServerGoesOn) {
  EchoTools tools;
  std::istringstream in(
      "{\"jsonrpc\":\"2.0\",\"id\":1e600,\"method\":\"ping\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
  std::ostringstream out;
  serve_mcp(in, out, tools, "1.0");
  std::istringstream replies(out.str());
  std::vector<nlohmann::json> answers;
  for (std::string line; std::getline(replies, line);) answers.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(answers.size(), 2u) << out.str();
  EXPECT_EQ(answers[0]["error"]["code"], -32700);
  EXPECT_EQ(answers[1]["id"], 2);
}

TEST(McpServer, BytesThatAreNotUtf8AreAParseErrorAndTheServerGoesOn) {
  class RawTools : public EchoTools {
   public:
    McpToolResult call(const std::string&, const nlohmann::json&) override { return {"cc1: \xff\xfe error", true}; }
  } tools;
  std::istringstream in(
      "\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\x28\",\"method\":\"ping\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}\n");
  std::ostringstream out;
  serve_mcp(in, out, tools, "1.0");
  std::istringstream replies(out.str());
  std::vector<nlohmann::json> answers;
  for (std::string line; std::getline(replies, line);) answers.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(answers.size(), 4u) << out.str();
  EXPECT_EQ(answers[0]["error"]["code"], -32700);
  EXPECT_TRUE(answers[0]["id"].is_null());
  EXPECT_EQ(answers[1]["error"]["code"], -32700);
  EXPECT_EQ(answers[2]["id"], 2);
  EXPECT_EQ(answers[2]["result"], nlohmann::json::object());
  EXPECT_EQ(answers[3]["result"]["content"][0]["text"], "cc1: \xef\xbf\xbd\xef\xbf\xbd error");
}

TEST(McpServer, TheStatelessRevisionIsDiscoveredAndAnUnknownOneRefusedWithWhatIsServed) {
  EchoTools tools;
  McpSession session(tools, "1.0");
  nlohmann::json reply = answer(
      session,
      R"({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})");
  EXPECT_EQ(reply["result"]["supportedVersions"][0], "2026-07-28");
  EXPECT_EQ(reply["result"]["resultType"], "complete");
  reply = answer(
      session,
      R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2031-01-01"}}})");
  EXPECT_EQ(reply["error"]["code"], -32022);
  EXPECT_EQ(reply["error"]["data"]["supported"][0], "2026-07-28");
}

TEST(TurnChannel, CallsReachTheDaemonWithTheTokenAndEndWithTheTurn) {
  testing::TempDir temp;
  EchoTools tools;
  TurnBinding binding{"R", 2, "optimizer", {}, make_turn_token(), "echo tools", tools.tools()};
  auto channel = std::make_unique<TurnChannel>(tools, binding.token);
  binding.socket = channel->socket_path();
  write_turn_binding(temp.path() / "mcp_turn.json", binding);
  TurnChannelClient client(read_turn_binding(temp.path() / "mcp_turn.json"));
  EXPECT_EQ(client.call("echo", {{"text", "one"}}).text, "echo: one");
  TurnBinding other = binding;
  other.token = make_turn_token();
  const McpToolResult refused = TurnChannelClient(other).call("echo", {{"text", "x"}});
  EXPECT_TRUE(refused.is_error);
  EXPECT_NE(refused.text.find("another turn"), std::string::npos);
  channel->close();
  const McpToolResult ended = client.call("echo", {{"text", "two"}});
  EXPECT_TRUE(ended.is_error);
  EXPECT_NE(ended.text.find("run R, cycle 2, role optimizer"), std::string::npos) << ended.text;
  EXPECT_EQ(tools.calls, 1);
}

TEST(TurnChannel, ABrokenBindingNamesItsField) {
  testing::TempDir temp;
  const auto path = temp.path() / "mcp_turn.json";
  std::filesystem::create_directories(temp.path());
  std::ofstream(path) << R"({"run_id":"R","cycle":"one"})";
  try {
    read_turn_binding(path);
    FAIL() << "accepted";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("role"), std::string::npos) << error.what();
  }
}

// The result's totals are Claude Code's own accounting: they add nothing for a model the stream already showed.
TEST(AgentCliStream, ClaudeCodesUsageIsCountedOncePerMessageAndItsResultAddsNothingTheStreamShowed) {
  std::unique_ptr<AgentCliStream> stream = agent_cli_for("claude-code").stream();
  const std::string message =
      R"({"type":"assistant","message":{"id":"m1","model":"claude-x","content":[],"usage":{"input_tokens":100,"output_tokens":10,"cache_read_input_tokens":5}}})";
  EXPECT_EQ(stream->read(message).usage, (Usage{100, 10, 5, 0}));
  EXPECT_EQ(stream->read(message).usage, Usage{});  // the same message again: its next content block
  const AgentCliEvent result = stream->read(
      R"({"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.5,"usage":{"input_tokens":150,"output_tokens":10,"cache_read_input_tokens":5}})");
  EXPECT_TRUE(result.final);
  EXPECT_EQ(result.usage, Usage{});
  EXPECT_DOUBLE_EQ(result.reported_cost_usd.value_or(0), 0.5);
  const AgentCliEvent refused = stream->read(
      R"({"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login"})");
  EXPECT_TRUE(refused.auth_failure);
  EXPECT_FALSE(stream->read("not json at all").parsed);
}

TEST(AgentCliStream, CodexReportsItsUsageAtTheEndWithTheCachedPartInsideItsInput) {
  std::unique_ptr<AgentCliStream> stream = agent_cli_for("codex").stream();
  EXPECT_TRUE(stream->read(R"({"type":"thread.started","thread_id":"t"})").parsed);
  const AgentCliEvent done = stream->read(
      R"({"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":400,"output_tokens":50}})");
  EXPECT_TRUE(done.final);
  EXPECT_EQ(done.usage, (Usage{600, 50, 400, 0}));
  const AgentCliEvent failed = stream->read(R"({"type":"turn.failed","error":{"message":"401 Unauthorized"}})");
  EXPECT_TRUE(failed.auth_failure);
}

TEST(AgentCli, EachCliGetsItsOwnHeadlessCommandLineAndATemplateItsPlaceholders) {
  testing::TempDir temp;
  std::filesystem::create_directories(temp.path());
  AgentCliInvocation turn{"do it",
                          temp.path(),
                          temp.path(),
                          {"/bin/evoteam", "mcp", "--turn", "/b.json"},
                          {"compile", "submit"},
                          false,
                          "m1",
                          7,
                          60,
                          "",
                          std::nullopt};
  const std::vector<std::string> claude = agent_cli_for("claude-code").argv(turn);
  EXPECT_EQ(claude[0], "claude");
  EXPECT_NE(std::find(claude.begin(), claude.end(), "mcp__evoteam__compile,mcp__evoteam__submit,Read,Glob,Grep"),
            claude.end());  // a role that does not edit gets no Edit or Write
  EXPECT_TRUE(std::filesystem::exists(temp.path() / "mcp.json"));
  const std::vector<std::string> codex = agent_cli_for("codex").argv(turn);
  EXPECT_NE(std::find(codex.begin(), codex.end(), R"(mcp_servers.evoteam.args=["mcp","--turn","/b.json"])"),
            codex.end());
  EXPECT_EQ(codex.back(), "do it");
  const std::vector<std::string> mine =
      agent_cli_for("mycli --ask '{prompt}' --mcp {mcp_config} -m {model}").argv(turn);
  EXPECT_EQ(mine, (std::vector<std::string>{"mycli", "--ask", "do it", "--mcp", (temp.path() / "mcp.json").string(),
                                            "-m", "m1"}));
  EXPECT_THROW(agent_cli_for("mycli 'unbalanced"), InvalidInput);
  EXPECT_THROW(agent_cli_for("builtin-loop"), InvalidInput);
}

}  // namespace
}  // namespace evoteam
