#pragma once
// JSON POST over libcurl with the retry policy of the official SDKs: exponential backoff with jitter on 408,
// 409, 429, 5xx (529 included) and transient network errors, honouring retry-after(-ms) and x-should-retry;
// never on quota 429s. Cancelled when the daemon is interrupted. Headers are never logged.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/llm/llm.hpp>

namespace evoteam::http {

struct Request {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; they may hold a key, so they are never logged
  std::string body;
  // "user:password" (percent-encoded, as a URL's user information writes it): sent as HTTP basic authentication,
  // never logged; the url itself carries none.
  std::string credentials;
};

struct Response {
  long status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

enum class Failure { none, network, timeout, http_status, interrupted };

struct Outcome {
  Failure failure = Failure::none;
  Response response;  // the last response received (also for http_status failures)
  std::string error;  // transport error text for network / timeout failures
  int attempts = 0;
  int unknown_cost_attempts = 0;  // attempts that failed after the request may have been processed
  double latency_s = 0;           // from the first attempt to the end
};

// One GET of `request.url` (its body is not sent), without retries: a question asked of a server before a run
// (its models, its properties), whose failure is reported rather than waited out.
Outcome get(const Request& request, const HttpSettings& settings);

// Sends `request` and retries per the policy; `what` names the provider in log lines.
Outcome post(const Request& request, const HttpSettings& settings, const std::string& what);

// --- Policy pieces, exposed for tests --------------------------------------------------------------------

// Whether a status is worth retrying (the body is read to spot quota and spend-limit 429s).
bool retryable_status(long status, const std::string& body);
// The server's requested delay from retry-after-ms, retry-after seconds or an HTTP date; nullopt if none.
std::optional<double> retry_after_seconds(const std::map<std::string, std::string>& headers);
// min(initial * 2^retry, max) * jitter, with jitter in [0.75, 1].
double backoff_delay(int retry, const HttpSettings& settings, double jitter);

}  // namespace evoteam::http
