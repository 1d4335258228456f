#pragma once
// evoteam's tools as an MCP server serves them: the toolbox a built-in member gets (the lab's evaluation tools,
// the knowledge, the binding rule), less the file tools — a coding-agent CLI edits its workspace with its own — and
// with describe_task, the task's description and contract. Every call goes through the toolbox, so a CLI member's
// compile or submit is the same lab call, with the same records and budgets, as a built-in member's.
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/agent/tools.hpp>
#include <evoteam/mcp/mcp_server.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam {

class ToolboxMcpService : public McpToolService {
 public:
  // end_the_turn: a member's submit ends its turn (later calls are refused); go_on: a person's session records a
  // candidate per submit and goes on.
  enum class Submits { end_the_turn, go_on };
  // `contract`: what describe_task answers.
  ToolboxMcpService(Toolbox& toolbox, std::string contract, std::string instructions,
                    Submits submits = Submits::end_the_turn);

  std::vector<McpTool> tools() override;
  McpToolResult call(const std::string& name, const nlohmann::json& arguments) override;
  std::string instructions() override { return m_instructions; }

  // The MCP names of the toolbox's tools served (describe_task included).
  std::vector<std::string> tool_names();
  // The member submitted (submit ran); later calls are answered that the turn is over.
  bool submitted() const;
  // A run budget the toolbox found spent, once it did.
  std::optional<std::string> budget_spent() const;
  int calls() const;
  // Calls that did something and succeeded (describe_task, which only reads the contract, is not counted): a turn
  // with none and an unchanged workspace did nothing.
  int useful_calls() const;

 private:
  Toolbox& m_toolbox;
  std::string m_contract;
  std::string m_instructions;
  Submits m_submits;
  mutable std::mutex m_mutex;
  bool m_submitted = false;
  std::optional<std::string> m_budget_spent;
  int m_calls = 0;
  int m_useful_calls = 0;
};

// The task's description and contract as describe_task gives it: the README (or description), the target, the
// files to edit, the params and the static constraints.
std::string describe_task_contract(const Task& task);

// What the server is for, for a client's model.
std::string tool_server_instructions(const std::string& scope);

}  // namespace evoteam
