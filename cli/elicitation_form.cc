#include "cli/elicitation_form.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "base/json_input.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr size_t kMaxFields = 20;
constexpr size_t kMaxText = 4096;

std::string Str(const json& j, const char* key, size_t max = 500) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>().substr(0, max) : "";
}

}  // namespace

StatusOr<ElicitationForm> ElicitationForm::Parse(std::string_view schema_json) {
  json schema = ParseJson(schema_json, {.max_bytes = 64 * 1024});
  if (!schema.is_object() || schema.value("type", json()) != "object" || !schema.contains("properties") ||
      !schema["properties"].is_object()) {
    return Status::InvalidArgument("the form is not an object of fields");
  }
  if (schema["properties"].size() > kMaxFields) return Status::InvalidArgument("the form has more than 20 fields");
  std::vector<std::string> required;
  if (schema.contains("required") && schema["required"].is_array()) {
    for (const json& r : schema["required"]) {
      if (r.is_string()) required.push_back(r);
    }
  }
  ElicitationForm form;
  for (auto it = schema["properties"].begin(); it != schema["properties"].end(); ++it) {
    const json& p = it.value();
    if (!p.is_object()) return Status::InvalidArgument("the form's field " + it.key().substr(0, 64) + " is not one");
    Field f;
    f.name = it.key().substr(0, 64);
    f.label = Str(p, "title", 100);
    if (f.label.empty()) f.label = f.name;
    f.description = Str(p, "description");
    f.type = Str(p, "type", 16);
    f.format = Str(p, "format", 16);
    // A multiple choice: an array of strings from an enum (or titled, anyOf).
    const json* choices = &p;
    if (f.type == "array") {
      f.multiple = true;
      f.type = "string";
      choices = p.contains("items") && p["items"].is_object() ? &p["items"] : nullptr;
      if (p.contains("minItems") && p["minItems"].is_number_unsigned()) f.min_items = p["minItems"].get<size_t>();
      if (p.contains("maxItems") && p["maxItems"].is_number_unsigned()) f.max_items = p["maxItems"].get<size_t>();
    }
    if (f.type != "string" && f.type != "number" && f.type != "integer" && f.type != "boolean") {
      return Status::InvalidArgument("the form's field " + f.name + " is of a type that cannot be asked");
    }
    if (choices != nullptr && choices->contains("enum") && (*choices)["enum"].is_array()) {
      for (const json& c : (*choices)["enum"]) {
        if (c.is_string() && f.choices.size() < 50) f.choices.push_back(c.get<std::string>().substr(0, 100));
      }
      const json& names = choices->value("enumNames", json());
      if (names.is_array() && names.size() == f.choices.size()) {
        for (const json& n : names) f.choice_names.push_back(n.is_string() ? n.get<std::string>().substr(0, 100) : "");
      }
    }
    // Titled choices: oneOf (one) or anyOf (several) of {"const", "title"}.
    for (const char* key : {"oneOf", "anyOf"}) {
      if (choices == nullptr || !choices->contains(key) || !(*choices)[key].is_array()) continue;
      for (const json& c : (*choices)[key]) {
        if (!c.is_object() || !c.contains("const") || !c["const"].is_string() || f.choices.size() >= 50) continue;
        f.choices.push_back(c["const"].get<std::string>().substr(0, 100));
        f.choice_names.push_back(Str(c, "title", 100));
      }
    }
    if (f.multiple && f.choices.empty()) {
      return Status::InvalidArgument("the form's field " + f.name + " is a list without choices");
    }
    f.required = std::find(required.begin(), required.end(), it.key()) != required.end();
    if (p.contains("default") && !p["default"].is_object() && (f.multiple || !p["default"].is_array())) {
      f.default_json = p["default"].dump(-1, ' ', false, json::error_handler_t::replace);
    }
    if (p.contains("minimum") && p["minimum"].is_number()) f.minimum = p["minimum"].get<double>();
    if (p.contains("maximum") && p["maximum"].is_number()) f.maximum = p["maximum"].get<double>();
    if (p.contains("minLength") && p["minLength"].is_number_unsigned()) f.min_length = p["minLength"].get<size_t>();
    if (p.contains("maxLength") && p["maxLength"].is_number_unsigned()) {
      f.max_length = std::min(kMaxText, p["maxLength"].get<size_t>());
    }
    form.fields_.push_back(std::move(f));
  }
  // The required fields first (the rest in the order of their names: the
  // schema's own order is not kept by the parser).
  std::stable_partition(form.fields_.begin(), form.fields_.end(), [](const Field& f) { return f.required; });
  form.values_.resize(form.fields_.size());
  return form;
}

std::string ElicitationForm::Question() const {
  const Field& f = fields_[at_];
  std::string q = f.label;
  if (!f.description.empty()) q += " — " + f.description;
  if (!f.choices.empty()) {
    std::string list;
    for (size_t i = 0; i < f.choices.size(); ++i) {
      std::string shown = i < f.choice_names.size() && !f.choice_names[i].empty()
                              ? f.choice_names[i] + " (" + f.choices[i] + ")"
                              : f.choices[i];
      list += (i ? ", " : "") + std::to_string(i + 1) + ". " + shown;
    }
    q += " [" + list + "]";
    if (f.multiple) q += " (several: 1,3)";
  } else if (f.type == "boolean") {
    q += " [y/n]";
  } else if (f.type != "string") {
    q += " [" + f.type + "]";
  } else if (!f.format.empty()) {
    q += " [" + f.format + "]";
  }
  std::string notes;
  if (!f.default_json.empty()) notes = "default " + f.default_json;
  if (!f.required) notes += std::string(notes.empty() ? "" : "; ") + "optional";
  if (!notes.empty()) q += " (" + notes + ")";
  return q;
}

Status ElicitationForm::Answer(std::string_view line) {
  if (done()) return Status::FailedPrecondition("every field is answered");
  const Field& f = fields_[at_];
  std::string text(line.substr(0, kMaxText + 1));
  json value;
  if (text.empty()) {
    if (!f.default_json.empty()) {
      values_[at_] = f.default_json;
    } else if (f.required) {
      return Status::InvalidArgument(f.label + " is required");
    }
    ++at_;
    return Status::OK();
  }
  if (!f.choices.empty()) {
    // Choices by their numbers, or as written; several, comma-separated.
    json picked = json::array();
    for (size_t start = 0; start <= text.size();) {
      size_t comma = f.multiple ? text.find(',', start) : std::string::npos;
      std::string one = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      while (!one.empty() && one.front() == ' ') one.erase(0, 1);
      while (!one.empty() && one.back() == ' ') one.pop_back();
      start = comma == std::string::npos ? text.size() + 1 : comma + 1;
      char* end = nullptr;
      long n = std::strtol(one.c_str(), &end, 10);
      if (!one.empty() && end != nullptr && *end == '\0' && n >= 1 && static_cast<size_t>(n) <= f.choices.size()) {
        picked.push_back(f.choices[static_cast<size_t>(n) - 1]);
      } else if (std::find(f.choices.begin(), f.choices.end(), one) != f.choices.end()) {
        picked.push_back(one);
      } else {
        return Status::InvalidArgument("not one of the choices: answer with its number");
      }
    }
    if (!f.multiple) {
      value = picked[0];
    } else if (picked.size() < f.min_items || picked.size() > f.max_items) {
      return Status::InvalidArgument("choose " + std::to_string(f.min_items) + " to " + std::to_string(f.max_items));
    } else {
      value = picked;
    }
  } else if (f.type == "boolean") {
    if (text == "y" || text == "yes" || text == "true") {
      value = true;
    } else if (text == "n" || text == "no" || text == "false") {
      value = false;
    } else {
      return Status::InvalidArgument("answer y or n");
    }
  } else if (f.type == "number" || f.type == "integer") {
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(d)) return Status::InvalidArgument("not a number");
    if (f.type == "integer" && d != std::floor(d)) return Status::InvalidArgument("not a whole number");
    // Past 2^53 a number is no longer exact (and past 2^63 no integer).
    if (d < f.minimum || d > f.maximum || std::fabs(d) > 9007199254740992.0) {
      return Status::InvalidArgument("out of its range");
    }
    value = f.type == "integer" ? json(static_cast<int64_t>(d)) : json(d);
  } else {
    if (text.size() < f.min_length || text.size() > f.max_length) {
      return Status::InvalidArgument("between " + std::to_string(f.min_length) + " and " +
                                     std::to_string(f.max_length) + " characters, please");
    }
    bool date = text.size() == 10 && text[4] == '-' && text[7] == '-';
    if ((f.format == "email" && text.find('@') == std::string::npos) ||
        (f.format == "uri" && text.find("://") == std::string::npos) || (f.format == "date" && !date)) {
      return Status::InvalidArgument("not a" + std::string(f.format == "email" ? "n email address"
                                                           : f.format == "uri" ? " URI"
                                                                               : " date (YYYY-MM-DD)"));
    }
    value = text;
  }
  values_[at_] = value.dump(-1, ' ', false, json::error_handler_t::replace);
  ++at_;
  return Status::OK();
}

std::string ElicitationForm::ContentJson() const {
  json out = json::object();
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (!values_[i].empty()) out[fields_[i].name] = ParseJson(values_[i]);
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace odin
