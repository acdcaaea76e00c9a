// SPDX-License-Identifier: MIT
//
// Node description vs host name (daemon/doctor/node_description.hpp). rdma-core's rdma-ndd
// writes "<hostname> <device>" into node_desc.
#include "doctor/node_description.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;
using namespace rdmad::doctor;

namespace {

DeviceState ib(const std::string& desc) {
    DeviceState d;
    d.name = "mlx5_0";
    d.node_description = desc;
    PortState p;
    p.number = 1;
    p.transport = "InfiniBand";
    d.ports.push_back(p);
    return d;
}

HostFacts host(const std::string& name) {
    HostFacts h;
    h.hostname = name;
    return h;
}

} // namespace

TEST_CASE("a node description carrying the host name's first label is fine", "[doctor]") {
    auto h = host("node17.cluster.example");
    CHECK(check_node_description(ib("node17 mlx5_0"), &h).empty());
}

TEST_CASE("\"localhost mlx5_0\" on host node17 is node-description-no-hostname, remedy rdma-ndd",
          "[doctor]") {
    auto h = host("node17");
    auto ps = check_node_description(ib("localhost mlx5_0"), &h);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "node-description-no-hostname");
    CHECK(ps[0].severity == "info");
    CHECK(ps[0].evidence[0] == "/sys/class/infiniband/mlx5_0/node_desc = localhost mlx5_0");
    CHECK(ps[0].evidence[1] == "uname -n = node17");
    CHECK(ps[0].remedy.str().find("rdma-ndd") != std::string::npos);
}

TEST_CASE("unknown host name is node-description-unknown; RoCE devices are left alone",
          "[doctor]") {
    auto h = host("");
    CHECK(check_node_description(ib("x"), &h)[0].code == "node-description-unknown");
    auto roce = ib("localhost");
    roce.ports[0].transport = "RoCE";
    auto n = host("node17");
    CHECK(check_node_description(roce, &n).empty());
    CHECK(check_node_description(ib("x"), nullptr).empty());
}
