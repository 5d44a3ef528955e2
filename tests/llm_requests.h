#pragma once
// The requests a FakeLlm received, parsed: for the integration tests that
// check what the model was sent. (JSON stays out of test_util.h.)

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace odin::testing {

// Each request the server received, in arrival order: {"n", "t_ns", "path", "body"}.
inline std::vector<nlohmann::json> RequestsOf(const FakeLlm& llm) {
  std::vector<nlohmann::json> out;
  for (const std::string& line : llm.LogLines()) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains("path")) out.push_back(j);
  }
  return out;
}

}  // namespace odin::testing
