#include "base/logging.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

namespace odin {

void InitLogging(std::string_view program) {
  auto logger = spdlog::stderr_logger_mt(std::string(program));
  logger->set_pattern("%n: %l: %v");
  const char* level = getenv("ODIN_LOG");
  logger->set_level(level != nullptr ? spdlog::level::from_str(level) : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace odin
