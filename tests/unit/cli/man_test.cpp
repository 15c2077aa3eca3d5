// `weir help --man [command...]`: a manual page per command, from the same tree as `weir help`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/app.h"

namespace weir::cli {
namespace {

struct Program {
  Program() : app("weir test", std::string(kProgram)) { build_app(app, exit_code); }
  int exit_code = 0;
  CLI::App app;
};

std::string joined(const std::vector<std::string>& path, std::string_view sep) {
  std::string out(kProgram);
  for (const auto& w : path) out += std::string(sep) + w;
  return out;
}

TEST(ManPageTest, EveryCommandHasAPageWithTheStandardSections) {
  Program p;
  const auto paths = command_paths(p.app);
  ASSERT_GT(paths.size(), 30U);  // the program, its commands and their subcommands
  for (const auto& path : paths) {
    auto page = man_page(p.app, path);
    ASSERT_TRUE(page) << joined(path, " ") << ": " << page.error();
    const std::string& text = *page;
    SCOPED_TRACE(joined(path, " "));
    EXPECT_TRUE(text.starts_with(".TH \"")) << text.substr(0, 80);
    for (const char* section : {"\n.SH NAME\n", "\n.SH SYNOPSIS\n", "\n.SH DESCRIPTION\n", "\n.SH OPTIONS\n"}) {
      EXPECT_NE(text.find(section), std::string::npos) << section;
    }
    EXPECT_LT(text.find(".SH NAME"), text.find(".SH SYNOPSIS"));
    EXPECT_LT(text.find(".SH SYNOPSIS"), text.find(".SH DESCRIPTION"));
    EXPECT_LT(text.find(".SH DESCRIPTION"), text.find(".SH OPTIONS"));
    // NAME is "weir-topic-create \- what it does"; the synopsis starts with the command.
    std::string name = joined(path, "-");
    std::string escaped;
    for (const char c : name) escaped += c == '-' ? std::string("\\-") : std::string(1, c);
    EXPECT_NE(text.find(".SH NAME\n" + escaped + " \\- "), std::string::npos);
    std::string command;
    for (const char c : joined(path, " ")) command += c == '-' ? std::string("\\-") : std::string(1, c);
    EXPECT_NE(text.find(".SH SYNOPSIS\n.B " + command + "\n"), std::string::npos);
    // No line of text starts with a '.' or '\'' roff would read as a request, except the requests.
    std::size_t at = 0;
    while ((at = text.find('\n', at)) != std::string::npos && ++at < text.size()) {
      if (text[at] == '\'') ADD_FAILURE() << "a line starting with ': " << text.substr(at, 40);
      if (text[at] == '.') {
        const std::string request = text.substr(at, text.find_first_of(" \n", at) - at);
        EXPECT_TRUE(request == ".TH" || request == ".SH" || request == ".TP" || request == ".B" || request == ".I" ||
                    request == ".PP")
            << request;
      }
    }
  }
}

TEST(ManPageTest, EveryFlagOfACommandIsOnItsPageAndSubcommandsAreListed) {
  Program p;
  const auto page = man_page(p.app, {"topic", "create"});
  ASSERT_TRUE(page);
  for (const char* flag : {"\\-\\-partitions", "\\-\\-bootstrap", "\\-\\-command\\-config", "\\-\\-output"}) {
    EXPECT_NE(page->find(flag), std::string::npos) << flag;
  }
  const auto topic = man_page(p.app, {"topic"});
  ASSERT_TRUE(topic);
  EXPECT_NE(topic->find("\n.SH COMMANDS\n"), std::string::npos);
  EXPECT_NE(topic->find("\n.B create\n"), std::string::npos);
  EXPECT_NE(topic->find("\\fBweir\\-topic\\-create\\fR(1)"), std::string::npos);  // SEE ALSO
  EXPECT_NE(topic->find("\\fBweir\\fR(1)"), std::string::npos);
}

TEST(ManPageTest, PagesAreDeterministic) {
  Program first;
  Program second;
  for (const auto& path : command_paths(first.app)) {
    const auto a = man_page(first.app, path);
    const auto b = man_page(second.app, path);
    const auto again = man_page(first.app, path);
    ASSERT_TRUE(a && b && again);
    EXPECT_EQ(*a, *b) << joined(path, " ");
    EXPECT_EQ(*a, *again) << joined(path, " ");
  }
}

TEST(ManPageTest, AnUnknownCommandIsAnErrorLikeHelp) {
  Program p;
  const auto page = man_page(p.app, {"topik"});
  ASSERT_FALSE(page);
  EXPECT_EQ(page.error(), help_text(p.app, {"topik"}).error());
}

}  // namespace
}  // namespace weir::cli
