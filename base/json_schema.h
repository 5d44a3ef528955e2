#pragma once
// JSON Schema (draft 2020-12), the part `--json-schema` needs: a headless
// run's final answer checked against the user's schema. docs/commands.md
// lists the keywords; a schema using any other (unevaluatedProperties,
// $dynamicRef, a remote $ref, a keyword nobody defined) is refused when it
// is compiled, so no answer is ever judged by rules Odin does not apply.
// Annotations (title, description, format, ...) are accepted and not
// checked, as 2020-12 has them by default. Numbers are compared as
// doubles, exact for integers up to 2^53 (multipleOf of integers is exact).
//
// `pattern` and `patternProperties` are RE2 expressions (linear time, no
// recursion, whatever the input); an ECMA-262 feature RE2 lacks
// (lookaround, backreferences) is refused at compile time. Evaluation is
// bounded: $ref cycles and costly combinations end in an error, never a
// hang or a stack overflow.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace odin {

// The largest schema: it goes to the model with every turn.
constexpr size_t kMaxSchemaBytes = 64 * 1024;

class JsonSchema {
 public:
  // The schema in text; InvalidArgument naming the keyword and where it is
  // ("/properties/name: keyword 'unevaluatedProperties' is not supported").
  static StatusOr<JsonSchema> Compile(std::string_view schema_text);

  // Why the JSON text instance is not valid, one line each ("/items/2:
  // expected integer, got string"), at most max_errors; empty when valid.
  // Text that is not JSON is one error.
  std::vector<std::string> Validate(std::string_view instance_text, size_t max_errors = 20) const;

  // The schema as compiled, in canonical JSON.
  const std::string& text() const;

  struct Impl;  // json_schema.cc's

 private:
  explicit JsonSchema(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace odin
