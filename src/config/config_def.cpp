#include "config/config_def.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/assert.h"
#include "config/java.h"

namespace weir::config {

std::string_view type_name(Type type) noexcept {
  switch (type) {
    case Type::boolean:
      return "BOOLEAN";
    case Type::string:
      return "STRING";
    case Type::int32:
      return "INT";
    case Type::int16:
      return "SHORT";
    case Type::int64:
      return "LONG";
    case Type::float64:
      return "DOUBLE";
    case Type::list:
      return "LIST";
    case Type::class_name:
      return "CLASS";
    case Type::password:
      return "PASSWORD";
  }
  return "UNKNOWN";
}

std::string_view update_mode_name(UpdateMode mode) noexcept {
  switch (mode) {
    case UpdateMode::read_only:
      return "read-only";
    case UpdateMode::per_broker:
      return "per-broker";
    case UpdateMode::cluster_wide:
      return "cluster-wide";
  }
  return "read-only";
}

std::string_view importance_name(Importance importance) noexcept {
  switch (importance) {
    case Importance::high:
      return "HIGH";
    case Importance::medium:
      return "MEDIUM";
    case Importance::low:
      return "LOW";
  }
  return "LOW";
}

namespace {

std::string join(std::span<const std::string_view> items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

// Messages of Kafka's ConfigException(name, value, message) form are reasons; the others (list
// checks) are complete messages, marked so that validate() does not wrap them.
constexpr std::string_view kWhole = kWholeMessage;

std::string whole(std::string message) { return std::string(kWhole) + std::move(message); }

std::optional<std::string> check_list(const Validator& v, std::string_view name,
                                      const std::vector<std::string>& items) {
  if (v.kind == Validator::Kind::any_list && items.empty()) {
    return whole(fmt::format("Configuration '{}' must not be empty. Valid values include: any non-empty value", name));
  }
  for (const auto& item : items) {
    if (item.empty()) return whole(fmt::format("Configuration '{}' values must not be empty.", name));
    if (v.kind == Validator::Kind::list_of && std::ranges::find(v.allowed, item) == v.allowed.end()) {
      return whole(invalid_value(item, name, fmt::format("String must be one of: {}", join(v.allowed, ", "))));
    }
  }
  return std::nullopt;
}

}  // namespace

std::string validator_text(const Validator& v) {
  switch (v.kind) {
    case Validator::Kind::none:
    case Validator::Kind::any_list:
      return "";
    case Validator::Kind::range:
      if (!v.min) return fmt::format("[...,{}]", *v.max);
      if (!v.max) return fmt::format("[{},...]", *v.min);
      return fmt::format("[{},...,{}]", *v.min, *v.max);
    case Validator::Kind::one_of:
    case Validator::Kind::list_of:
      return "[" + join(v.allowed, ", ") + "]";
    case Validator::Kind::non_empty:
      return "non-empty string";
    case Validator::Kind::custom:
      return std::string(v.text);
  }
  return "";
}

std::string invalid_value(std::string_view shown, std::string_view name, std::string_view why) {
  return fmt::format("Invalid value {} for configuration {}: {}", shown, name, why);
}

Result<Value, std::string> parse(const KeyDef& def, std::string_view raw) {
  auto value = parse_type(def, raw);
  if (!value) return value;
  if (auto err = validate(def, *value)) return unexpected(std::move(*err));
  return value;
}

Result<Value, std::string> parse_type(const KeyDef& def, std::string_view raw) {
  const std::string_view trimmed = java::trim(raw);
  Value value;
  switch (def.type) {
    case Type::int16:
    case Type::int32:
    case Type::int64: {
      const int bits = def.type == Type::int64 ? 64 : def.type == Type::int32 ? 32 : 16;
      auto v = java::parse_integer(trimmed, bits);
      if (!v)
        return unexpected(invalid_value(raw, def.name, fmt::format("Not a number of type {}", type_name(def.type))));
      value = *v;
      break;
    }
    case Type::float64: {
      auto v = java::parse_double(trimmed);
      if (!v) return unexpected(invalid_value(raw, def.name, "Not a number of type DOUBLE"));
      value = *v;
      break;
    }
    case Type::boolean: {
      auto v = java::parse_boolean(trimmed);
      if (!v) return unexpected(invalid_value(raw, def.name, "Expected value to be either true or false"));
      value = *v;
      break;
    }
    case Type::list:
      value = java::split_list(trimmed);
      break;
    case Type::password:
      value = std::string(raw);  // Kafka keeps passwords as given
      break;
    case Type::string:
    case Type::class_name:
      value = std::string(trimmed);
      break;
  }
  return value;
}

std::optional<std::string> validate(const KeyDef& def, const Value& value) {
  const Validator& v = def.validator;
  if (v.kind == Validator::Kind::none || std::holds_alternative<std::monostate>(value)) return std::nullopt;
  std::optional<std::string> why;
  switch (v.kind) {
    case Validator::Kind::none:
      break;
    case Validator::Kind::range: {
      if (const auto* d = std::get_if<double>(&value)) {
        if (v.min && *d < static_cast<double>(*v.min)) why = fmt::format("Value must be at least {}", *v.min);
        if (!why && v.max && *d > static_cast<double>(*v.max))
          why = fmt::format("Value must be no more than {}", *v.max);
      } else {
        const std::int64_t n = std::get<std::int64_t>(value);
        if (v.min && n < *v.min) why = fmt::format("Value must be at least {}", *v.min);
        if (!why && v.max && n > *v.max) why = fmt::format("Value must be no more than {}", *v.max);
      }
      break;
    }
    case Validator::Kind::one_of: {
      const auto& s = std::get<std::string>(value);
      if (std::ranges::find(v.allowed, s) == v.allowed.end()) {
        why = fmt::format("String must be one of: {}", join(v.allowed, ", "));
      }
      break;
    }
    case Validator::Kind::list_of:
    case Validator::Kind::any_list:
      why = check_list(v, def.name, std::get<std::vector<std::string>>(value));
      break;
    case Validator::Kind::non_empty:
      if (std::get<std::string>(value).empty()) why = "String must be non-empty";
      break;
    case Validator::Kind::custom:
      why = v.check(def.name, value);
      break;
  }
  if (!why) return std::nullopt;
  if (why->starts_with(kWhole)) return why->substr(kWhole.size());
  return invalid_value(to_string(value).value_or("null"), def.name, *why);
}

std::optional<std::string> to_string(const Value& value) {
  return std::visit(
      [](const auto& v) -> std::optional<std::string> {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
          return std::nullopt;
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<V, double>) {
          return java::double_to_string(v);
        } else if constexpr (std::is_same_v<V, bool>) {
          return std::string(v ? "true" : "false");
        } else if constexpr (std::is_same_v<V, std::string>) {
          return v;
        } else {
          std::string out;
          for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
          return out;
        }
      },
      value);
}

Result<ConfigValues, std::string> ConfigValues::parse(std::span<const KeyDef> defs, RawConfig raw) {
  ConfigValues out;
  out.defs_ = defs;
  for (const auto& def : defs) {
    Value value;
    if (auto it = raw.find(def.name); it != raw.end()) {
      auto parsed = config::parse(def, it->second);
      if (!parsed) return unexpected(std::move(parsed.error()));
      value = std::move(*parsed);
    } else if (def.required()) {
      return unexpected(fmt::format("Missing required configuration \"{}\" which has no default value.", def.name));
    } else if (!def.null_default()) {
      auto parsed = config::parse(def, def.default_value);
      WEIR_ASSERT(parsed.has_value(), "default of {} is invalid: {}", def.name, parsed.error());
      value = std::move(*parsed);
    }
    out.values_.emplace(def.name, std::move(value));
  }
  out.raw_ = std::move(raw);
  return out;
}

const KeyDef* ConfigValues::find(std::string_view name) const noexcept {
  for (const auto& def : defs_) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

std::vector<std::string> ConfigValues::unknown_keys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : raw_) {
    if (!values_.contains(k)) out.push_back(k);
  }
  return out;
}

const Value& ConfigValues::value(std::string_view name) const {
  auto it = values_.find(name);
  WEIR_ASSERT(it != values_.end(), "config key {} is not defined", name);
  return it->second;
}

namespace {
template <class T>
const T& typed(const Value& v, std::string_view name) {
  const T* p = std::get_if<T>(&v);
  WEIR_ASSERT(p != nullptr, "config key {} read with the wrong type or null", name);
  return *p;
}
}  // namespace

bool ConfigValues::get_bool(std::string_view name) const { return typed<bool>(value(name), name); }

std::int32_t ConfigValues::get_int(std::string_view name) const {
  WEIR_ASSERT(find(name)->type == Type::int32, "{} is not an INT", name);
  return static_cast<std::int32_t>(typed<std::int64_t>(value(name), name));
}

std::int16_t ConfigValues::get_short(std::string_view name) const {
  WEIR_ASSERT(find(name)->type == Type::int16, "{} is not a SHORT", name);
  return static_cast<std::int16_t>(typed<std::int64_t>(value(name), name));
}

std::int64_t ConfigValues::get_long(std::string_view name) const { return typed<std::int64_t>(value(name), name); }

double ConfigValues::get_double(std::string_view name) const { return typed<double>(value(name), name); }

const std::string& ConfigValues::get_string(std::string_view name) const {
  static const std::string kEmpty;
  const Value& v = value(name);
  if (std::holds_alternative<std::monostate>(v)) return kEmpty;
  return typed<std::string>(v, name);
}

const std::vector<std::string>& ConfigValues::get_list(std::string_view name) const {
  static const std::vector<std::string> kEmpty;
  const Value& v = value(name);
  if (std::holds_alternative<std::monostate>(v)) return kEmpty;
  return typed<std::vector<std::string>>(v, name);
}

bool ConfigValues::is_null(std::string_view name) const { return std::holds_alternative<std::monostate>(value(name)); }

std::optional<std::int64_t> ConfigValues::get_optional_long(std::string_view name) const {
  if (is_null(name)) return std::nullopt;
  return get_long(name);
}

}  // namespace weir::config
