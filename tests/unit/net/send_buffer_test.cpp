// The SO_SNDBUF weir sets on an accepted connection (send_buffer_bytes_for).
#include <gtest/gtest.h>

#include <boost/asio/ip/address.hpp>

#include "net/server.h"

namespace weir::net {
namespace {

using boost::asio::ip::make_address;

TEST(SendBufferTest, ConfiguredSizeAppliesToEveryPeer) {
  EXPECT_EQ(send_buffer_bytes_for(65536, make_address("127.0.0.1"), make_address("127.0.0.1")), 65536);
  EXPECT_EQ(send_buffer_bytes_for(65536, make_address("10.0.0.1"), make_address("10.0.0.2")), 65536);
}

TEST(SendBufferTest, RemotePeerKeepsTheAutotunedSize) {
  EXPECT_EQ(send_buffer_bytes_for(-1, make_address("10.0.0.1"), make_address("10.0.0.2")), 0);
  EXPECT_EQ(send_buffer_bytes_for(-1, make_address("2001:db8::1"), make_address("2001:db8::2")), 0);
  EXPECT_EQ(send_buffer_bytes_for(-1, make_address("::ffff:10.0.0.1"), make_address("::ffff:10.0.0.2")), 0);
}

TEST(SendBufferTest, PeerOnThisHostGetsTheFixedSize) {
  EXPECT_EQ(send_buffer_bytes_for(-1, make_address("127.0.0.1"), make_address("127.0.0.1")), kSameHostSendBufferBytes);
  EXPECT_EQ(send_buffer_bytes_for(-1, make_address("127.0.0.1"), make_address("127.0.0.5")), kSameHostSendBufferBytes);
  EXPECT_EQ(send_buffer_bytes_for(-1, make_address("::1"), make_address("::1")), kSameHostSendBufferBytes);
  // A dual-stack listener sees an IPv4 loopback peer as ::ffff:127.0.0.1.
  EXPECT_EQ(send_buffer_bytes_for(-1, make_address("::ffff:127.0.0.1"), make_address("::ffff:127.0.0.1")),
            kSameHostSendBufferBytes);
  // A client on this host that connects to the host's own address also reads over loopback.
  EXPECT_EQ(send_buffer_bytes_for(-1, make_address("10.0.0.1"), make_address("10.0.0.1")), kSameHostSendBufferBytes);
  EXPECT_EQ(send_buffer_bytes_for(-1, make_address("::ffff:10.0.0.1"), make_address("10.0.0.1")),
            kSameHostSendBufferBytes);
}

TEST(SendBufferTest, UnknownAddressesKeepTheAutotunedSize) {
  EXPECT_EQ(send_buffer_bytes_for(-1, make_address("0.0.0.0"), make_address("0.0.0.0")), 0);
}

}  // namespace
}  // namespace weir::net
