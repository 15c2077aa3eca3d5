// The broker's start-up configuration: Kafka's verdicts and messages for the keys weir knows.
#include "config/broker_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace wc = weir::config;

namespace {
// finalize() of the defaults plus these overrides: "ok" or the error.
std::string verdict(std::initializer_list<const char*> assignments) {
  wc::BrokerConfig c;
  for (const char* a : assignments) {
    if (auto r = c.set(a); !r) return r.error();
  }
  auto r = c.finalize();
  return r ? std::string("ok") : r.error();
}
TEST(ParsePerIpOverridesTest, ParsesHostCountPairsWithBlanksAndIpv6) {
  auto r = wc::parse_per_ip_overrides(" host1:100 , 127.0.0.1:2,::1:0");
  ASSERT_TRUE(r.has_value()) << r.error();
  ASSERT_EQ(r->size(), 3U);
  EXPECT_EQ((*r)[0], (std::pair<std::string, std::int32_t>{"host1", 100}));
  EXPECT_EQ((*r)[1], (std::pair<std::string, std::int32_t>{"127.0.0.1", 2}));
  EXPECT_EQ((*r)[2], (std::pair<std::string, std::int32_t>{"::1", 0}));
  auto empty = wc::parse_per_ip_overrides("  ");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

TEST(ParsePerIpOverridesTest, RejectsEntriesThatAreNotHostColonCount) {
  for (const char* bad : {"host1", "host1:", ":5", "host1:abc", "host1:-1", "host1:5,", "host1:99999999999"}) {
    auto r = wc::parse_per_ip_overrides(bad);
    EXPECT_FALSE(r.has_value()) << bad;
  }
  EXPECT_NE(wc::parse_per_ip_overrides("a:1,b").error().find("'b'"), std::string::npos);
}

}  // namespace

TEST(BrokerConfig, ParsesListenersWithAndWithoutHost) {
  auto l = wc::parse_listeners("PLAINTEXT://:9092, INTERNAL://[::1]:9093,ext://example.com:1");
  ASSERT_TRUE(l.has_value()) << l.error();
  ASSERT_EQ(l->size(), 3u);
  EXPECT_EQ((*l)[0].host, "");
  EXPECT_EQ((*l)[0].port, 9092);
  EXPECT_EQ((*l)[1].host, "::1");
  EXPECT_EQ((*l)[2].name, "EXT");  // Kafka upper-cases listener names
}

TEST(BrokerConfig, RejectsListenerWithoutPort) { EXPECT_FALSE(wc::parse_listeners("PLAINTEXT://host").has_value()); }

TEST(BrokerConfig, PropertiesFileThenOverridesWin) {
  const std::string path = ::testing::TempDir() + "/server.properties";
  {
    std::ofstream out(path);
    out << "# comment\nnode.id=7\nlisteners=PLAINTEXT://127.0.0.1:9092\nlog.dirs=/tmp/a\n"
        << "some.unknown.key=1\nsocket.request.max.bytes : 1000\nnum.partitions 3\n";
  }
  wc::BrokerConfig c;
  ASSERT_TRUE(c.load_properties_file(path).has_value());
  ASSERT_TRUE(c.set("node.id=8").has_value());
  ASSERT_TRUE(c.finalize().has_value());
  EXPECT_EQ(c.node_id, 8);
  EXPECT_EQ(c.log_dir, "/tmp/a");
  EXPECT_EQ(c.socket_request_max_bytes, 1000);
  EXPECT_EQ(c.typed().get_int("num.partitions"), 3);
  ASSERT_EQ(c.advertised_listeners.size(), 1u);
  EXPECT_EQ(c.advertised_listeners[0].host, "127.0.0.1");
  EXPECT_EQ(c.unknown_keys(), std::vector<std::string>{"some.unknown.key"});
}

TEST(BrokerConfig, SeveralLogDirsAreRefusedNamingTheKey) {
  // Kafka would spread partitions over both (JBOD); weir would see only the first's.
  EXPECT_EQ(verdict({"log.dirs=/tmp/a,/tmp/b"}),
            "Invalid value /tmp/a,/tmp/b for configuration log.dirs: weir serves one log directory; several (JBOD) "
            "are not supported yet");
}

TEST(BrokerConfig, AMetadataLogDirOtherThanTheLogDirIsRefused) {
  // Kafka would keep the metadata log there; weir keeps it in the log directory and would not see it.
  EXPECT_EQ(verdict({"log.dirs=/tmp/a", "metadata.log.dir=/tmp/meta"}),
            "Invalid value /tmp/meta for configuration metadata.log.dir: weir keeps the metadata log in the log "
            "directory (/tmp/a); a separate metadata log directory is not supported yet");
  EXPECT_EQ(verdict({"log.dirs=/tmp/a", "metadata.log.dir=/tmp/a/"}), "ok");
  EXPECT_EQ(verdict({"log.dirs=/tmp/a/../a", "metadata.log.dir=/tmp/a"}), "ok");
}

TEST(BrokerConfig, InvalidValuesAreRefusedWithKafkasMessage) {
  EXPECT_EQ(verdict({"group.max.size=abc"}),
            "Invalid value abc for configuration group.max.size: Not a number of type INT");
  EXPECT_EQ(verdict({"num.partitions=0"}),
            "Invalid value 0 for configuration num.partitions: Value must be at least 1");
  EXPECT_EQ(verdict({"num.partitions=-3"}),
            "Invalid value -3 for configuration num.partitions: Value must be at least 1");
  EXPECT_EQ(
      verdict({"auto.create.topics.enable=maybe"}),
      "Invalid value maybe for configuration auto.create.topics.enable: Expected value to be either true or false");
  EXPECT_EQ(verdict({"group.min.session.timeout.ms=99999999999"}),
            "Invalid value 99999999999 for configuration group.min.session.timeout.ms: Not a number of type INT");
  EXPECT_EQ(verdict({"log.segment.bytes=-5"}),
            "Invalid value -5 for configuration log.segment.bytes: Value must be at least 1048576");
  EXPECT_EQ(verdict({"log.retention.ms=abc"}),
            "Invalid value abc for configuration log.retention.ms: Not a number of type LONG");
  EXPECT_EQ(verdict({"offsets.topic.replication.factor=40000"}),
            "Invalid value 40000 for configuration offsets.topic.replication.factor: Not a number of type SHORT");
}

// KIP-392: the replica selector weir implements is Kafka's rack-aware one; any other class (a
// plugin weir cannot load) stops the start-up with the key named.
TEST(BrokerConfig, ReplicaSelectorIsTheRackAwareOneOrNone) {
  EXPECT_EQ(verdict({"replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector"}), "ok");
  const std::string bad = verdict({"replica.selector.class=com.example.MySelector"});
  EXPECT_NE(bad.find("Invalid value com.example.MySelector for configuration replica.selector.class"),
            std::string::npos)
      << bad;
}

// Kafka's CaseInsensitiveValidString: any case is accepted; the message lists the names
// upper-cased in the order Kafka prints them.
TEST(BrokerConfig, ConsumerGroupMigrationPolicyIsANameInAnyCase) {
  EXPECT_EQ(verdict({"group.consumer.migration.policy=UpGrade"}), "ok");
  EXPECT_EQ(verdict({"group.consumer.migration.policy=DISABLED"}), "ok");
  EXPECT_EQ(verdict({"group.consumer.migration.policy=sideways"}),
            "Invalid value sideways for configuration group.consumer.migration.policy: String must be one of (case "
            "insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL");
}

TEST(BrokerConfig, ValidNegativesStayValid) {
  EXPECT_EQ(verdict({"log.retention.ms=-1"}), "ok");
  EXPECT_EQ(verdict({"log.retention.bytes=-1"}), "ok");
  EXPECT_EQ(verdict({"broker.id=-1"}), "ok");
}

TEST(BrokerConfig, EmptyListsAreRefusedAsKafkaDoes) {
  EXPECT_EQ(verdict({"log.dirs="}),
            "Configuration 'log.dirs' must not be empty. Valid values include: any non-empty value");
  EXPECT_EQ(verdict({"log.dirs=/a,"}), "Configuration 'log.dirs' values must not be empty.");
  EXPECT_EQ(verdict({"listeners="}),
            "Configuration 'listeners' must not be empty. Valid values include: any non-empty value");
  EXPECT_EQ(verdict({"log.cleanup.policy="}), "ok");
}

TEST(BrokerConfig, RulesRelatingKeys) {
  EXPECT_EQ(verdict({"node.id=2", "broker.id=3"}), "You must set `node.id` to the same value as `broker.id`.");
  const std::string dedupe =
      "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread. "
      "(log.cleaner.dedupe.buffer.size / log.cleaner.threads must exceed 1048576)";
  EXPECT_EQ(verdict({"log.cleaner.dedupe.buffer.size=1048575"}), dedupe);
  EXPECT_EQ(verdict({"log.cleaner.dedupe.buffer.size=1048576"}), dedupe);
  EXPECT_EQ(verdict({"log.cleaner.threads=2147483647"}), dedupe);
  EXPECT_EQ(verdict({"log.cleaner.dedupe.buffer.size=1048577"}), "ok");
  EXPECT_EQ(verdict({"log.retention.hours=0"}),
            "requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1 "
            "(log.retention.ms, else log.retention.minutes, else log.retention.hours)");
  EXPECT_EQ(verdict({"log.retention.hours=0", "log.retention.ms=5"}), "ok");
  EXPECT_EQ(verdict({"log.retention.hours=-5"}), "ok");  // any negative retention is unlimited
  EXPECT_EQ(verdict({"log.roll.ms=0"}), "requirement failed: log.roll.ms must be greater than or equal to 1");
  EXPECT_EQ(verdict({"log.roll.jitter.ms=-1"}),
            "requirement failed: log.roll.jitter.ms must be greater than or equal to 0");
  EXPECT_EQ(verdict({"advertised.listeners=PLAINTEXT://0.0.0.0:9092"}),
            "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable "
            "IP address.");
  EXPECT_EQ(
      verdict({"inter.broker.listener.name=FOO"}),
      "Listener with name FOO defined in inter.broker.listener.name not found in listener.security.protocol.map.");
  EXPECT_EQ(verdict({"listeners=PLAINTEXT://:9092,PLAINTEXT://:9093"}),
            "Error creating broker listeners from '[PLAINTEXT://:9092, PLAINTEXT://:9093]': Each listener must have a "
            "different name, listeners: [PLAINTEXT://:9092, PLAINTEXT://:9093]");
  EXPECT_EQ(verdict({"listeners=INTERNAL://:9092"}),
            "Error creating broker listeners from '[INTERNAL://:9092]': No security protocol defined for listener "
            "INTERNAL");
  EXPECT_EQ(verdict({"listeners=INTERNAL://:9092", "listener.security.protocol.map=INTERNAL:PLAINTEXT"}), "ok");
}

TEST(BrokerConfig, SecurityProtocolsWeirCannotServeAreRefusedNamingTheListener) {
  for (const char* l : {"listeners=SSL://:9093", "listeners=SASL_PLAINTEXT://:9093", "listeners=SASL_SSL://:9093"}) {
    const std::string v = verdict({l});
    EXPECT_NE(v.find("which weir cannot serve yet"), std::string::npos) << v;
    EXPECT_NE(v.find(std::string(l).substr(10)), std::string::npos) << v;
  }
  const std::string mapped = verdict({"listeners=PLAINTEXT://:9092", "listener.security.protocol.map=PLAINTEXT:SSL"});
  EXPECT_EQ(mapped,
            "listener PLAINTEXT://:9092 uses security protocol SSL, which weir cannot serve yet (only "
            "PLAINTEXT listeners)");
}

TEST(BrokerConfig, SetWithoutEqualsIsAnError) {
  wc::BrokerConfig c;
  EXPECT_FALSE(c.set("node.id").has_value());
}

TEST(BrokerConfig, SocketBufferSizesBelowOneMeanTheOsDefault) {
  wc::BrokerConfig c;
  ASSERT_TRUE(c.finalize().has_value());
  EXPECT_EQ(c.socket_send_buffer_bytes, -1);
  EXPECT_EQ(c.socket_receive_buffer_bytes, -1);
  wc::BrokerConfig set;
  ASSERT_TRUE(set.set("socket.send.buffer.bytes=65536").has_value());
  ASSERT_TRUE(set.set("socket.receive.buffer.bytes=0").has_value());
  ASSERT_TRUE(set.finalize().has_value());
  EXPECT_EQ(set.socket_send_buffer_bytes, 65536);
  EXPECT_EQ(set.socket_receive_buffer_bytes, -1);
  // Kafka accepts any INT here; so does weir.
  EXPECT_EQ(verdict({"socket.send.buffer.bytes=-5"}), "ok");
}

TEST(BrokerConfig, EveryDefaultIsValidAndKeysAreUnique) {
  const auto defs = wc::broker_config_defs();
  for (std::size_t i = 0; i < defs.size(); ++i) {
    for (std::size_t j = i + 1; j < defs.size(); ++j) EXPECT_NE(defs[i].name, defs[j].name);
    if (!defs[i].null_default() && !defs[i].required()) {
      auto v = wc::parse(defs[i], defs[i].default_value);
      EXPECT_TRUE(v.has_value()) << defs[i].name;
    }
  }
}

TEST(BrokerConfig, ConnectionLimitsFollowKafkasRules) {
  EXPECT_EQ(verdict({"max.connections.per.ip=0"}),
            "requirement failed: max.connections.per.ip can be set to zero only if "
            "max.connections.per.ip.overrides property is set.");
  EXPECT_EQ(verdict({"max.connections.per.ip=0", "max.connections.per.ip.overrides=127.0.0.1:5"}), "ok");
  EXPECT_EQ(verdict({"queued.max.request.bytes=1"}),
            "requirement failed: queued.max.request.bytes must be larger or equal to socket.request.max.bytes");
  EXPECT_EQ(verdict({"max.connections.per.ip.overrides=a:1,"})
                .rfind("Invalid value a:1, for configuration max.connections.per.ip.overrides: ", 0),
            0U);
  EXPECT_EQ(verdict({"connections.max.idle.ms=100"}),
            "requirement failed: connection.failed.authentication.delay.ms=100 should always be less than "
            "connections.max.idle.ms=100 to prevent failed authentication responses from timing out");
  EXPECT_EQ(verdict({"connections.max.idle.ms=-1"}), "ok");
  EXPECT_EQ(verdict({"connections.max.idle.ms=101"}), "ok");
  EXPECT_EQ(verdict({"max.connections=-1"}),
            "Invalid value -1 for configuration max.connections: Value must be at least 0");
}

TEST(BrokerConfig, ConnectionLimitsAreDerivedWhereKafkasDefaultIsUnbounded) {
  wc::BrokerConfig c;
  ASSERT_TRUE(c.finalize().has_value());
  EXPECT_FALSE(c.max_connections.has_value());  // the server derives it from RLIMIT_NOFILE
  EXPECT_EQ(c.queued_max_request_bytes, std::int64_t{256} << 20);
  wc::BrokerConfig set;
  ASSERT_TRUE(set.set("max.connections=7").has_value());
  ASSERT_TRUE(set.set("socket.request.max.bytes=200000000").has_value());
  ASSERT_TRUE(set.set("max.connections.per.ip.overrides= h:2 , ::1:0").has_value());
  ASSERT_TRUE(set.finalize().has_value());
  EXPECT_EQ(set.max_connections, 7);
  EXPECT_EQ(set.queued_max_request_bytes, 400000000);
  ASSERT_EQ(set.max_connections_per_ip_overrides.size(), 2U);
  EXPECT_EQ(set.max_connections_per_ip_overrides[1], (std::pair<std::string, std::int32_t>{"::1", 0}));
}

// process.roles=broker: a broker under a KRaft controller quorum. The messages are Kafka 4.3.1's
// (KafkaConfig, checked with a real KafkaConfig on the same properties).
TEST(BrokerConfig, BrokerOnlyNeedsControllerListenerNames) {
  EXPECT_EQ(verdict({"process.roles=broker", "node.id=2", "controller.quorum.bootstrap.servers=localhost:9093"}),
            "Missing required configuration \"controller.listener.names\" which has no default value.");
}

TEST(BrokerConfig, BrokerOnlyNeedsVotersOrBootstrapServers) {
  EXPECT_EQ(verdict({"process.roles=broker", "node.id=2", "controller.listener.names=CONTROLLER"}),
            "If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap "
            "controllers or controller.quorum.voters must contain a parseable set of controllers.");
}

TEST(BrokerConfig, BrokerOnlyNodeMustNotBeAVoter) {
  EXPECT_EQ(verdict({"process.roles=broker", "node.id=2", "controller.listener.names=CONTROLLER",
                     "controller.quorum.voters=2@localhost:9093"}),
            "requirement failed: If process.roles contains just the 'broker' role, the node id 2 must not be included "
            "in the set of voters controller.quorum.voters=Set(2)");
}

TEST(BrokerConfig, BrokerOnlyListenersMustNotHoldTheControllerListener) {
  EXPECT_EQ(
      verdict({"process.roles=broker", "node.id=2", "controller.listener.names=CONTROLLER",
               "controller.quorum.bootstrap.servers=localhost:9093", "listeners=PLAINTEXT://:9092,CONTROLLER://:9093",
               "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"}),
      "requirement failed: controller.listener.names must not contain a value appearing in the 'listeners' "
      "configuration when running KRaft with just the broker role");
}

TEST(BrokerConfig, QuorumListsAreParsedWithKafkasMessages) {
  EXPECT_EQ(verdict({"controller.quorum.voters=abc"}),
            "Invalid configuration value for controller.quorum.voters. Each entry should be in the form "
            "`{id}@{host}:{port}`.");
  EXPECT_EQ(verdict({"controller.quorum.bootstrap.servers=abc"}),
            "Failed to parse host name from abc for the configuration controller.quorum.bootstrap.servers. Each "
            "entry should be in the form \"{host}:{port}\"");
  wc::BrokerConfig c;
  ASSERT_TRUE(c.set("process.roles=broker").has_value());
  ASSERT_TRUE(c.set("node.id=5").has_value());
  ASSERT_TRUE(c.set("controller.listener.names=CONTROLLER").has_value());
  ASSERT_TRUE(c.set("controller.quorum.voters=1@localhost:9093,2@[::1]:9094").has_value());
  ASSERT_TRUE(c.set("controller.quorum.bootstrap.servers=ctl:9095").has_value());
  ASSERT_TRUE(c.finalize().has_value());
  EXPECT_TRUE(c.broker_only);
  ASSERT_EQ(c.quorum_voters.size(), 2U);
  EXPECT_EQ(c.quorum_voters[1], (wc::BrokerConfig::QuorumNode{2, "::1", 9094}));
  ASSERT_EQ(c.quorum_bootstrap.size(), 1U);
  EXPECT_EQ(c.quorum_bootstrap[0], (wc::BrokerConfig::QuorumNode{-1, "ctl", 9095}));
}

TEST(BrokerConfig, ControllerOnlyIsRefused) {
  EXPECT_NE(verdict({"process.roles=controller"}).find("weir cannot run a controller-only node yet"),
            std::string::npos);
}
