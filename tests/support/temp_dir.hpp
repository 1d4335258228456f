#pragma once
// A fresh directory per test, removed with everything in it when the test ends.
#include <filesystem>
#include <random>
#include <string>

namespace evoteam::testing {

class TempDir {
 public:
  TempDir() {
    std::random_device device;
    m_path = std::filesystem::temp_directory_path() /
             ("evoteam-test-" + std::to_string(device()) + "-" + std::to_string(device()));
    std::filesystem::create_directories(m_path);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return m_path; }
  std::filesystem::path operator/(const std::string& name) const { return m_path / name; }

 private:
  std::filesystem::path m_path;
};

}  // namespace evoteam::testing
