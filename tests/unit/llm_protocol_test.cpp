// Wire formats of the two provider protocols, without a server.
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/llm/llm.hpp>

#include "llm/providers.hpp"

namespace evoteam {
namespace {

LlmRequest conversation_with_tool_round() {
  LlmRequest request;
  request.model = "claude-sonnet-4-5";
  request.system = "You optimise kernels.";
  request.max_tokens = 1000;
  request.tools = {{"read_file",
                    "Read a file.",
                    {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}, {"required", {"path"}}}}};
  request.messages.push_back({Role::user, {ContentBlock::make_text("Make it fast.")}});
  request.messages.push_back({Role::assistant,
                              {ContentBlock::make_text("Reading."),
                               ContentBlock::make_tool_use("call_1", "read_file", {{"path", "kernel.cpp"}})}});
  request.messages.push_back({Role::user, {ContentBlock::make_tool_result("call_1", "no such file", true)}});
  request.messages.push_back({Role::user, {ContentBlock::make_text("Keep going.")}});
  return request;
}

TEST(LlmAnthropicProtocol, CachesSystemPromptAndConversationEnd) {
  nlohmann::json body = anthropic_request_body(conversation_with_tool_round(), true);
  EXPECT_EQ(body["model"], "claude-sonnet-4-5");
  EXPECT_EQ(body["max_tokens"], 1000);
  EXPECT_FALSE(body.contains("temperature"));
  ASSERT_TRUE(body["system"].is_array());
  EXPECT_EQ(body["system"][0]["cache_control"]["type"], "ephemeral");
  EXPECT_EQ(body["tools"][0]["input_schema"]["required"][0], "path");
  EXPECT_EQ(body["messages"].back()["content"].back()["cache_control"]["type"], "ephemeral");
}

TEST(LlmAnthropicProtocol, MergesConsecutiveUserMessagesToolResultsFirst) {
  nlohmann::json body = anthropic_request_body(conversation_with_tool_round(), false);
  ASSERT_EQ(body["messages"].size(), 3u);
  const nlohmann::json& last = body["messages"][2];
  EXPECT_EQ(last["role"], "user");
  ASSERT_EQ(last["content"].size(), 2u);
  EXPECT_EQ(last["content"][0]["type"], "tool_result");
  EXPECT_EQ(last["content"][0]["tool_use_id"], "call_1");
  EXPECT_EQ(last["content"][0]["is_error"], true);
  EXPECT_EQ(last["content"][1]["type"], "text");
  EXPECT_FALSE(body["system"][0].contains("cache_control"));
}

TEST(LlmAnthropicProtocol, ParsesToolUseStopReasonAndUsage) {
  LlmResult result = parse_anthropic_reply(R"({"id":"msg_1","type":"message","role":"assistant","model":"m",
    "content":[{"type":"thinking","thinking":"x"},{"type":"text","text":"ok"},
               {"type":"tool_use","id":"toolu_1","name":"compile","input":{}}],
    "stop_reason":"tool_use","usage":{"input_tokens":12,"output_tokens":7,"cache_read_input_tokens":100,
    "cache_creation_input_tokens":30}})");
  ASSERT_TRUE(result.ok());
  const LlmResponse& response = result.response();
  ASSERT_EQ(response.content.size(), 2u);
  EXPECT_EQ(response.content[1].kind, BlockKind::tool_use);
  EXPECT_TRUE(response.content[1].input_valid());
  EXPECT_EQ(response.finish, FinishReason::tool_use);
  EXPECT_EQ(response.usage, (Usage{12, 7, 100, 30}));
}

TEST(LlmAnthropicProtocol, TruncatedBodyIsMalformedReply) {
  LlmResult result = parse_anthropic_reply(R"({"id":"msg_1","content":[{"type":"te)");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.failure().kind, FailureKind::malformed_reply);
  EXPECT_FALSE(parse_anthropic_reply(R"({"id":"msg_1"})").ok());
  EXPECT_FALSE(parse_anthropic_reply(R"([1,2])").ok());
}

// A field of the wrong type is treated as absent, not thrown as a library exception (found by fuzzing).
TEST(LlmAnthropicProtocol, ATypeFieldThatIsNotAStringIsIgnored) {
  LlmResult result = parse_anthropic_reply(
      R"({"type":["message"],"content":[{"type":[1],"text":"x"},{"type":"text","text":"kept"}],"stop_reason":"end_turn"})");
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result.response().content.size(), 1u);
  EXPECT_EQ(result.response().content[0].text, "kept");
}

TEST(LlmOpenAiProtocol, ToolResultsBecomeToolMessagesAfterTheCalls) {
  nlohmann::json body = openai_request_body(conversation_with_tool_round(), "max_completion_tokens");
  EXPECT_EQ(body["max_completion_tokens"], 1000);
  const nlohmann::json& messages = body["messages"];
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[0]["role"], "system");
  EXPECT_EQ(messages[2]["role"], "assistant");
  EXPECT_EQ(messages[2]["tool_calls"][0]["function"]["arguments"], R"({"path":"kernel.cpp"})");
  EXPECT_EQ(messages[3]["role"], "tool");
  EXPECT_EQ(messages[3]["tool_call_id"], "call_1");
  EXPECT_EQ(messages[3]["content"], "ERROR: no such file");
  EXPECT_EQ(messages[4]["role"], "user");
  EXPECT_EQ(body["tools"][0]["function"]["parameters"]["type"], "object");
}

TEST(LlmOpenAiProtocol, InvalidArgumentsAreKeptForAnErrorResult) {
  LlmResult result = parse_openai_reply(R"({"choices":[{"message":{"role":"assistant","content":null,
    "tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"k.cpp\""}},
                  {"id":"c2","type":"function","function":{"name":"compile","arguments":""}},
                  {"id":"c3","type":"function","function":{"name":"read_file","arguments":"[1]"}}]},
    "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":9,
    "prompt_tokens_details":{"cached_tokens":20}}})");
  ASSERT_TRUE(result.ok());
  const LlmResponse& response = result.response();
  ASSERT_EQ(response.content.size(), 3u);
  EXPECT_FALSE(response.content[0].input_valid());
  EXPECT_EQ(response.content[0].input_error_text, "{\"path\": \"k.cpp\"");
  EXPECT_TRUE(response.content[1].input_valid());
  EXPECT_FALSE(response.content[2].input_valid());
  EXPECT_EQ(response.finish, FinishReason::tool_use);
  // prompt_tokens includes the cached ones; the meter counts them apart.
  EXPECT_EQ(response.usage, (Usage{30, 9, 20, 0}));
}

TEST(LlmOpenAiProtocol, InvalidArgumentsTravelBackVerbatim) {
  LlmRequest request;
  request.model = "gpt-5";
  ContentBlock call = ContentBlock::make_tool_use("c1", "read_file", nlohmann::json::object());
  call.input_error_text = "{broken";
  request.messages.push_back({Role::assistant, {call}});
  nlohmann::json body = openai_request_body(request, "max_tokens");
  EXPECT_EQ(body["messages"][0]["tool_calls"][0]["function"]["arguments"], "{broken");
  EXPECT_TRUE(body.contains("max_tokens"));
}

TEST(LlmOpenAiProtocol, ReplyWithoutChoicesIsMalformed) {
  EXPECT_EQ(parse_openai_reply(R"({"choices":[]})").failure().kind, FailureKind::malformed_reply);
  EXPECT_EQ(parse_openai_reply("not json").failure().kind, FailureKind::malformed_reply);
}

TEST(LlmContent, CanonicalJsonRoundTrips) {
  ContentBlock bad = ContentBlock::make_tool_use("t", "read_file", nlohmann::json::object());
  bad.input_error_text = "{oops";
  std::vector<ContentBlock> blocks = {ContentBlock::make_text("hi"),
                                      ContentBlock::make_tool_use("t1", "compile", nlohmann::json::object()), bad,
                                      ContentBlock::make_tool_result("t1", "built", false)};
  std::vector<ContentBlock> back = content_from_json(to_json(blocks));
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[0].text, "hi");
  EXPECT_EQ(back[1].name, "compile");
  EXPECT_EQ(back[2].input_error_text, "{oops");
  EXPECT_EQ(back[3].kind, BlockKind::tool_result);
  EXPECT_EQ(back[3].id, "t1");
}

TEST(LlmContent, AFieldOfTheWrongTypeIsATypedError) {
  EXPECT_THROW(content_block_from_json({{"type", "tool_result"}, {"tool_use_id", "t1"}, {"is_error", "yes"}}),
               InvalidInput);
  EXPECT_THROW(content_block_from_json({{"type", {1}}}), InvalidInput);
  const ContentBlock result =
      content_block_from_json({{"type", "tool_result"},
                               {"tool_use_id", "t1"},
                               {"content", {{{"type", {1}}}, {{"type", "text"}, {"text", "ok"}}}}});
  EXPECT_EQ(result.text, "ok");
}

}  // namespace
}  // namespace evoteam
