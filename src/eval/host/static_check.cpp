#include "eval/host/static_check.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

namespace evoteam::eval {
namespace {

struct Category {
  const char* name;
  std::vector<const char*> patterns;
};

// Only for naming the reason; what is allowed is decided by the allowlist.
const std::vector<Category>& categories() {
  static const std::vector<Category> list = {
      {"threads", {"pthread_*", "thrd_*", "clone", "__clone*", "_ZNSt6thread*", "_ZNSt10jthread*", "std::thread*"}},
      {"static local state", {"__cxa_guard_*"}},
      {"processes",
       {"fork",
        "vfork",
        "exec*",
        "system",
        "posix_spawn*",
        "popen",
        "pclose",
        "kill",
        "raise",
        "exit",
        "_exit",
        "_Exit",
        "quick_exit",
        "atexit",
        "at_quick_exit",
        "__cxa_atexit",
        "__cxa_thread_atexit*",
        "wait",
        "waitpid",
        "wait3",
        "wait4",
        "waitid"}},
      {"dynamic loading", {"dlopen", "dlmopen", "dlsym", "dlvsym", "dlclose", "dlerror", "dladdr*"}},
      {"file I/O",
       {"fopen*",
        "fdopen",
        "freopen*",
        "open",
        "open64",
        "openat*",
        "creat*",
        "read",
        "write",
        "pread*",
        "pwrite*",
        "readv",
        "writev",
        "close",
        "fread*",
        "fwrite*",
        "fgets*",
        "fputs*",
        "fputc*",
        "fgetc*",
        "getc*",
        "putc*",
        "fprintf",
        "printf",
        "vprintf",
        "vfprintf",
        "puts",
        "putchar*",
        "__printf_chk",
        "__fprintf_chk",
        "__vfprintf_chk",
        "_IO_*",
        "stdout",
        "stderr",
        "stdin",
        "perror",
        "fflush",
        "fclose",
        "fseek*",
        "ftell*",
        "stat*",
        "fstat*",
        "lstat*",
        "unlink*",
        "rename*",
        "mkdir*",
        "opendir",
        "readdir*",
        "_ZSt4cout",
        "_ZSt4cerr",
        "_ZSt4clog",
        "_ZNSo*",
        "_ZNSi*",
        "_ZStlsI*",
        "_ZNSt14basic_ifstream*",
        "_ZNSt14basic_ofstream*",
        "_ZNSt13basic_fstream*"}},
      {"network",
       {"socket", "socketpair", "connect", "bind", "listen", "accept*", "send*", "recv*", "getaddrinfo",
        "gethostbyname*", "inet_*"}},
      {"timers",
       {"clock_gettime", "clock_getres", "gettimeofday", "time", "clock", "times", "_ZNSt6chrono*", "timer_*",
        "nanosleep", "clock_nanosleep", "usleep", "sleep", "__rdtsc"}},
      {"allocation", {"malloc",   "calloc",     "realloc", "reallocarray", "free",   "aligned_alloc", "posix_memalign",
                      "memalign", "valloc",     "pvalloc", "mmap*",        "munmap", "mremap",        "brk",
                      "sbrk",     "alloca_chk", "_Znw*",   "_Zna*",        "_Zdl*",  "_Zda*"}},
      {"signals",
       {"signal", "sigaction", "sigprocmask", "pthread_sigmask", "setitimer", "getitimer", "alarm", "sigaltstack",
        "sigsetjmp", "siglongjmp", "setjmp", "longjmp", "_setjmp", "__sigsetjmp"}},
      {"environment", {"getenv", "secure_getenv", "setenv", "putenv", "unsetenv", "clearenv", "environ", "__environ"}},
      {"system calls",
       {"syscall", "ioctl", "prctl", "ptrace", "mprotect", "madvise", "sched_*", "setrlimit*", "getrlimit*", "prlimit*",
        "getpid", "gettid", "getrusage"}},
      {"randomness",
       {"rand", "rand_r", "random", "srand", "srandom", "drand48", "getrandom", "getentropy", "arc4random*"}},
  };
  return list;
}

std::vector<std::string> split_whitespace(const std::string& line) {
  std::vector<std::string> parts;
  std::istringstream stream(line);
  std::string part;
  while (stream >> part) parts.push_back(part);
  return parts;
}

bool is_hex(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Writable state in an object: a section the loader maps writable by its flags (so .lbss or a section named at
// will counts as well as .data and .bss), or one of the usual names. .data.rel.ro is read-only once relocated.
bool is_writable_data_section(const ObjectScan& scan, const std::string& name) {
  if (name.rfind(".data.rel.ro", 0) == 0) return false;
  if (scan.writable_sections.count(name) > 0) return true;
  for (const char* prefix : {".data", ".bss", ".tdata", ".tbss", ".sdata", ".sbss", ".lbss", ".ldata", "__DATA"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

bool is_constructor_section(const std::string& name) {
  for (const char* prefix : {".init_array", ".preinit_array", ".ctors", ".fini_array", ".dtors", ".init", ".fini"})
    if (name == prefix || name.rfind(std::string(prefix) + ".", 0) == 0) return true;
  return false;
}

}  // namespace

bool glob_match(const std::string& pattern, const std::string& text) {
  std::size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string symbol_category(const std::string& symbol) {
  // Versioned names ("memcpy@GLIBC_2.14") are checked without the version.
  const std::string name = symbol.substr(0, symbol.find('@'));
  for (const Category& category : categories())
    for (const char* pattern : category.patterns)
      if (glob_match(pattern, name)) return category.name;
  return "";
}

ObjectScan parse_objdump(const std::string& object, const std::string& text) {
  ObjectScan scan;
  scan.object = object;
  enum class Part { none, sections, symbols, disassembly } part = Part::none;
  std::istringstream lines(text);
  std::string line;
  std::ostringstream disassembly;
  std::string last_section;  // objdump -h prints each section's flags on the line after it
  while (std::getline(lines, line)) {
    if (line.rfind("Sections:", 0) == 0) {
      part = Part::sections;
      continue;
    }
    if (line.rfind("SYMBOL TABLE:", 0) == 0) {
      part = Part::symbols;
      continue;
    }
    if (line.rfind("Disassembly of section", 0) == 0) {
      part = Part::disassembly;
      continue;
    }
    if (part == Part::sections) {
      std::vector<std::string> fields = split_whitespace(line);
      // "  3 .bss          00000400  0000000000000000 ..."
      if (fields.size() >= 3 &&
          std::all_of(fields[0].begin(), fields[0].end(),
                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }) &&
          is_hex(fields[2])) {
        scan.sections[fields[1]] = std::stoull(fields[2], nullptr, 16);
        last_section = fields[1];
      } else if (!last_section.empty() && line.find("ALLOC") != std::string::npos) {
        // "                  CONTENTS, ALLOC, LOAD, DATA"
        if (line.find("READONLY") == std::string::npos && line.find("CODE") == std::string::npos)
          scan.writable_sections.insert(last_section);
        last_section.clear();
      }
    } else if (part == Part::symbols) {
      // "0000000000000000 g     F .text\t0000000000000042 matmul" or "... *UND*\t0000000000000000 memcpy"
      if (line.size() < 17 || !is_hex(line.substr(0, 16))) continue;
      const std::size_t tab = line.find('\t');
      if (tab == std::string::npos) continue;
      const std::string flags = line.substr(16, tab - 16);
      std::vector<std::string> tail = split_whitespace(line.substr(tab + 1));
      if (tail.size() < 2) continue;
      const std::string& name = tail.back();
      if (flags.find("*UND*") != std::string::npos) {
        scan.undefined.push_back(name);
      } else {
        // The seven flag characters after the address; 'i' marks a GNU indirect function.
        if (flags.size() > 7 && flags.substr(1, 7).find('i') != std::string::npos)
          scan.indirect_functions.push_back(name);
        // Flag columns: [1] is l/g/u (local, global, unique global), [2] is w for weak definitions.
        const bool global = flags.size() > 2 && (flags[1] == 'g' || flags[1] == 'u' || flags[2] == 'w');
        if (global) scan.defined_global.push_back(name);
      }
    } else if (part == Part::disassembly) {
      disassembly << line << "\n";
      // "   4:\tsyscall " or "  1f:\tmov    %rax,%rbx"
      const std::size_t tab = line.find(":\t");
      if (tab == std::string::npos) continue;
      std::vector<std::string> fields = split_whitespace(line.substr(tab + 2));
      if (fields.empty()) continue;
      std::size_t index = 0;
      // Skip prefixes so "lock xadd" and "rep stos" count their instruction.
      while (index + 1 < fields.size() &&
             (fields[index] == "lock" || fields[index] == "rep" || fields[index] == "repz" ||
              fields[index] == "repnz" || fields[index] == "notrack" || fields[index] == "bnd" ||
              fields[index] == "data16" || fields[index] == "cs" || fields[index] == "ds"))
        ++index;
      ++scan.instructions[fields[index]];
    }
  }
  scan.disassembly = disassembly.str();
  return scan;
}

std::optional<StaticFinding> check_sources(const Task& task, const std::map<std::string, std::string>& files) {
  static const std::regex include_line(R"(^\s*#\s*include\s*(.*)$)");
  static const std::regex include_target(R"(^[<"]([^>"]*)[>"])");
  std::set<std::string> task_private = {task.reference_file, "task.json"};
  if (!task.hooks_file.empty()) task_private.insert(task.hooks_file);
  if (!task.baseline.file.empty()) task_private.insert(task.baseline.file);
  if (!task.vendor.file.empty()) task_private.insert(task.vendor.file);
  for (const auto& [file, text] : files) {
    std::istringstream lines(text);
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
      ++number;
      std::smatch match;
      if (!std::regex_match(line, match, include_line)) continue;
      const std::string argument = match[1].str();
      StaticFinding finding;
      finding.evidence = {{"file", file}, {"line", number}, {"text", line}};
      std::smatch target;
      if (!std::regex_search(argument, target, include_target)) {
        finding.reason = "computed #include (the target must be a literal)";
        return finding;
      }
      const std::string path = target[1].str();
      if (!path.empty() && path[0] == '/') {
        finding.reason = "#include by absolute path: " + path;
        return finding;
      }
      for (const auto& part : std::filesystem::path(path))
        if (part == "..") {
          finding.reason = "#include through '..': " + path;
          return finding;
        }
      const std::string base = std::filesystem::path(path).filename().string();
      for (const std::string& hidden : task_private)
        if (base == std::filesystem::path(hidden).filename().string()) {
          finding.reason =
              "#include of a task file (" + hidden + "): the reference and the harness's files are off limits";
          return finding;
        }
    }
  }
  return std::nullopt;
}

std::optional<StaticFinding> check_object(const Task& task, const ObjectScan& scan, const StaticPolicy& policy) {
  StaticFinding finding;
  for (const std::string& symbol : scan.undefined) {
    const std::string name = symbol.substr(0, symbol.find('@'));
    bool allowed = false;
    for (const std::string& pattern : policy.allowed_symbols) allowed |= glob_match(pattern, name);
    if (allowed) continue;
    const std::string category = symbol_category(name);
    finding.reason = "forbidden symbol " + name + " (" + (category.empty() ? "not on the allowlist" : category) + ")";
    finding.evidence = {
        {"object", scan.object}, {"symbol", name}, {"category", category.empty() ? "not allowlisted" : category}};
    return finding;
  }
  for (const std::string& symbol : scan.defined_global) {
    if (symbol == task.entry.name) continue;
    bool runtime_name = !symbol_category(symbol).empty() || symbol.rfind("evoteam_", 0) == 0;
    for (const std::string& pattern : policy.allowed_symbols) runtime_name |= glob_match(pattern, symbol);
    if (runtime_name) {
      finding.reason = "defines " + symbol + ", which would interpose a runtime or harness function";
      finding.evidence = {{"object", scan.object}, {"symbol", symbol}};
      return finding;
    }
  }
  if (!scan.indirect_functions.empty()) {
    finding.reason = "GNU indirect function " + scan.indirect_functions.front() +
                     ": its resolver runs when the object loads, code outside the entry point is not allowed";
    finding.evidence = {{"object", scan.object}, {"symbol", scan.indirect_functions.front()}};
    return finding;
  }
  for (const auto& [section, size] : scan.sections) {
    if (size == 0) continue;
    if (is_constructor_section(section)) {
      finding.reason =
          "static constructors or destructors (" + section + "): code outside the entry point is not allowed";
      finding.evidence = {{"object", scan.object}, {"section", section}};
      return finding;
    }
    if (policy.forbid_writable_data && is_writable_data_section(scan, section)) {
      finding.reason = "writable global or static data (" + section + ", " + std::to_string(size) +
                       " bytes): state kept across calls is not allowed";
      finding.evidence = {{"object", scan.object}, {"section", section}, {"bytes", size}};
      return finding;
    }
  }
  for (const std::string& instruction : policy.forbidden_instructions) {
    auto it = scan.instructions.find(instruction);
    if (it == scan.instructions.end()) continue;
    finding.reason =
        "forbidden instruction " + instruction + " (system calls, timers, randomness and CPUID are the harness's)";
    finding.evidence = {{"object", scan.object}, {"instruction", instruction}, {"count", it->second}};
    return finding;
  }
  return std::nullopt;
}

std::optional<StaticFinding> check_task_constraints(const Task& task, const std::map<std::string, std::string>& files,
                                                    const std::vector<ObjectScan>& scans,
                                                    std::vector<std::string>* adopted) {
  for (const StaticConstraint& constraint : task.static_constraints) {
    std::string haystack;
    if (constraint.scope == "source") {
      for (const auto& [file, text] : files) haystack += text + "\n";
    } else if (constraint.scope == "symbols") {
      for (const ObjectScan& scan : scans) {
        for (const std::string& symbol : scan.undefined) haystack += symbol + "\n";
        for (const std::string& symbol : scan.defined_global) haystack += symbol + "\n";
      }
    } else if (constraint.scope == "disassembly") {
      for (const ObjectScan& scan : scans) haystack += scan.disassembly;
    } else {
      continue;  // ptx and sass belong to the cuda target
    }
    const bool found = std::regex_search(haystack, std::regex(constraint.pattern));
    if (constraint.once_adopted) {
      // Never a rejection here: the lab holds a team to it once the run's best has adopted it.
      if (found) adopted->push_back(constraint.name);
      continue;
    }
    if (found != constraint.required) {
      StaticFinding finding;
      finding.reason = "task constraint \"" + constraint.name + "\" " + (constraint.required ? "requires" : "forbids") +
                       " /" + constraint.pattern + "/ in " + constraint.scope +
                       (constraint.message.empty() ? "" : ": " + constraint.message);
      finding.evidence = {
          {"constraint", constraint.name}, {"scope", constraint.scope}, {"pattern", constraint.pattern}};
      return finding;
    }
  }
  return std::nullopt;
}

std::vector<std::string> source_warnings(const Task& task, const std::map<std::string, std::string>& files) {
  std::set<std::int64_t> dimensions;
  for (const Workload& workload : task.workloads)
    for (const auto& [axis, value] : workload.axes)
      if (value >= 16) dimensions.insert(value);
  std::vector<std::string> warnings;
  static const std::regex literal(R"(\b([0-9]+)\b)");
  std::set<std::int64_t> reported;
  for (const auto& [file, text] : files) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), literal); it != std::sregex_iterator(); ++it) {
      const std::string digits = (*it)[1].str();
      if (digits.size() > 12) continue;
      const std::int64_t value = std::stoll(digits);
      if (dimensions.count(value) && reported.insert(value).second)
        warnings.push_back(file + ": the literal " + digits +
                           " equals a workload dimension; hidden shapes test other sizes, so do not specialise on it");
    }
  }
  return warnings;
}

}  // namespace evoteam::eval
