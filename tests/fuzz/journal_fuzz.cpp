// Journal replay, and what status and report build from a journal: input is journal.jsonl beside a valid run.json.
#include <evoteam/report/run_report.hpp>
#include <evoteam/report/status.hpp>
#include <evoteam/store/store.hpp>

#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path run =
      evoteam::fuzz::run_dir_with(evoteam::fuzz::valid_run_json(), evoteam::fuzz::as_text(data, size));
  evoteam::fuzz::expect_clean_outcome([&] { evoteam::replay_journal(run / "journal.jsonl"); });
  evoteam::fuzz::expect_clean_outcome([&] { evoteam::format_run_status(evoteam::run_status(run)); });
  evoteam::fuzz::expect_clean_outcome([&] { evoteam::render_report_markdown(evoteam::load_run_report(run)); });
  return 0;
}
