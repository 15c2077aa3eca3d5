#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "broker/config.h"

namespace wb = weir::broker;

TEST(Config, ParsesListenersWithAndWithoutHost) {
  auto l = wb::parse_listeners("PLAINTEXT://:9092, INTERNAL://[::1]:9093,EXT://example.com:1");
  ASSERT_TRUE(l.has_value());
  ASSERT_EQ(l->size(), 3u);
  EXPECT_EQ((*l)[0].host, "");
  EXPECT_EQ((*l)[0].port, 9092);
  EXPECT_EQ((*l)[1].host, "::1");
  EXPECT_EQ((*l)[2].name, "EXT");
}

TEST(Config, RejectsListenerWithoutPort) { EXPECT_FALSE(wb::parse_listeners("PLAINTEXT://host").has_value()); }

TEST(Config, PropertiesFileThenOverridesWin) {
  const std::string path = ::testing::TempDir() + "/server.properties";
  {
    std::ofstream out(path);
    out << "# comment\nnode.id=7\nlisteners=PLAINTEXT://127.0.0.1:9092\nlog.dirs=/tmp/a,/tmp/b\n"
        << "some.unknown.key=1\nsocket.request.max.bytes : 1000\n";
  }
  wb::Config c;
  ASSERT_TRUE(c.load_properties_file(path).has_value());
  ASSERT_TRUE(c.set("node.id=8").has_value());
  ASSERT_TRUE(c.finalize().has_value());
  EXPECT_EQ(c.node_id, 8);
  EXPECT_EQ(c.log_dir, "/tmp/a");
  EXPECT_EQ(c.socket_request_max_bytes, 1000);
  ASSERT_EQ(c.advertised_listeners.size(), 1u);
  EXPECT_EQ(c.advertised_listeners[0].host, "127.0.0.1");
  EXPECT_EQ(c.unknown_keys(), std::vector<std::string>{"some.unknown.key"});
}

TEST(Config, InvalidNumberIsAnError) {
  wb::Config c;
  ASSERT_TRUE(c.set("socket.request.max.bytes=lots").has_value());
  EXPECT_FALSE(c.finalize().has_value());
}

TEST(Config, SetWithoutEqualsIsAnError) {
  wb::Config c;
  EXPECT_FALSE(c.set("node.id").has_value());
}

TEST(Config, SocketBufferSizesDefaultToTheOsAndRefuseZeroOrBelowMinusOne) {
  wb::Config c;
  ASSERT_TRUE(c.finalize().has_value());
  EXPECT_EQ(c.socket_send_buffer_bytes, -1);
  EXPECT_EQ(c.socket_receive_buffer_bytes, -1);
  wb::Config set;
  ASSERT_TRUE(set.set("socket.send.buffer.bytes=65536").has_value());
  ASSERT_TRUE(set.set("socket.receive.buffer.bytes=102400").has_value());
  ASSERT_TRUE(set.finalize().has_value());
  EXPECT_EQ(set.socket_send_buffer_bytes, 65536);
  EXPECT_EQ(set.socket_receive_buffer_bytes, 102400);
  for (const char* bad : {"socket.send.buffer.bytes=0", "socket.receive.buffer.bytes=-2"}) {
    wb::Config b;
    ASSERT_TRUE(b.set(bad).has_value());
    auto r = b.finalize();
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().find("-1 for the OS default"), std::string::npos) << r.error();
  }
}
