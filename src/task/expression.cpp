// Axis, shape, FLOP/byte and constraint expressions: muparser plus the few operators shape arithmetic needs.
#include <evoteam/core/error.hpp>
#include <evoteam/task/task.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include <muParser.h>

namespace evoteam {
namespace {

double modulo(double a, double b) { return b == 0 ? NAN : std::fmod(a, b); }
double floor_of(double a) { return std::floor(a); }
double ceil_of(double a) { return std::ceil(a); }
// Ceiling division, the usual way to count tiles: cdiv(M, 64).
double ceil_div(double a, double b) { return b == 0 ? NAN : std::ceil(a / b); }

}  // namespace

double evaluate_expression(const std::string& expression, const std::map<std::string, double>& variables,
                           const std::string& where) {
  if (expression.empty()) throw InvalidInput(where + ": empty expression");
  // muparser binds variables by address, so keep a local copy that outlives Eval().
  std::map<std::string, double> values = variables;
  try {
    mu::Parser parser;
    parser.DefineOprt("%", modulo, mu::prMUL_DIV, mu::oaLEFT, true);
    parser.DefineFun("floor", floor_of);
    parser.DefineFun("ceil", ceil_of);
    parser.DefineFun("cdiv", ceil_div);
    for (auto& [name, value] : values) parser.DefineVar(name, &value);
    parser.SetExpr(expression);
    double result = parser.Eval();
    if (!std::isfinite(result))
      throw InvalidInput(where + ": expression '" + expression + "' is not finite (division by zero?)");
    return result;
  } catch (const mu::Parser::exception_type& error) {
    throw InvalidInput(where + ": cannot evaluate '" + expression + "': " + error.GetMsg());
  }
}

std::map<std::string, std::int64_t> workload_axes(const Task& task, const Workload& workload) {
  std::map<std::string, std::int64_t> axes = workload.axes;
  for (const Axis& axis : task.axes)
    if (axis.is_const) axes[axis.name] = axis.value;
  return axes;
}

namespace {

// A whole number as its digits ("9223372036854775808" would read as a size), anything else in the shortest form.
std::string fixed_or_general(double value) {
  char text[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15)
    std::snprintf(text, sizeof text, "%.0f", value);
  else
    std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::map<std::string, double> as_doubles(const std::map<std::string, std::int64_t>& axes) {
  std::map<std::string, double> values;
  for (const auto& [name, value] : axes) values[name] = static_cast<double>(value);
  return values;
}

}  // namespace

std::int64_t tensor_elements(const TensorSpec& tensor, const std::map<std::string, std::int64_t>& axes) {
  std::map<std::string, double> values = as_doubles(axes);
  // 1e15 elements is a petabyte of bytes at the least: no machine holds such a tensor, and every count below it
  // (and every product checked against it) fits a 64-bit integer without wrapping.
  constexpr double k_max_elements = 1e15;
  std::int64_t count = 1;
  for (std::size_t i = 0; i < tensor.shape.size(); ++i) {
    const std::string where = "tensor " + tensor.name + " shape[" + std::to_string(i) + "]";
    double extent = evaluate_expression(tensor.shape[i], values, where);
    const std::string said = "'" + tensor.shape[i] + "' gives " + fixed_or_general(extent);
    if (extent < 0 || extent != std::floor(extent)) throw InvalidInput(where + ": " + said + ", not a size");
    if (extent > k_max_elements) throw InvalidInput(where + ": " + said + ", above 1e15: too large for a size");
    if (extent > 0 && static_cast<double>(count) > k_max_elements / extent)
      throw InvalidInput("tensor " + tensor.name + ": more than 1e15 elements (" + said + " at shape[" +
                         std::to_string(i) + "]): too large for any machine");
    count *= static_cast<std::int64_t>(extent);
  }
  return count;
}

double workload_flops(const Task& task, const std::map<std::string, std::int64_t>& axes) {
  if (task.flops.empty()) return 0;
  return evaluate_expression(task.flops, as_doubles(axes), task.name + ": flops");
}

double workload_bytes(const Task& task, const std::map<std::string, std::int64_t>& axes) {
  if (task.bytes.empty()) return 0;
  return evaluate_expression(task.bytes, as_doubles(axes), task.name + ": bytes");
}

std::optional<std::string> violated_constraint(const Task& task, const std::map<std::string, std::int64_t>& axes) {
  std::map<std::string, double> values = as_doubles(axes);
  for (const std::string& constraint : task.constraints)
    if (evaluate_expression(constraint, values, task.name + ": constraint") == 0) return constraint;
  return std::nullopt;
}

}  // namespace evoteam
