// The typed config engine: Java's parsing rules and Kafka's messages, word for word (the messages
// were recorded from Kafka 4.3.1's KafkaConfig; tests/scenario/test_config_parity.py compares
// every key's verdicts with a live Kafka).
#include "config/config_def.h"

#include <gtest/gtest.h>

namespace wc = weir::config;

namespace {

constexpr std::string_view kColours[] = {"red", "green"};

constexpr wc::KeyDef kDefs[] = {
    {"an.int", wc::Type::int32, "5", wc::at_least(1), wc::Importance::high, "An int."},
    {"a.short", wc::Type::int16, "3", wc::at_least(1), wc::Importance::high, "A short."},
    {"a.long", wc::Type::int64, wc::kNullDefault, wc::no_check(), wc::Importance::high, "A long."},
    {"a.ratio", wc::Type::float64, "0.5", wc::between(0, 1), wc::Importance::medium, "A double."},
    {"a.flag", wc::Type::boolean, "true", wc::no_check(), wc::Importance::low, "A boolean."},
    {"a.colour", wc::Type::string, "red", wc::one_of(kColours), wc::Importance::low, "A string."},
    {"colours", wc::Type::list, "red", wc::list_of(kColours), wc::Importance::low, "A list."},
    {"dirs", wc::Type::list, wc::kNullDefault, wc::non_empty_list(), wc::Importance::low, "Dirs."},
};

std::string error_of(std::string_view name, std::string_view raw) {
  for (const auto& def : kDefs) {
    if (def.name == name) {
      auto r = wc::parse(def, raw);
      return r ? std::string("ok") : r.error();
    }
  }
  return "no such key";
}

}  // namespace

TEST(ConfigDef, NumbersAreJavaNumbersWithKafkasMessages) {
  EXPECT_EQ(error_of("an.int", " 7 "), "ok");
  EXPECT_EQ(error_of("an.int", "+7"), "ok");
  EXPECT_EQ(error_of("an.int", "abc"), "Invalid value abc for configuration an.int: Not a number of type INT");
  EXPECT_EQ(error_of("an.int", ""), "Invalid value  for configuration an.int: Not a number of type INT");
  EXPECT_EQ(error_of("an.int", "2147483648"),
            "Invalid value 2147483648 for configuration an.int: Not a number of type INT");
  EXPECT_EQ(error_of("an.int", "0x10"), "Invalid value 0x10 for configuration an.int: Not a number of type INT");
  EXPECT_EQ(error_of("an.int", "0"), "Invalid value 0 for configuration an.int: Value must be at least 1");
  EXPECT_EQ(error_of("a.short", "32768"), "Invalid value 32768 for configuration a.short: Not a number of type SHORT");
  EXPECT_EQ(error_of("a.short", "32767"), "ok");
  EXPECT_EQ(error_of("a.long", "-9223372036854775808"), "ok");
  EXPECT_EQ(error_of("a.long", "9223372036854775808"),
            "Invalid value 9223372036854775808 for configuration a.long: Not a number of type LONG");
}

TEST(ConfigDef, RangeMessagesShowTheParsedValue) {
  EXPECT_EQ(error_of("a.ratio", "2"), "Invalid value 2.0 for configuration a.ratio: Value must be no more than 1");
  EXPECT_EQ(error_of("a.ratio", "-0.5"), "Invalid value -0.5 for configuration a.ratio: Value must be at least 0");
  EXPECT_EQ(error_of("a.ratio", "x"), "Invalid value x for configuration a.ratio: Not a number of type DOUBLE");
  EXPECT_EQ(error_of("a.ratio", "NaN"), "ok");  // Java's comparisons with NaN are false
  EXPECT_EQ(error_of("a.ratio", "1f"), "ok");
}

TEST(ConfigDef, BooleansAreTrueOrFalseInAnyCase) {
  EXPECT_EQ(error_of("a.flag", " TRUE "), "ok");
  EXPECT_EQ(error_of("a.flag", "False"), "ok");
  EXPECT_EQ(error_of("a.flag", "maybe"),
            "Invalid value maybe for configuration a.flag: Expected value to be either true or false");
  EXPECT_EQ(error_of("a.flag", "1"),
            "Invalid value 1 for configuration a.flag: Expected value to be either true or false");
}

TEST(ConfigDef, StringsAndListsAreCheckedAgainstTheirValues) {
  EXPECT_EQ(error_of("a.colour", " green "), "ok");
  EXPECT_EQ(error_of("a.colour", "Green"),
            "Invalid value Green for configuration a.colour: String must be one of: red, green");
  EXPECT_EQ(error_of("colours", ""), "ok");
  EXPECT_EQ(error_of("colours", "red , green"), "ok");
  EXPECT_EQ(error_of("colours", "red,"), "Configuration 'colours' values must not be empty.");
  EXPECT_EQ(error_of("colours", "red,blue"),
            "Invalid value blue for configuration colours: String must be one of: red, green");
  EXPECT_EQ(error_of("dirs", ""), "Configuration 'dirs' must not be empty. Valid values include: any non-empty value");
  EXPECT_EQ(error_of("dirs", "/a, "), "Configuration 'dirs' values must not be empty.");
}

TEST(ConfigDef, ValuesArePrintedAsJavaPrintsTheParsedValue) {
  auto v = wc::parse(kDefs[0], " 0010 ");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(wc::to_string(*v), "10");
  auto list = wc::parse(kDefs[6], " red ,  green ");
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(wc::to_string(*list), "red,green");
  auto ratio = wc::parse(kDefs[3], "0.50");
  ASSERT_TRUE(ratio.has_value());
  EXPECT_EQ(wc::to_string(*ratio), "0.5");
  EXPECT_FALSE(wc::to_string(wc::Value{}).has_value());
}

TEST(ConfigDef, ValidatorTextIsKafkasToString) {
  EXPECT_EQ(wc::validator_text(wc::at_least(1)), "[1,...]");
  EXPECT_EQ(wc::validator_text(wc::between(-2, 22)), "[-2,...,22]");
  EXPECT_EQ(wc::validator_text(wc::one_of(kColours)), "[red, green]");
  EXPECT_EQ(wc::validator_text(wc::no_check()), "");
}

TEST(ConfigValues, DefaultsApplyAndTheFirstBadKeyInDefinitionOrderIsTheError) {
  auto ok = wc::ConfigValues::parse(kDefs, {{"a.long", "-1"}, {"other.key", "x"}});
  ASSERT_TRUE(ok.has_value()) << ok.error();
  EXPECT_EQ(ok->get_int("an.int"), 5);
  EXPECT_EQ(ok->get_short("a.short"), 3);
  EXPECT_EQ(ok->get_optional_long("a.long"), -1);
  EXPECT_DOUBLE_EQ(ok->get_double("a.ratio"), 0.5);
  EXPECT_TRUE(ok->get_bool("a.flag"));
  EXPECT_EQ(ok->get_string("a.colour"), "red");
  EXPECT_EQ(ok->get_list("colours"), std::vector<std::string>{"red"});
  EXPECT_TRUE(ok->is_null("dirs"));
  EXPECT_TRUE(ok->get_list("dirs").empty());
  EXPECT_TRUE(ok->is_set("a.long"));
  EXPECT_FALSE(ok->is_set("an.int"));
  EXPECT_EQ(ok->unknown_keys(), std::vector<std::string>{"other.key"});

  auto unset = wc::ConfigValues::parse(kDefs, {});
  ASSERT_TRUE(unset.has_value());
  EXPECT_FALSE(unset->get_optional_long("a.long").has_value());

  auto bad = wc::ConfigValues::parse(kDefs, {{"a.flag", "maybe"}, {"an.int", "0"}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error(), "Invalid value 0 for configuration an.int: Value must be at least 1");
}

TEST(ConfigValues, ARequiredKeyWithoutValueIsAnError) {
  constexpr wc::KeyDef defs[] = {
      {"must.have", wc::Type::string, wc::kRequired, wc::no_check(), wc::Importance::high, ""}};
  auto r = wc::ConfigValues::parse(defs, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), "Missing required configuration \"must.have\" which has no default value.");
}
