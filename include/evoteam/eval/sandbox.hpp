#pragma once
// Running untrusted code (the compiler on candidate sources, the harness with a candidate loaded, a coding-agent
// CLI's turn) inside bubblewrap: read-only root, fresh /tmp, $HOME hidden, no network, own IPC/UTS/PID namespaces, new
// session, dies with its parent. Only the listed directories are writable.
#include <filesystem>
#include <string>
#include <vector>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>

namespace evoteam::eval {

struct SandboxSpec {
  std::vector<std::filesystem::path> writable;  // bound read-write; the first one is the working directory
  std::vector<std::filesystem::path> readable;  // re-exposed read-only (they may sit under hidden directories)
  std::vector<std::filesystem::path> devices;   // device nodes bound into the fresh /dev (GPU runs)
  // The ranks of a group (eval/rank_group.hpp) talk to each other: they keep the host's network (NCCL's
  // bootstrap sockets), IPC and PID namespaces (CUDA IPC over NVLink) and share `shared_memory` as /dev/shm.
  bool rank_group = false;
  std::filesystem::path shared_memory;
  // A coding-agent CLI (a team member) talks to its model's API: it keeps the network, sees no user's home ($HOME,
  // /root, /home are empty; its own private home is among `writable`), and writes only where `writable` says.
  bool agent_cli = false;
};

// The GPU's device nodes (/dev/nvidia*), which a sandboxed CUDA process needs; empty on a machine without them.
std::vector<std::filesystem::path> gpu_device_nodes();

// `mode` must be resolved (bwrap or none); none returns argv unchanged.
std::vector<std::string> sandbox_argv(SandboxMode mode, const std::vector<std::string>& argv, const SandboxSpec& spec);

// Whether bubblewrap can start a process here (a user namespace may be forbidden, bwrap missing, ...).
bool probe_bwrap(ProcessRunner& runner, std::string* why);

}  // namespace evoteam::eval
