// The command tree is the one source of `weir help`, `weir <command> --help`, the man pages and
// `weir completion`: every command documents itself, help agrees with --help, every command has a
// page, completion names every command and flag.
#include "cli/app.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace weir::cli {
namespace {

struct Program {
  Program() : app("weir test", std::string(kProgram)) { build_app(app, exit_code); }
  int exit_code = 0;
  CLI::App app;
};

std::vector<const CLI::App*> children(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* c) { return !c->get_group().empty(); });
}

// Every command's path ({} is the program itself).
void paths(const CLI::App& app, std::vector<std::string> path, std::vector<std::vector<std::string>>& out) {
  out.push_back(path);
  for (const CLI::App* c : children(app)) {
    auto sub = path;
    sub.push_back(c->get_name());
    paths(*c, sub, out);
  }
}

const CLI::App* find(const CLI::App& app, const std::vector<std::string>& path) {
  const CLI::App* node = &app;
  for (const auto& word : path) node = node->get_subcommand(word);
  return node;
}

std::vector<std::vector<std::string>> all_paths(const CLI::App& app) {
  std::vector<std::vector<std::string>> out;
  paths(app, {}, out);
  return out;
}

std::string key(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& w : path) out += "/" + w;
  return out;
}

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
    for (const auto& s : o->get_snames()) out.push_back("-" + s);
  }
  return out;
}

TEST(AppTest, TheTreeHasEveryCommandOfTheCli) {
  Program p;
  std::vector<std::string> top;
  for (const CLI::App* c : children(p.app)) top.push_back(c->get_name());
  for (const char* name : {"serve", "topic", "cluster", "produce", "consume", "group", "txn", "help", "completion"}) {
    EXPECT_NE(std::find(top.begin(), top.end(), name), top.end()) << name;
  }
  EXPECT_GT(all_paths(p.app).size(), 30U);
}

TEST(AppTest, EveryCommandFlagAndArgumentHasUsageText) {
  Program p;
  for (const auto& path : all_paths(p.app)) {
    const CLI::App* node = find(p.app, path);
    if (!path.empty()) {
      EXPECT_FALSE(node->get_description().empty()) << key(path);
    }
    for (const CLI::Option* o : node->get_options()) {
      if (o->get_group().empty()) continue;
      EXPECT_FALSE(o->get_description().empty()) << key(path) << " " << o->get_name();
    }
  }
}

TEST(AppTest, HelpOfEveryCommandIsWhatItsHelpFlagPrints) {
  for (const auto& path : all_paths(Program().app)) {
    Program with_flag;
    std::vector<std::string> args{"--help"};
    for (auto it = path.rbegin(); it != path.rend(); ++it) args.push_back(*it);  // parse() takes them reversed
    std::string printed;
    try {
      with_flag.app.parse(args);
      ADD_FAILURE() << key(path) << ": --help did not stop the parse";
    } catch (const CLI::CallForHelp&) {
      printed = with_flag.app.help();  // what main prints through App::exit
    }
    Program with_help;
    auto text = help_text(with_help.app, path);
    ASSERT_TRUE(text) << text.error();
    EXPECT_EQ(*text, printed) << key(path);
    EXPECT_NE(text->find("Usage: weir"), std::string::npos) << key(path);
  }
}

TEST(AppTest, HelpOfAnUnknownCommandSaysWhatWasMeant) {
  Program p;
  EXPECT_EQ(help_text(p.app, {"gruop"}).error(), "'gruop' is not a command of 'weir'; did you mean 'group'?");
  EXPECT_EQ(help_text(p.app, {"group", "seeek"}).error(),
            "'seeek' is not a command of 'weir group'; did you mean 'seek'?");
}

// The line of the bash script that lists what completes after `path`.
std::string bash_words(const std::string& script, const std::vector<std::string>& path) {
  const std::string head = "    \"" + key(path) + "\") words=\"";
  const auto at = script.find(head);
  if (at == std::string::npos) return {};
  const auto end = script.find('"', at + head.size());
  return " " + script.substr(at + head.size(), end - at - head.size()) + " ";
}

TEST(CompletionTest, BashCompletesEveryCommandAndFlagWhereItApplies) {
  Program p;
  const std::string script = completion_script(p.app, "bash");
  ASSERT_FALSE(script.empty());
  EXPECT_NE(script.find("complete -F _weir weir"), std::string::npos);
  for (const auto& path : all_paths(p.app)) {
    const CLI::App* node = find(p.app, path);
    const std::string words = bash_words(script, path);
    ASSERT_FALSE(words.empty()) << key(path);
    for (const CLI::App* c : children(*node)) EXPECT_NE(words.find(" " + c->get_name() + " "), std::string::npos);
    for (const auto& f : flag_names(*node)) EXPECT_NE(words.find(" " + f + " "), std::string::npos) << key(path) << f;
    if (!path.empty()) {
      EXPECT_NE(script.find(key(path) + ") path=\"" + key(path) + "\""), std::string::npos) << key(path);
    }
  }
}

TEST(CompletionTest, ZshDescribesEveryCommandAndFlagWhereItApplies) {
  Program p;
  const std::string script = completion_script(p.app, "zsh");
  ASSERT_TRUE(script.starts_with("#compdef weir\n"));
  for (const auto& path : all_paths(p.app)) {
    const CLI::App* node = find(p.app, path);
    const auto at = script.find("    \"" + key(path) + "\")\n");
    ASSERT_NE(at, std::string::npos) << key(path);
    const std::string block = script.substr(at, script.find(";;", at) - at);
    for (const CLI::App* c : children(*node)) {
      EXPECT_NE(block.find("'" + c->get_name() + ":"), std::string::npos) << key(path) << " " << c->get_name();
    }
    for (const auto& f : flag_names(*node)) EXPECT_NE(block.find("'" + f + ":"), std::string::npos) << key(path) << f;
  }
  EXPECT_TRUE(completion_script(p.app, "fish").empty());
}

// What bash offers for the words typed so far, with the generated script loaded.
std::string bash_complete(const std::string& script_path, const std::string& words, int cword) {
  const std::string command = "bash --norc --noprofile -c 'source " + script_path + "; COMP_WORDS=(" + words +
                              "); COMP_CWORD=" + std::to_string(cword) + "; _weir; echo \"${COMPREPLY[*]}\"'";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 256> buf{};
  while (pipe && std::fgets(buf.data(), buf.size(), pipe.get()) != nullptr) out += buf.data();
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(CompletionTest, BashCompletesCommandsThenSubcommandsThenFlags) {
  Program p;
  const auto file = std::filesystem::temp_directory_path() / ("weir-completion-" + std::to_string(getpid()) + ".bash");
  std::ofstream(file) << completion_script(p.app, "bash");
  EXPECT_EQ(bash_complete(file.string(), "weir gr", 1), "group");
  EXPECT_EQ(bash_complete(file.string(), "weir group se", 2), "seek");
  EXPECT_EQ(bash_complete(file.string(), "weir group seek g1 --from-f", 4), "--from-file");
  EXPECT_EQ(bash_complete(file.string(), "weir cluster config ''", 3), "get set --help -h");
  EXPECT_EQ(bash_complete(file.string(), "weir topic create -p 3 --if", 5), "--if-not-exists");
  std::filesystem::remove(file);
}

// `weir help --man [command...]`: a manual page per command, from the same tree as `weir help`.
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
