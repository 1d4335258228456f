#pragma once
// Tolerant readers of a run's JSON files, shared by the report views: a view shows what it can of a run
// that is being written right now or was damaged, so a missing or mistyped field reads as a fallback.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/json_fields.hpp>  // text_or
#include <evoteam/store/store.hpp>

namespace evoteam {

double number_or(const nlohmann::json& object, const char* key, double fallback);
std::optional<double> optional_number(const nlohmann::json& object, const char* key);

// Input, output and cache tokens together, as the token budget counts them.
double token_total(const nlohmann::json& tokens);

// Seconds since the Unix epoch of a journal stamp (2026-11-29T18:45:00.123Z), or nullopt when malformed.
std::optional<double> epoch_seconds(const std::string& stamp);

// The run's journal as far as it can be read, each part left out said in `skipped` (one sentence each: a missing
// or unreadable journal, a torn last line, a damaged line in the middle). A reader that then finds a damaged record
// adds it there too, so every view says what it did not count instead of showing less in silence.
JournalReplay read_run_journal(const std::filesystem::path& run_dir, std::vector<std::string>& skipped);

}  // namespace evoteam
