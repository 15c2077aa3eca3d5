// weir's uniform and range assignors against the golden assignments Kafka 4.3.1's own assignors
// produce for the case table tests/data/assignor_cases.txt (tests/data/assignor_golden.txt, made
// by tests/java/AssignorVectors.java; tests/scenario/test_group_assignor_golden.py checks that it
// is current). The input is built as AssignorVectors builds Kafka's: the members, subscriptions
// and current assignments iterate in java.util.HashMap/HashSet order (java_hash_order), filled in
// the table's order, and the output is printed in the same sorted text.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "group/assignor.h"

namespace weir::group {
namespace {

std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

Uuid topic_id(const std::string& name) { return Uuid(fnv1a64(name), fnv1a64(name + "/")); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

struct Topic {
  std::int32_t partitions = 0;
  std::vector<std::vector<std::string>> racks;
};

struct Member {
  std::string id;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::vector<std::string> subscribed;
  std::map<std::string, std::set<std::int32_t>> owns;  // by topic name
};

// The state of one case between its steps, and its printed output.
class CaseRunner {
 public:
  explicit CaseRunner(std::string assignor) : assignor_(std::move(assignor)) {}

  void topic(const std::string& name, std::int32_t partitions, const std::string& racks) {
    Topic t;
    t.partitions = partitions;
    if (!racks.empty()) {
      for (const auto& r : split(racks, '/')) t.racks.push_back(split(r, ','));
    }
    topics_[name] = std::move(t);
    see(name);
  }
  void drop_topic(const std::string& name) { topics_.erase(name); }

  Member& member(const std::string& id) {
    auto it = std::find_if(members_.begin(), members_.end(), [&](const Member& m) { return m.id == id; });
    if (it != members_.end()) return *it;
    members_.push_back(Member{id, {}, {}, {}, {}});
    return members_.back();
  }
  void seen_topics_of(const Member& m) {
    for (const auto& t : m.subscribed) see(t);
    for (const auto& [t, ps] : m.owns) see(t);
  }
  bool leave(const std::string& id) {
    return std::erase_if(members_, [&](const Member& m) { return m.id == id; }) == 1;
  }
  bool replace(const std::string& id, const std::string& new_id) {
    auto it = std::find_if(members_.begin(), members_.end(), [&](const Member& m) { return m.id == id; });
    if (it == members_.end()) return false;
    Member m = std::move(*it);
    members_.erase(it);
    m.id = new_id;
    members_.push_back(std::move(m));
    return true;
  }

  void run(int step, std::string& out);

 private:
  void see(const std::string& name) {
    if (std::find(topic_order_.begin(), topic_order_.end(), name) == topic_order_.end()) topic_order_.push_back(name);
  }

  std::string assignor_;
  std::map<std::string, Topic> topics_;
  std::vector<Member> members_;           // in the table's order
  std::vector<std::string> topic_order_;  // every topic name of the case, first sight order
};

void CaseRunner::run(int step, std::string& out) {
  std::map<Uuid, std::string> names;
  for (const auto& t : topic_order_) names[topic_id(t)] = t;

  TopicTableDescriber describer;
  for (const auto& [name, t] : topics_) describer.add_topic(topic_id(name), t.partitions, t.racks);

  std::vector<std::string> ids;
  std::map<std::string, std::int32_t> subscriber_counts;
  for (const auto& m : members_) {
    ids.push_back(m.id);
    for (const auto& t : m.subscribed) ++subscriber_counts[t];
  }
  AssignmentGroupSpec spec;
  for (const auto& [t, count] : subscriber_counts) {
    if (count != static_cast<std::int32_t>(members_.size())) spec.subscription_type = SubscriptionType::kHeterogeneous;
  }
  for (const auto& id : java_hash_order(ids)) {
    const Member& m = *std::find_if(members_.begin(), members_.end(), [&](const Member& x) { return x.id == id; });
    AssignmentMemberSpec ms;
    ms.member_id = m.id;
    ms.instance_id = m.instance_id;
    ms.rack_id = m.rack_id;
    std::vector<Uuid> subscribed;
    for (const auto& t : m.subscribed) subscribed.push_back(topic_id(t));
    ms.subscribed_topic_ids = java_hash_order(std::move(subscribed));
    std::vector<Uuid> owned_topics;
    for (const auto& t : topic_order_) {
      if (m.owns.contains(t)) owned_topics.push_back(topic_id(t));
    }
    for (const auto& t : java_hash_order(std::move(owned_topics))) {
      const auto& ps = m.owns.at(names.at(t));
      ms.current_assignment.push_back(
          TopicPartitions{t, java_hash_order(std::vector<std::int32_t>(ps.begin(), ps.end()))});
    }
    spec.members.push_back(std::move(ms));
  }

  out += "step " + std::to_string(step) + " " +
         (spec.subscription_type == SubscriptionType::kHomogeneous ? "homogeneous" : "heterogeneous") + "\n";
  const PartitionAssignor* assignor = find_assignor(assignor_);
  ASSERT_NE(assignor, nullptr) << assignor_;
  const auto result = assignor->assign(spec, describer);
  if (!result) {
    // The exception Kafka's assignor throws for the same input.
    out += result.error() == AssignorErrc::kPartitionOutOfRange ? "  error ArrayIndexOutOfBoundsException\n"
                                                                : "  error PartitionAssignorException\n";
    return;
  }
  for (auto& m : members_) {
    const auto it = result->find(m.id);
    m.owns.clear();
    if (it == result->end()) continue;
    for (const auto& [t, ps] : it->second) m.owns[names.at(t)] = std::set<std::int32_t>(ps.begin(), ps.end());
  }
  for (const auto& [member_id, assignment] : *result) {
    std::map<std::string, std::set<std::int32_t>> by_name;
    for (const auto& [t, ps] : assignment) by_name[names.at(t)] = std::set<std::int32_t>(ps.begin(), ps.end());
    out += "  " + member_id;
    if (by_name.empty()) out += " -";
    for (const auto& [name, ps] : by_name) {
      out += " " + name + ":";
      bool first = true;
      for (const auto p : ps) {
        if (!first) out += ",";
        out += std::to_string(p);
        first = false;
      }
    }
    out += "\n";
  }
}

std::map<std::string, std::string> options(const std::vector<std::string>& words, std::size_t from) {
  std::map<std::string, std::string> out;
  for (std::size_t i = from; i < words.size(); ++i) {
    const auto eq = words[i].find('=');
    EXPECT_NE(eq, std::string::npos) << words[i];
    if (eq != std::string::npos) out[words[i].substr(0, eq)] = words[i].substr(eq + 1);
  }
  return out;
}

std::map<std::string, std::set<std::int32_t>> parse_owns(const std::string& text) {
  std::map<std::string, std::set<std::int32_t>> out;
  if (text.empty() || text == "-") return out;
  for (const auto& part : split(text, ';')) {
    const auto colon = part.find(':');
    auto& ps = out[part.substr(0, colon)];
    for (const auto& p : split(part.substr(colon + 1), ',')) ps.insert(std::stoi(p));
  }
  return out;
}

// The case table run through weir's assignors: case name -> its printed steps.
std::map<std::string, std::string> run_cases(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::map<std::string, std::string> out;
  std::optional<CaseRunner> runner;
  std::string* text = nullptr;
  int step = 0;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream words_in(line);
    std::vector<std::string> w;
    for (std::string word; words_in >> word;) w.push_back(word);
    if (w.empty() || w[0].starts_with('#')) continue;
    SCOPED_TRACE(path + ":" + std::to_string(line_no));
    if (w[0] == "case") {
      runner.emplace(w.at(2));
      text = &out[w.at(1) + " " + w.at(2)];
      step = 0;
      continue;
    }
    if (!runner) {
      ADD_FAILURE() << "line before the first case";
      continue;
    }
    if (w[0] == "topic") {
      runner->topic(w.at(1), std::stoi(w.at(2)), options(w, 3)["racks"]);
    } else if (w[0] == "drop-topic") {
      runner->drop_topic(w.at(1));
    } else if (w[0] == "member") {
      auto o = options(w, 2);
      Member& m = runner->member(w.at(1));
      if (o.contains("instance")) m.instance_id = o["instance"];
      if (o.contains("rack")) m.rack_id = o["rack"];
      if (o.contains("subscribe"))
        m.subscribed = o["subscribe"].empty() ? std::vector<std::string>{} : split(o["subscribe"], ',');
      if (o.contains("owns")) m.owns = parse_owns(o["owns"]);
      runner->seen_topics_of(m);
    } else if (w[0] == "leave") {
      EXPECT_TRUE(runner->leave(w.at(1))) << w.at(1);
    } else if (w[0] == "replace") {
      EXPECT_TRUE(runner->replace(w.at(1), w.at(2))) << w.at(1);
    } else if (w[0] == "run") {
      runner->run(++step, *text);
    } else {
      ADD_FAILURE() << "unknown line: " << line;
    }
  }
  return out;
}

// The golden file: case name -> its steps as printed.
std::map<std::string, std::string> read_golden(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::map<std::string, std::string> out;
  std::string* text = nullptr;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.starts_with('#')) continue;
    if (line.starts_with("case ")) {
      text = &out[line.substr(5)];
      continue;
    }
    if (text == nullptr) {
      ADD_FAILURE() << "golden line before the first case: " << line;
      continue;
    }
    *text += line + "\n";
  }
  return out;
}

TEST(AssignorGoldenTest, WeirAssignsWhatKafkasAssignorsAssign) {
  const std::string dir = WEIR_GROUP_TEST_DATA;
  const auto golden = read_golden(dir + "/assignor_golden.txt");
  const auto weir = run_cases(dir + "/assignor_cases.txt");
  ASSERT_GE(golden.size(), 20U);
  for (const auto& [name, steps] : golden) {
    SCOPED_TRACE(name);
    const auto it = weir.find(name);
    ASSERT_NE(it, weir.end()) << "case missing from the table";
    EXPECT_EQ(it->second, steps);
  }
  EXPECT_EQ(weir.size(), golden.size());
}

}  // namespace
}  // namespace weir::group
