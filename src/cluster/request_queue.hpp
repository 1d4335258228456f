#pragma once
// The run directory's queue of evaluation requests between the daemon and its workers (cluster.hpp has the
// protocol). Under <run>/cluster:
//   staging/<id>/            being written by the daemon (request.json, src/)
//   pending/<id>/            waiting for a worker
//   claimed/<worker>/<id>/   being evaluated by that worker
//   done/<id>/               result.json written; the daemon reads it and removes the folder
//   stop                     present: workers exit at their next look
// Request ids sort in submission order, so workers serve the oldest first.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam::cluster {

struct Claim {
  std::string id;
  std::filesystem::path dir;  // claimed/<worker>/<id>: request.json and src/
  nlohmann::json request;
};

class RequestQueue {
 public:
  explicit RequestQueue(std::filesystem::path root);

  // Daemon side. submit copies `sources` (the candidate's files) so the request does not depend on a workspace
  // that changes under it; the request's "id" and "attempt" (1) are set here. Returns the id.
  std::string submit(nlohmann::json request, const std::filesystem::path& sources);
  // The result of a finished request, removing it from done/; nullopt while it is not finished.
  std::optional<nlohmann::json> take_result(const std::string& id);
  // Puts a lost worker's claims back in pending/ with their attempt counted up; a claim that has had
  // `max_attempts` is finished instead with `give_up(request)` as its result. Returns the ids put back.
  std::vector<std::string> return_claims(const std::string& worker, int max_attempts,
                                         const std::function<nlohmann::json(const nlohmann::json&)>& give_up);
  // Workers holding claims now.
  std::vector<std::string> claim_holders() const;
  // Empties every folder and the stop mark: a daemon starting (or resuming) a run owns no earlier request.
  void reset();
  void request_stop();

  // Worker side: the oldest pending request, or the one named.
  std::optional<Claim> claim(const std::string& worker, const std::string& id = "");
  void complete(const Claim& claim, const nlohmann::json& result);
  bool stop_requested() const;

 private:
  std::filesystem::path folder(const char* name) const { return m_root / name; }
  std::filesystem::path m_root;
};

}  // namespace evoteam::cluster
