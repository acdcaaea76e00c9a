// SPDX-License-Identifier: MIT
//
// Unit tests for resolving the desired state of one device (daemon/config/desired.hpp): which
// rules match, and how later rules override earlier ones key by key.
#include "config/desired.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;

namespace {

DeviceState mlx5_0() {
    DeviceState d;
    d.name = "mlx5_0";
    d.pci_address = "0000:3b:00.0";
    d.kernel_driver = "mlx5_core";
    d.node_guid = "0002:c903:0031:78f0";
    PortState p;
    p.number = 1;
    p.netdev = "ens1f0np0";
    d.ports.push_back(p);
    return d;
}

Rule rule(int line, Match match) {
    Rule r;
    r.file = "rdmad.conf";
    r.line = line;
    r.match = std::move(match);
    r.pfc_no_drop = std::vector<uint8_t>{3};
    return r;
}

bool matches(Match match, const std::vector<LinkState>& links = {}) {
    return rule_matches(match, mlx5_0(), links);
}

} // namespace

TEST_CASE("a PCI address matches exactly, not as a prefix") {
    CHECK(matches({.pci_address = "0000:3b:00.0"}));
    CHECK_FALSE(matches({.pci_address = "0000:3b:00.1"}));
    CHECK_FALSE(matches({.pci_address = "0000:3b:00"}));
}

TEST_CASE("a driver matches the kernel driver exactly") {
    CHECK(matches({.driver = "mlx5_core"}));
    CHECK_FALSE(matches({.driver = "mlx5"}));
    CHECK_FALSE(matches({.driver = "mlx5_ib"}));
}

TEST_CASE("a node GUID matches whatever zero-padding or case the device text has") {
    CHECK(matches({.node_guid = "0002:c903:0031:78f0"}));
    DeviceState d = mlx5_0();
    d.node_guid = "0002:C903:0031:78F0";
    CHECK(rule_matches({.node_guid = "0002:c903:0031:78f0"}, d, {}));
    CHECK_FALSE(matches({.node_guid = "0002:c903:0031:78f1"}));
    d.node_guid = ""; // unreadable GUID: never a match
    CHECK_FALSE(rule_matches({.node_guid = "0002:c903:0031:78f0"}, d, {}));
}

TEST_CASE("a device glob matches the RDMA device name with fnmatch") {
    CHECK(matches({.device_glob = "mlx5_*"}));
    CHECK(matches({.device_glob = "mlx5_[0-3]"}));
    CHECK(matches({.device_glob = "mlx5_0"}));
    CHECK_FALSE(matches({.device_glob = "mlx4_*"}));
    CHECK_FALSE(matches({.device_glob = "mlx5"}));
}

TEST_CASE("a netdev glob matches when any of the device's netdevs does") {
    LinkState a;
    a.name = "ens1f0np0";
    LinkState b;
    b.name = "bond0";
    CHECK(matches({.netdev_glob = "bond*"}, {a, b}));
    CHECK(matches({.netdev_glob = "ens1f0*"}, {})); // through the port's netdev
    CHECK_FALSE(matches({.netdev_glob = "eth*"}, {a, b}));
    DeviceState rxe;
    rxe.name = "rxe0";
    rxe.parent_netdev = "eth7"; // rxe names its netdev in `parent`
    CHECK(rule_matches({.netdev_glob = "eth7"}, rxe, {}));
    rxe.parent_netdev = "";
    CHECK_FALSE(rule_matches({.netdev_glob = "*"}, rxe, {})); // no netdev at all
}

TEST_CASE("every set match key must match, one wrong key rejects the device") {
    CHECK(matches({.driver = "mlx5_core", .device_glob = "mlx5_*"}));
    CHECK_FALSE(matches({.driver = "mlx4_core", .device_glob = "mlx5_*"}));
    CHECK_FALSE(matches({.pci_address = "0000:3b:00.0", .node_guid = "0000:0000:0000:0001"}));
}

TEST_CASE("a rule with an empty match matches no device rather than every device") {
    CHECK_FALSE(matches({}));
}

TEST_CASE("a later rule that sets only pfc_no_drop keeps an earlier rule's port_type") {
    DesiredConfig config;
    Rule first = rule(1, {.device_glob = "mlx5_*"});
    first.port_type = std::vector<std::string>{"eth", "eth"};
    first.pfc_no_drop = std::vector<uint8_t>{3};
    Rule second = rule(5, {.pci_address = "0000:3b:00.0"});
    second.pfc_no_drop = std::vector<uint8_t>{3, 4};
    Rule other = rule(9, {.device_glob = "mlx4_*"}); // does not match
    other.port_type = std::vector<std::string>{"ib"};
    config.rules = {first, second, other};

    const auto d = resolve(config, mlx5_0(), {});
    CHECK(d.port_type == std::vector<std::string>{"eth", "eth"});
    CHECK(d.pfc_no_drop == std::vector<uint8_t>{3, 4});
    CHECK(d.require_provider);
    CHECK(d.from == std::vector<std::string>{"rdmad.conf:1", "rdmad.conf:5"});
}

TEST_CASE("a matching rule that sets nothing is not listed as a source") {
    DesiredConfig config;
    Rule empty;
    empty.file = "x.conf";
    empty.line = 2;
    empty.match.driver = "mlx5_core";
    config.rules = {empty};
    const auto d = resolve(config, mlx5_0(), {});
    CHECK(d == DeviceDesired{});
}

TEST_CASE("require_provider = false from a rule turns the missing-provider problem off") {
    DesiredConfig config;
    Rule r = rule(3, {.driver = "mlx5_core"});
    r.pfc_no_drop.reset();
    r.require_provider = false;
    config.rules = {r};
    const auto d = resolve(config, mlx5_0(), {});
    CHECK_FALSE(d.require_provider);
    CHECK(d.port_type.empty());
    CHECK(d.pfc_no_drop.empty());
}
