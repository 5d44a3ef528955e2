#include "base/json_schema.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "base/json_input.h"

namespace odin {

using nlohmann::json;

namespace {

// Keywords that only annotate: accepted and not evaluated (format is an
// annotation in 2020-12 unless a vocabulary asserts it).
const std::set<std::string> kAnnotations = {
    "$schema",    "$id",      "$comment",  "title",  "description",     "default",          "examples",
    "deprecated", "readOnly", "writeOnly", "format", "contentEncoding", "contentMediaType", "contentSchema"};

// Keywords whose value is a schema, an array of schemas or an object of them.
const std::set<std::string> kSchemaKeywords = {
    "additionalProperties", "items", "contains", "propertyNames", "not", "if", "then", "else"};
const std::set<std::string> kSchemaArrays = {"allOf", "anyOf", "oneOf", "prefixItems"};
const std::set<std::string> kSchemaObjects = {"properties", "patternProperties", "$defs", "definitions",
                                              "dependentSchemas"};
const std::set<std::string> kNonNegativeInts = {"maxLength",     "minLength",     "maxItems",    "minItems",
                                                "maxProperties", "minProperties", "minContains", "maxContains"};
const std::set<std::string> kNumbers = {"maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum"};
const std::set<std::string> kOther = {
    "$ref", "type", "enum", "const", "multipleOf", "pattern", "uniqueItems", "required", "dependentRequired"};
const std::set<std::string> kTypes = {"null", "boolean", "object", "array", "number", "string", "integer"};

// What one evaluation may cost: a $ref cycle that consumes no input, or
// nested anyOf the answer makes try every branch, ends here.
constexpr int kMaxEvaluationDepth = 256;
constexpr int64_t kMaxEvaluationSteps = 2'000'000;

std::string PointerToken(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string TypeOf(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    default: return "number";
  }
}

bool IsInteger(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool HasType(const json& v, const std::string& type) {
  if (type == "integer") return IsInteger(v);
  if (type == "number") return v.is_number();
  return TypeOf(v) == type;
}

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

}  // namespace

struct JsonSchema::Impl {
  json root;
  std::string text;
  // The compiled pattern of each "pattern" value and patternProperties key,
  // by its source.
  std::map<std::string, std::unique_ptr<RE2>> patterns;

  const RE2& Pattern(const std::string& source) const { return *patterns.at(source); }
};

namespace {

class Compiler {
 public:
  explicit Compiler(JsonSchema::Impl* impl) : impl_(impl) {}

  Status Walk(const json& s, const std::string& at) {
    walked_.insert(&s);
    if (s.is_boolean()) return Status::OK();
    if (!s.is_object()) return Error(at, "a schema must be an object or a boolean");
    for (const auto& [key, value] : s.items()) {
      std::string here = at + "/" + PointerToken(key);
      if (key == "$id" && !at.empty()) return Error(here, "$id below the root is not supported");
      if (kAnnotations.count(key)) continue;
      if (kSchemaKeywords.count(key)) {
        RETURN_IF_ERROR(Walk(value, here));
      } else if (kSchemaArrays.count(key)) {
        if (!value.is_array() || value.empty()) return Error(here, "must be a non-empty array of schemas");
        for (size_t i = 0; i < value.size(); ++i) RETURN_IF_ERROR(Walk(value[i], here + "/" + std::to_string(i)));
      } else if (kSchemaObjects.count(key)) {
        if (!value.is_object()) return Error(here, "must be an object of schemas");
        for (const auto& [name, sub] : value.items()) {
          if (key == "patternProperties") RETURN_IF_ERROR(AddPattern(name, here));
          RETURN_IF_ERROR(Walk(sub, here + "/" + PointerToken(name)));
        }
      } else if (kNonNegativeInts.count(key)) {
        if (!IsInteger(value) || value.get<double>() < 0) return Error(here, "must be a non-negative integer");
      } else if (kNumbers.count(key)) {
        if (!value.is_number()) return Error(here, "must be a number");
      } else if (kOther.count(key)) {
        RETURN_IF_ERROR(CheckOther(key, value, here));
      } else {
        static const std::set<std::string> kKnownElsewhere = {
            "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$dynamicAnchor", "$anchor",
            "$recursiveRef",         "$recursiveAnchor", "$vocabulary", "dependencies"};
        return Error(at, "keyword '" + key + "' is " +
                             (kKnownElsewhere.count(key) ? "not supported" : "not a draft 2020-12 keyword Odin knows") +
                             " (docs/commands.md lists those supported)");
      }
    }
    return Status::OK();
  }

  // Every $ref must point into this document.
  Status CheckRefs() {
    for (const auto& [ref, at] : refs_) {
      if (ref.empty() || ref[0] != '#') return Error(at, "only references within the schema (\"#...\") are supported");
      if (ref.size() > 1 && ref[1] != '/') return Error(at, "anchors ($anchor) are not supported: use a JSON pointer");
      const json* target = Resolve(impl_->root, ref);
      if (target == nullptr) return Error(at, "'" + ref + "' points at nothing in the schema");
      // Only at what was compiled as a schema: never into a default, an
      // example or the names under $defs.
      if (walked_.count(target) == 0) return Error(at, "'" + ref + "' does not point at a schema");
    }
    return Status::OK();
  }

  static const json* Resolve(const json& root, const std::string& ref) {
    const json* node = &root;
    size_t i = 1;
    while (i < ref.size()) {
      size_t next = ref.find('/', i + 1);
      std::string token = ref.substr(i + 1, next == std::string::npos ? std::string::npos : next - i - 1);
      // The URI fragment's percent-encoding first, then the pointer's
      // escapes (RFC 6901, section 6).
      std::string unpercented;
      for (size_t k = 0; k < token.size(); ++k) {
        if (token[k] == '%' && k + 2 < token.size() && std::isxdigit(static_cast<unsigned char>(token[k + 1])) &&
            std::isxdigit(static_cast<unsigned char>(token[k + 2]))) {
          unpercented += static_cast<char>(std::stoi(token.substr(k + 1, 2), nullptr, 16));
          k += 2;
        } else {
          unpercented += token[k];
        }
      }
      std::string decoded;
      for (size_t k = 0; k < unpercented.size(); ++k) {
        if (unpercented[k] == '~' && k + 1 < unpercented.size() &&
            (unpercented[k + 1] == '0' || unpercented[k + 1] == '1')) {
          decoded += unpercented[++k] == '0' ? '~' : '/';
        } else {
          decoded += unpercented[k];
        }
      }
      if (node->is_object()) {
        auto it = node->find(decoded);
        if (it == node->end()) return nullptr;
        node = &*it;
      } else if (node->is_array()) {
        if (decoded.empty() || decoded.find_first_not_of("0123456789") != std::string::npos || decoded.size() > 9)
          return nullptr;
        size_t index = std::stoul(decoded);
        if (index >= node->size()) return nullptr;
        node = &(*node)[index];
      } else {
        return nullptr;
      }
      if (next == std::string::npos) break;
      i = next;
    }
    return node;
  }

 private:
  static Status Error(const std::string& at, const std::string& why) {
    return Status::InvalidArgument("JSON Schema", (at.empty() ? "/" : at) + ": " + why);
  }

  Status AddPattern(const std::string& source, const std::string& at) {
    if (impl_->patterns.count(source)) return Status::OK();
    RE2::Options options;
    options.set_log_errors(false);
    options.set_max_mem(8 << 20);
    auto re = std::make_unique<RE2>(source, options);
    if (!re->ok()) return Error(at, "pattern '" + source + "' is not supported (RE2: " + re->error() + ")");
    impl_->patterns.emplace(source, std::move(re));
    return Status::OK();
  }

  Status CheckOther(const std::string& key, const json& value, const std::string& at) {
    if (key == "$ref") {
      if (!value.is_string()) return Error(at, "must be a string");
      refs_.emplace_back(value.get<std::string>(), at);
    } else if (key == "type") {
      std::vector<json> names = value.is_array() ? value.get<std::vector<json>>() : std::vector<json>{value};
      if (names.empty()) return Error(at, "must name at least one type");
      for (const json& n : names) {
        if (!n.is_string() || !kTypes.count(n.get<std::string>())) return Error(at, "unknown type " + Shown(n));
      }
    } else if (key == "enum") {
      if (!value.is_array()) return Error(at, "must be an array");
    } else if (key == "multipleOf") {
      if (!value.is_number() || value.get<double>() <= 0) return Error(at, "must be a number above 0");
    } else if (key == "pattern") {
      if (!value.is_string()) return Error(at, "must be a string");
      return AddPattern(value.get<std::string>(), at);
    } else if (key == "uniqueItems") {
      if (!value.is_boolean()) return Error(at, "must be true or false");
    } else if (key == "required") {
      if (!value.is_array()) return Error(at, "must be an array of strings");
      for (const json& n : value) {
        if (!n.is_string()) return Error(at, "must be an array of strings");
      }
    } else if (key == "dependentRequired") {
      if (!value.is_object()) return Error(at, "must be an object of string arrays");
      for (const auto& [name, list] : value.items()) {
        if (!list.is_array()) return Error(at, "must be an object of string arrays");
        for (const json& n : list) {
          if (!n.is_string()) return Error(at, "must be an object of string arrays");
        }
      }
    }
    return Status::OK();  // const: any value
  }

  JsonSchema::Impl* impl_;
  std::vector<std::pair<std::string, std::string>> refs_;
  std::set<const json*> walked_;  // every node compiled as a schema
};

class Evaluator {
 public:
  Evaluator(const JsonSchema::Impl& impl, std::vector<std::string>* errors, size_t max_errors)
      : impl_(impl), errors_(errors), max_errors_(max_errors) {}

  // Whether v is valid against s; with errors_ set, why not, below at.
  bool Valid(const json& s, const json& v, const std::string& at, int depth) {
    if (aborted_) return false;
    if (s.is_boolean()) return s.get<bool>() || Fail(at, "no value is allowed here");
    if (++steps_ > kMaxEvaluationSteps) return Abort("the schema is too costly to evaluate against this answer");
    if (depth > kMaxEvaluationDepth) return Abort("the schema's references recurse without end");
    bool ok = true;
    auto check = [&](bool passed) {
      ok = ok && passed;
      return ok || errors_ != nullptr;  // go on only to collect more errors
    };
    if (auto it = s.find("$ref"); it != s.end()) {
      const json* target = Compiler::Resolve(impl_.root, it->get<std::string>());
      if (!check(Valid(*target, v, at, depth + 1))) return false;
    }
    if (auto it = s.find("type"); it != s.end()) {
      bool any = false;
      for (const json& t : it->is_array() ? *it : json::array({*it})) any = any || HasType(v, t.get<std::string>());
      if (!check(any || Fail(at, "expected " + Shown(*it) + ", got " + TypeOf(v)))) return false;
    }
    if (auto it = s.find("enum"); it != s.end()) {
      bool any = false;
      for (const json& e : *it) any = any || e == v;
      if (!check(any || Fail(at, Shown(v) + " is not one of " + Shown(*it)))) return false;
    }
    if (auto it = s.find("const"); it != s.end()) {
      if (!check(*it == v || Fail(at, "expected " + Shown(*it) + ", got " + Shown(v)))) return false;
    }
    if (v.is_number() && !check(Number(s, v, at))) return false;
    if (v.is_string() && !check(String(s, v.get_ref<const std::string&>(), at))) return false;
    if (v.is_array() && !check(Array(s, v, at, depth))) return false;
    if (v.is_object() && !check(Object(s, v, at, depth))) return false;
    if (!check(Combinations(s, v, at, depth))) return false;
    return ok;
  }

  bool aborted() const { return aborted_; }

 private:
  bool Fail(const std::string& at, const std::string& why) {
    if (errors_ != nullptr && errors_->size() < max_errors_) errors_->push_back((at.empty() ? "/" : at) + ": " + why);
    return false;
  }
  bool Abort(const std::string& why) {
    if (aborted_) return false;
    aborted_ = true;
    abort_reason_ = why;
    if (errors_ != nullptr) {
      errors_->push_back(why);
      abort_reported_ = true;
    }
    return false;
  }

  // Whether v is valid, with no errors recorded (a branch of anyOf).
  bool Quietly(const json& s, const json& v, const std::string& at, int depth) {
    std::vector<std::string>* saved = errors_;
    errors_ = nullptr;
    bool ok = Valid(s, v, at, depth);
    errors_ = saved;
    if (aborted_ && !abort_reported_ && errors_ != nullptr) {
      errors_->push_back(abort_reason_);
      abort_reported_ = true;
    }
    return ok;
  }

  // The bounds max_key and min_key set on a count (characters, items,
  // properties).
  bool Counted(const json& s, const char* max_key, const char* min_key, size_t n, const std::string& at,
               const char* noun) {
    bool ok = true;
    if (auto it = s.find(max_key); it != s.end() && n > it->get<double>()) {
      ok = Fail(at, "more than " + Shown(*it) + " " + noun);
    }
    if (auto it = s.find(min_key); it != s.end() && n < it->get<double>()) {
      ok = Fail(at, "fewer than " + Shown(*it) + " " + noun) && ok;
    }
    return ok;
  }

  bool Number(const json& s, const json& v, const std::string& at) {
    double x = v.get<double>();
    bool ok = true;
    auto bound = [&](const char* key, auto passes, const char* words) {
      if (auto it = s.find(key); it != s.end() && !passes(x, it->template get<double>())) {
        ok = Fail(at, Shown(v) + " " + words + " " + Shown(*it)) && ok;
      }
    };
    bound(
        "maximum", [](double a, double b) { return a <= b; }, "is above the maximum");
    bound(
        "minimum", [](double a, double b) { return a >= b; }, "is below the minimum");
    bound(
        "exclusiveMaximum", [](double a, double b) { return a < b; }, "is not below");
    bound(
        "exclusiveMinimum", [](double a, double b) { return a > b; }, "is not above");
    if (auto it = s.find("multipleOf"); it != s.end()) {
      bool multiple;
      if (v.is_number_integer() && it->is_number_integer()) {
        // In magnitudes: no INT64_MIN % -1, no divisor read as negative.
        uint64_t magnitude = v.is_number_unsigned() ? v.get<uint64_t>()
                             : v.get<int64_t>() < 0 ? 0 - static_cast<uint64_t>(v.get<int64_t>())
                                                    : static_cast<uint64_t>(v.get<int64_t>());
        multiple = magnitude % it->get<uint64_t>() == 0;  // the divisor is above 0
      } else {
        double q = x / it->get<double>();
        multiple = std::isfinite(q) && std::fabs(q - std::round(q)) <= 1e-9 * std::max(1.0, std::fabs(q));
      }
      if (!multiple) ok = Fail(at, Shown(v) + " is not a multiple of " + Shown(*it)) && ok;
    }
    return ok;
  }

  bool String(const json& s, const std::string& v, const std::string& at) {
    bool ok = Counted(s, "maxLength", "minLength", CodePoints(v), at, "characters");
    if (auto it = s.find("pattern"); it != s.end()) {
      const std::string& source = it->get_ref<const std::string&>();
      if (!RE2::PartialMatch(v, impl_.Pattern(source))) ok = Fail(at, "does not match the pattern " + Shown(*it)) && ok;
    }
    return ok;
  }

  bool Array(const json& s, const json& v, const std::string& at, int depth) {
    bool ok = Counted(s, "maxItems", "minItems", v.size(), at, "items");
    if (auto it = s.find("uniqueItems"); it != s.end() && it->get<bool>()) {
      steps_ += static_cast<int64_t>(v.size() / 2 * v.size());  // the comparisons below
      if (steps_ > kMaxEvaluationSteps) return Abort("the schema is too costly to evaluate against this answer");
      for (size_t i = 0; i < v.size() && ok; ++i) {
        for (size_t j = i + 1; j < v.size(); ++j) {
          if (v[i] == v[j]) {
            ok = Fail(at, "items " + std::to_string(i) + " and " + std::to_string(j) + " are equal");
            break;
          }
        }
      }
    }
    size_t prefix = 0;
    if (auto it = s.find("prefixItems"); it != s.end()) {
      prefix = it->size();
      for (size_t i = 0; i < prefix && i < v.size(); ++i) {
        ok = Valid((*it)[i], v[i], at + "/" + std::to_string(i), depth + 1) && ok;
        if (!ok && errors_ == nullptr) return false;
      }
    }
    if (auto it = s.find("items"); it != s.end()) {
      for (size_t i = prefix; i < v.size(); ++i) {
        ok = Valid(*it, v[i], at + "/" + std::to_string(i), depth + 1) && ok;
        if (!ok && errors_ == nullptr) return false;
      }
    }
    if (auto it = s.find("contains"); it != s.end()) {
      size_t matched = 0;
      for (const json& item : v) matched += Quietly(*it, item, at, depth + 1);
      double min = s.value("minContains", 1.0);
      auto max = s.find("maxContains");
      if (matched < min) ok = Fail(at, "fewer than " + Shown(json(min)) + " items match 'contains'") && ok;
      if (max != s.end() && matched > max->get<double>())
        ok = Fail(at, "more than " + Shown(*max) + " items match 'contains'") && ok;
    }
    return ok;
  }

  bool Object(const json& s, const json& v, const std::string& at, int depth) {
    bool ok = Counted(s, "maxProperties", "minProperties", v.size(), at, "properties");
    if (auto it = s.find("required"); it != s.end()) {
      for (const json& name : *it) {
        if (!v.contains(name.get<std::string>())) ok = Fail(at, "missing required property " + Shown(name)) && ok;
      }
    }
    if (auto it = s.find("dependentRequired"); it != s.end()) {
      for (const auto& [name, list] : it->items()) {
        if (!v.contains(name)) continue;
        for (const json& other : list) {
          if (!v.contains(other.get<std::string>()))
            ok = Fail(at, "property " + Shown(json(name)) + " requires " + Shown(other)) && ok;
        }
      }
    }
    if (!ok && errors_ == nullptr) return false;
    auto properties = s.find("properties");
    auto patterns = s.find("patternProperties");
    auto additional = s.find("additionalProperties");
    auto names = s.find("propertyNames");
    for (const auto& [name, value] : v.items()) {
      std::string here = at + "/" + PointerToken(name);
      bool matched = false;
      if (properties != s.end()) {
        if (auto p = properties->find(name); p != properties->end()) {
          matched = true;
          ok = Valid(*p, value, here, depth + 1) && ok;
        }
      }
      if (patterns != s.end()) {
        for (const auto& [source, sub] : patterns->items()) {
          if (!RE2::PartialMatch(name, impl_.Pattern(source))) continue;
          matched = true;
          ok = Valid(sub, value, here, depth + 1) && ok;
        }
      }
      if (!matched && additional != s.end()) {
        if (additional->is_boolean() && !additional->get<bool>()) {
          ok = Fail(at, "property " + Shown(json(name)) + " is not allowed") && ok;
        } else {
          ok = Valid(*additional, value, here, depth + 1) && ok;
        }
      }
      if (names != s.end() && !Quietly(*names, json(name), here, depth + 1)) {
        ok = Fail(at, "property name " + Shown(json(name)) + " does not match 'propertyNames'") && ok;
      }
      if (!ok && errors_ == nullptr) return false;
    }
    if (auto it = s.find("dependentSchemas"); it != s.end()) {
      for (const auto& [name, sub] : it->items()) {
        if (v.contains(name)) ok = Valid(sub, v, at, depth + 1) && ok;
      }
    }
    return ok;
  }

  bool Combinations(const json& s, const json& v, const std::string& at, int depth) {
    bool ok = true;
    if (auto it = s.find("allOf"); it != s.end()) {
      for (const json& sub : *it) {
        ok = Valid(sub, v, at, depth + 1) && ok;
        if (!ok && errors_ == nullptr) return false;
      }
    }
    if (auto it = s.find("anyOf"); it != s.end()) {
      bool any = false;
      for (const json& sub : *it) {
        if ((any = Quietly(sub, v, at, depth + 1))) break;
      }
      if (!any) ok = Fail(at, "matches none of 'anyOf'") && ok;
    }
    if (auto it = s.find("oneOf"); it != s.end()) {
      int matched = 0;
      for (const json& sub : *it) matched += Quietly(sub, v, at, depth + 1);
      if (matched != 1) ok = Fail(at, "matches " + std::to_string(matched) + " of 'oneOf', not exactly one") && ok;
    }
    if (auto it = s.find("not"); it != s.end() && Quietly(*it, v, at, depth + 1)) {
      ok = Fail(at, "matches the schema under 'not'") && ok;
    }
    if (auto it = s.find("if"); it != s.end()) {
      bool holds = Quietly(*it, v, at, depth + 1);
      auto branch = s.find(holds ? "then" : "else");
      if (branch != s.end()) ok = Valid(*branch, v, at, depth + 1) && ok;
    }
    return ok;
  }

  const JsonSchema::Impl& impl_;
  std::vector<std::string>* errors_;
  size_t max_errors_;
  int64_t steps_ = 0;
  bool aborted_ = false;
  bool abort_reported_ = false;
  std::string abort_reason_;
};

}  // namespace

StatusOr<JsonSchema> JsonSchema::Compile(std::string_view schema_text) {
  StatusOr<json> parsed = ParseJsonOrError(schema_text, "JSON Schema", {kMaxSchemaBytes, kMaxJsonDepth});
  if (!parsed.ok()) return parsed.status();
  auto impl = std::make_shared<Impl>();
  impl->root = std::move(*parsed);
  if (impl->root.is_object()) {
    if (auto it = impl->root.find("$schema"); it != impl->root.end()) {
      static const std::set<std::string> kDrafts = {"https://json-schema.org/draft/2020-12/schema",
                                                    "http://json-schema.org/draft-07/schema#",
                                                    "http://json-schema.org/draft-07/schema"};
      if (!it->is_string() || !kDrafts.count(it->get<std::string>())) {
        return Status::InvalidArgument(
            "JSON Schema", "/$schema: " + Shown(*it) + " is not draft 2020-12 (draft-07 is read as 2020-12)");
      }
    }
  }
  Compiler compiler(impl.get());
  RETURN_IF_ERROR(compiler.Walk(impl->root, ""));
  RETURN_IF_ERROR(compiler.CheckRefs());
  impl->text = impl->root.dump(-1, ' ', false, json::error_handler_t::replace);
  return JsonSchema(std::move(impl));
}

std::vector<std::string> JsonSchema::Validate(std::string_view instance_text, size_t max_errors) const {
  StatusOr<json> value = ParseJsonOrError(instance_text, "the answer");
  if (!value.ok()) return {"not JSON: " + value.status().message()};
  std::vector<std::string> errors;
  Evaluator evaluator(*impl_, &errors, std::max<size_t>(max_errors, 1));
  if (!evaluator.Valid(impl_->root, *value, "", 0) && errors.empty()) errors.push_back("not valid");
  return errors;
}

const std::string& JsonSchema::text() const { return impl_->text; }

}  // namespace odin
