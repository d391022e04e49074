// The interface the runtime's unit tests call (call plans, the team of
// ranks): f(IN long n, IN double x[n], INOUT double z[n], OUT double y[n],
// WORK double w[n]), parameter i at index i.
#pragma once

#include <string>
#include <utility>

#include "ninf.pb.h"

namespace ninf::test {

inline wire::FunctionInterface SampleInterface() {
  wire::FunctionInterface iface;
  iface.set_name("f");
  const std::pair<const char *, wire::Mode> params[] = {{"n", wire::MODE_IN},
                                                        {"x", wire::MODE_IN},
                                                        {"z", wire::MODE_INOUT},
                                                        {"y", wire::MODE_OUT},
                                                        {"w", wire::MODE_WORK}};
  for (const auto &[name, mode] : params) {
    wire::Param *p = iface.add_params();
    p->set_name(name);
    p->set_mode(mode);
    p->set_type(std::string(name) == "n" ? wire::TYPE_LONG : wire::TYPE_DOUBLE);
    if (std::string(name) == "n") continue;
    wire::ExprNode *node = p->add_dims()->add_nodes();  // [n]
    node->set_op(wire::ExprNode::PARAM);
    node->set_value(0);
  }
  return iface;
}

}  // namespace ninf::test
