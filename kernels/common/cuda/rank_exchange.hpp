#pragma once
// How the ranks of a group hand each other small files without talking to the evaluator: the writer publishes
// atomically (a temporary beside the file, then rename), readers poll until the file is complete, their
// deadline passes, or the abort file appears (the evaluator creates it when another rank of the group
// failed). Plain POSIX and C++, header-only, so the evaluator's tests can play the ranks with threads.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <thread>

namespace evoteam_harness::ranks {

enum class AwaitStatus { ok, timed_out, aborted };

inline bool file_exists(const std::string& path) {
  struct stat info {};
  return !path.empty() && ::stat(path.c_str(), &info) == 0;
}

// Writes `bytes` bytes to `path` so that a reader sees either nothing or all of them.
inline bool publish_file(const std::string& path, const void* data, std::size_t bytes, std::string* error) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) {
    if (error != nullptr) *error = "cannot create " + temporary;
    return false;
  }
  const bool written = std::fwrite(data, 1, bytes, file) == bytes;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    if (error != nullptr) *error = "cannot publish " + path;
    return false;
  }
  return true;
}

// Polls for `path` holding exactly `bytes` bytes and reads them into `data`.
inline AwaitStatus await_file(const std::string& path, void* data, std::size_t bytes, double deadline_s,
                              const std::string& abort_file) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (file_exists(abort_file)) return AwaitStatus::aborted;
    if (std::FILE* file = std::fopen(path.c_str(), "rb")) {
      const std::size_t got = std::fread(data, 1, bytes, file);
      const bool longer = std::fgetc(file) != EOF;
      std::fclose(file);
      if (got == bytes && !longer) return AwaitStatus::ok;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > deadline_s)
      return AwaitStatus::timed_out;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// The name of the n-th communicator id of a group.
inline std::string id_file(const std::string& prefix, int ordinal) {
  return prefix + "." + std::to_string(ordinal) + ".id";
}

// 64-bit FNV-1a over bytes: the output hash ranks report so the evaluator can compare them bit for bit.
inline unsigned long long fnv1a(const unsigned char* data, std::size_t bytes,
                                unsigned long long hash = 1469598103934665603ull) {
  for (std::size_t i = 0; i < bytes; ++i) hash = (hash ^ data[i]) * 1099511628211ull;
  return hash;
}

}  // namespace evoteam_harness::ranks
