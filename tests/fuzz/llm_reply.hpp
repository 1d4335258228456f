#pragma once
// Both provider parsers are driven the same way: as a 200 reply, and as the body of a failed request.
#include <string>

#include "llm/http.hpp"
#include "llm/providers.hpp"

#include "fuzz/fuzz_support.hpp"

namespace evoteam::fuzz {

inline void parse_reply_every_way(const std::string& body, LlmResult (*parse)(const std::string&),
                                  const std::string& provider) {
  expect_clean_outcome([&] { parse(body); });
  for (int status : {400, 429, 529}) {
    http::Outcome outcome;
    outcome.failure = http::Failure::http_status;
    outcome.response.status = status;
    outcome.response.body = body;
    outcome.attempts = 1;
    expect_clean_outcome([&] { failure_from(outcome, provider); });
  }
}

}  // namespace evoteam::fuzz
