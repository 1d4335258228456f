// The request queue: every move between folders is one rename(2), which is atomic on a local file system and on
// the NFS servers clusters share run directories from, so two workers never claim one request.
#include "cluster/request_queue.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

namespace evoteam::cluster {

namespace {

constexpr const char* k_request_file = "request.json";
constexpr const char* k_result_file = "result.json";

// Milliseconds first, so names sort in submission order; the counter separates requests of one millisecond.
std::string next_request_id() {
  static std::atomic<unsigned> counter{0};
  const long long ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  char id[48];
  std::snprintf(id, sizeof id, "r%013lld-%06u", ms, counter++ % 1000000u);
  return id;
}

std::vector<std::string> entries_of(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// false when `from` is gone (another process moved it first); throws IoError for any other failure.
bool move(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::error_code error;
  std::filesystem::rename(from, to, error);
  if (!error) {
    fsync_directory(to.parent_path());
    return true;
  }
  if (error == std::errc::no_such_file_or_directory || error == std::errc::directory_not_empty) return false;
  throw IoError("cannot move " + from.string() + " to " + to.string() + ": " + error.message());
}

}  // namespace

RequestQueue::RequestQueue(std::filesystem::path root) : m_root(std::move(root)) {
  for (const char* name : {"staging", "pending", "claimed", "done"}) evoteam::create_directories(folder(name));
}

std::string RequestQueue::submit(nlohmann::json request, const std::filesystem::path& sources) {
  const std::string id = next_request_id();
  request["id"] = id;
  if (!request.contains("attempt")) request["attempt"] = 1;
  const std::filesystem::path staged = folder("staging") / id;
  copy_tree(sources, staged / "src");
  write_json_atomic(staged / k_request_file, request);
  if (!move(staged, folder("pending") / id)) throw IoError("request " + id + " vanished from " + staged.string());
  return id;
}

std::optional<nlohmann::json> RequestQueue::take_result(const std::string& id) {
  const std::filesystem::path dir = folder("done") / id;
  if (!std::filesystem::is_regular_file(dir / k_result_file)) return std::nullopt;
  nlohmann::json result = read_json_file(dir / k_result_file);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return result;
}

std::vector<std::string> RequestQueue::return_claims(
    const std::string& worker, int max_attempts, const std::function<nlohmann::json(const nlohmann::json&)>& give_up) {
  std::vector<std::string> returned;
  const std::filesystem::path held = folder("claimed") / worker;
  for (const std::string& id : entries_of(held)) {
    const std::filesystem::path dir = held / id;
    nlohmann::json request = read_json_file(dir / k_request_file);
    const int attempt = request.value("attempt", 1);
    if (attempt >= max_attempts) {
      write_json_atomic(dir / k_result_file, give_up(request));
      move(dir, folder("done") / id);
      continue;
    }
    request["attempt"] = attempt + 1;
    write_json_atomic(dir / k_request_file, request);
    if (move(dir, folder("pending") / id)) returned.push_back(id);
  }
  std::error_code ignored;
  std::filesystem::remove(held, ignored);  // only when empty: a worker still writing keeps its folder
  return returned;
}

std::vector<std::string> RequestQueue::claim_holders() const {
  std::vector<std::string> holders;
  for (const std::string& worker : entries_of(folder("claimed")))
    if (!entries_of(folder("claimed") / worker).empty()) holders.push_back(worker);
  return holders;
}

void RequestQueue::reset() {
  std::error_code ignored;
  for (const char* name : {"staging", "pending", "claimed", "done"}) {
    std::filesystem::remove_all(folder(name), ignored);
    evoteam::create_directories(folder(name));
  }
  std::filesystem::remove(m_root / "stop", ignored);
}

void RequestQueue::request_stop() { write_file_atomic(m_root / "stop", "stop\n"); }

bool RequestQueue::stop_requested() const { return std::filesystem::exists(m_root / "stop"); }

std::optional<Claim> RequestQueue::claim(const std::string& worker, const std::string& id) {
  const std::filesystem::path held = folder("claimed") / worker;
  evoteam::create_directories(held);
  const std::vector<std::string> candidates = id.empty() ? entries_of(folder("pending")) : std::vector{id};
  for (const std::string& name : candidates) {
    if (!move(folder("pending") / name, held / name)) continue;  // another worker was first
    return Claim{name, held / name, read_json_file(held / name / k_request_file)};
  }
  return std::nullopt;
}

void RequestQueue::complete(const Claim& claim, const nlohmann::json& result) {
  // Gone when the daemon gave this claim up as lost meanwhile: the request was finished or retried without it.
  if (!std::filesystem::is_directory(claim.dir)) return;
  write_json_atomic(claim.dir / k_result_file, result);
  move(claim.dir, folder("done") / claim.id);
}

}  // namespace evoteam::cluster
