#pragma once
// UTC timestamps: compact ones name runs, ISO ones stamp journal records, transcripts and knowledge notes.
#include <string>

namespace evoteam {

// UTC timestamp, compact form for ids: 20261129T184500Z.
std::string utc_compact_timestamp();
// UTC ISO-8601 with milliseconds: 2026-11-29T18:45:00.123Z.
std::string utc_iso_timestamp();

}  // namespace evoteam
