#pragma once
// An MCP server's form (elicitation/create's requestedSchema, MCP
// 2025-06-18 and 2025-11-25: an object of flat fields, each a string (an
// email, a URI, a date), a number, an integer, a boolean, one of a list of
// strings (enum, or titled: oneOf) or several (an array of them), asked in
// the terminal one field at a time. Pure: the interactive session shows Question() and hands
// each typed line to Answer().

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace odin {

class ElicitationForm {
 public:
  // The form, or why it cannot be asked (not an object of flat fields,
  // more than 20 fields).
  static StatusOr<ElicitationForm> Parse(std::string_view schema_json);

  // A form of no fields (a plain "proceed?") is done at once.
  bool done() const { return at_ >= fields_.size(); }
  size_t size() const { return fields_.size(); }
  // The field being asked, as one line: "name: what it is [choices]
  // (default x; optional)". REQUIRES: !done().
  std::string Question() const;
  // Takes the answer to the field being asked: a value of its type, or an
  // empty line for its default (or, when it is optional, none). An error
  // (one line naming the problem) leaves the field asked. An error when
  // done().
  Status Answer(std::string_view line);
  // The answers, as the JSON object elicitation's content is.
  std::string ContentJson() const;

 private:
  struct Field {
    std::string name;
    std::string label;  // its title, or its name
    std::string description;
    std::string type;       // string, number, integer, boolean
    std::string format;     // a string's: email, uri, date, ...
    bool multiple = false;  // several of the choices (an array)
    size_t min_items = 0, max_items = 50;
    std::vector<std::string> choices;
    std::vector<std::string> choice_names;
    bool required = false;
    std::string default_json;  // "" for none
    double minimum = -1e308, maximum = 1e308;
    size_t min_length = 0, max_length = 4096;
  };
  std::vector<Field> fields_;
  std::vector<std::string> values_;  // JSON text of each answered field, "" for none
  size_t at_ = 0;
};

}  // namespace odin
