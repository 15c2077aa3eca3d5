// A typed configuration definition, as Kafka's ConfigDef: per key its name, type, default,
// validator, importance, documentation and dynamic-update mode. Values arrive as text (a
// .properties file, --set, a ConfigRecord) and are parsed and validated once, with Java's parsing
// rules and Kafka's error messages word for word, because users compare them with Kafka's:
//
//   Invalid value abc for configuration group.max.size: Not a number of type INT
//   Invalid value 0 for configuration num.partitions: Value must be at least 1
//
// A definition is a constexpr table of KeyDef (see src/config/README.md for adding a key):
//
//   {"num.partitions", Type::int32, "1", at_least(1), Importance::medium, "Partitions of ..."},
//
// ConfigValues is the parsed result: a typed value for every key of the definition (its default
// when not set), plus the raw text of every key that was set, known or not.
//
// Thread safety: definitions are immutable; ConfigValues is a value type.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/result.h"

namespace weir::config {

// Kafka's ConfigDef.Type; the numbers are DescribeConfigsResponse's ConfigType ids.
enum class Type : std::int8_t {
  boolean = 1,
  string = 2,
  int32 = 3,    // INT
  int16 = 4,    // SHORT
  int64 = 5,    // LONG
  float64 = 6,  // DOUBLE
  list = 7,
  class_name = 8,  // CLASS: a Java class name; weir keeps the text (it loads no classes)
  password = 9,
};

enum class Importance : std::uint8_t { high, medium, low };

// Kafka's DynamicBrokerConfig update modes.
enum class UpdateMode : std::uint8_t { read_only, per_broker, cluster_wide };

// Kafka's names: "INT", "read-only", "HIGH", ...
[[nodiscard]] std::string_view type_name(Type type) noexcept;
[[nodiscard]] std::string_view update_mode_name(UpdateMode mode) noexcept;
[[nodiscard]] std::string_view importance_name(Importance importance) noexcept;

// A parsed value. monostate is Kafka's null (a key whose default is null and that is not set).
using Value = std::variant<std::monostate, bool, std::int64_t, double, std::string, std::vector<std::string>>;

// A check of a parsed value. Returns the reason ("Value must be at least 1"), shown as
// "Invalid value X for configuration K: reason"; a message whose shape differs is returned whole,
// prefixed with kWholeMessage.
using CustomCheck = std::optional<std::string> (*)(std::string_view name, const Value& value);
inline constexpr std::string_view kWholeMessage = "\x02";

struct Validator {
  enum class Kind : std::uint8_t {
    none,
    range,      // min / max, either may be absent (Kafka's Range)
    one_of,     // a string in `allowed` (ValidString)
    list_of,    // a list whose elements are each in `allowed`, none empty (ValidList)
    any_list,   // a list with no empty elements that is itself not empty (ValidList, any value)
    non_empty,  // a string that is not empty (NonEmptyString)
    custom,     // `check`, described by `text`
  };
  Kind kind = Kind::none;
  std::optional<std::int64_t> min;
  std::optional<std::int64_t> max;
  std::span<const std::string_view> allowed;
  CustomCheck check = nullptr;
  std::string_view text;  // what Kafka's validator toString() prints, for custom checks
};

constexpr Validator no_check() { return {}; }
constexpr Validator at_least(std::int64_t min) {
  Validator v;
  v.kind = Validator::Kind::range;
  v.min = min;
  return v;
}
constexpr Validator between(std::int64_t min, std::int64_t max) {
  Validator v = at_least(min);
  v.max = max;
  return v;
}
constexpr Validator one_of(std::span<const std::string_view> allowed) {
  Validator v;
  v.kind = Validator::Kind::one_of;
  v.allowed = allowed;
  return v;
}
constexpr Validator list_of(std::span<const std::string_view> allowed) {
  Validator v;
  v.kind = Validator::Kind::list_of;
  v.allowed = allowed;
  return v;
}
constexpr Validator non_empty_list() {
  Validator v;
  v.kind = Validator::Kind::any_list;
  return v;
}
constexpr Validator non_empty_string() {
  Validator v;
  v.kind = Validator::Kind::non_empty;
  return v;
}
constexpr Validator custom(CustomCheck check, std::string_view text) {
  Validator v;
  v.kind = Validator::Kind::custom;
  v.check = check;
  v.text = text;
  return v;
}

// Validator text as Kafka's toString() prints it: "[1,...]", "[0,...,10]", "[a, b]".
[[nodiscard]] std::string validator_text(const Validator& v);

// Marks a default: kNull is Kafka's null default; kRequired is NO_DEFAULT_VALUE.
inline constexpr std::string_view kNullDefault = "\x01<null>";
inline constexpr std::string_view kRequired = "\x01<none>";

struct KeyDef {
  std::string_view name;
  Type type = Type::string;
  std::string_view default_value = kNullDefault;  // the text Kafka prints, or kNullDefault / kRequired
  Validator validator;
  Importance importance = Importance::medium;
  std::string_view doc;
  UpdateMode mode = UpdateMode::read_only;
  // Kafka's defineInternal: DescribeConfigs lists the key only where it is set.
  bool internal = false;

  [[nodiscard]] bool null_default() const noexcept { return default_value == kNullDefault; }
  [[nodiscard]] bool required() const noexcept { return default_value == kRequired; }
};

// "Invalid value X for configuration K: why".
[[nodiscard]] std::string invalid_value(std::string_view shown, std::string_view name, std::string_view why);

// ConfigDef.parseType then the validator: the typed value, or Kafka's message. Parse errors show
// the raw text, validator errors the parsed value (as Java prints it).
[[nodiscard]] Result<Value, std::string> parse(const KeyDef& def, std::string_view raw);
// ConfigDef.parseType alone: the typed value or the "Not a number of type ..." message.
[[nodiscard]] Result<Value, std::string> parse_type(const KeyDef& def, std::string_view raw);
// The validator alone, on an already parsed value.
[[nodiscard]] std::optional<std::string> validate(const KeyDef& def, const Value& value);
// ConfigDef.convertToString: how Kafka prints a parsed value ("1000" for " 1000 ", "a,b" for a
// list); nullopt for null.
[[nodiscard]] std::optional<std::string> to_string(const Value& value);

// Raw key -> text, as loaded (properties file, then --set, later ones winning).
using RawConfig = std::map<std::string, std::string, std::less<>>;

// The parsed configuration of one definition.
class ConfigValues {
 public:
  // Parses every key of `defs` from `raw` in definition order (the order Kafka validates in):
  // the first bad value or missing required key is the error.
  [[nodiscard]] static Result<ConfigValues, std::string> parse(std::span<const KeyDef> defs, RawConfig raw);

  [[nodiscard]] const KeyDef* find(std::string_view name) const noexcept;
  [[nodiscard]] bool is_set(std::string_view name) const { return raw_.contains(name); }
  [[nodiscard]] const RawConfig& raw() const noexcept { return raw_; }
  // Keys set but not in the definition.
  [[nodiscard]] std::vector<std::string> unknown_keys() const;
  [[nodiscard]] std::span<const KeyDef> defs() const noexcept { return defs_; }

  // Typed accessors; asserting that the key exists and has that type.
  [[nodiscard]] const Value& value(std::string_view name) const;
  [[nodiscard]] bool get_bool(std::string_view name) const;
  [[nodiscard]] std::int32_t get_int(std::string_view name) const;  // INT
  [[nodiscard]] std::int16_t get_short(std::string_view name) const;
  [[nodiscard]] std::int64_t get_long(std::string_view name) const;
  [[nodiscard]] double get_double(std::string_view name) const;
  [[nodiscard]] const std::string& get_string(std::string_view name) const;  // STRING, CLASS, PASSWORD; "" if null
  [[nodiscard]] const std::vector<std::string>& get_list(std::string_view name) const;  // [] if null
  [[nodiscard]] bool is_null(std::string_view name) const;
  // LONG keys with a null default (log.retention.ms): nullopt while unset.
  [[nodiscard]] std::optional<std::int64_t> get_optional_long(std::string_view name) const;

 private:
  std::span<const KeyDef> defs_;
  RawConfig raw_;
  std::map<std::string_view, Value, std::less<>> values_;
};

}  // namespace weir::config
