// SPDX-License-Identifier: MIT
//
// GID tables follow a netdev's addresses, and the kernel sends no uevent for that: rdmad reads
// the port's GID table again on an rtnetlink address event of its netdev. The address event
// is real: a veth made in this test gets the address, and the fixture's netdev is
// given the veth's ifindex, so the kernel's RTM_NEWADDR names it. The GID table is written
// into the testbed as the kernel's RoCE GID code would (drivers/infiniband/core/
// roce_gid_mgmt.c: an IPv4 address a.b.c.d gives an "IB/RoCE v1" and a "RoCE v2" GID
// ::ffff:a.b.c.d on the port; its removal empties both slots).
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

using namespace it;
using namespace std::chrono_literals;

namespace {

constexpr auto kWait = 10s;
constexpr auto kSettle = 400ms; // > the 100 ms address settle time + a pass

// constructed-mlx5-roce: mlx5_0 port 1 on ens1f0np0 (tests/fixtures/make-constructed.py).
const std::string kNetdev = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/net/ens1f0np0";
const std::string kIbdev = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0";
const std::string kZero = "0000:0000:0000:0000:0000:0000:0000:0000";

/// A veth pair in this network namespace (the kernel here has no dummy driver), never brought
/// up (no IPv6 autoconfiguration noise): `ip address add` on it still sends RTM_NEWADDR.
struct Dummy {
    std::string name = "rdgid" + std::to_string(getpid() % 1000000);
    int ifindex = 0;
    Dummy() {
        run_program({"ip", "link", "del", name});
        auto r =
            run_program({"ip", "link", "add", name, "type", "veth", "peer", "name", name + "p"});
        REQUIRE(r.status == 0);
        r = run_program({"ip", "-o", "link", "show", "dev", name});
        REQUIRE(r.status == 0);
        ifindex = std::stoi(r.out.substr(0, r.out.find(':'))); // "12: rdgid42@rdgid42p: <...>"
        REQUIRE(ifindex > 0);
    }
    ~Dummy() { run_program({"ip", "link", "del", name}); }
    void address(const char* verb, const std::string& cidr) {
        auto r = run_program({"ip", "address", verb, cidr, "dev", name});
        REQUIRE(r.status == 0);
    }
};

void set_gid(Testbed& tb, int index, const std::string& gid, const std::string& type) {
    const std::string i = std::to_string(index);
    tb.set_attr(kIbdev, "ports/1/gids/" + i, gid + "\n");
    tb.set_attr(kIbdev, "ports/1/gid_attrs/types/" + i, type + "\n");
    tb.set_attr(kIbdev, "ports/1/gid_attrs/ndevs/" + i, "ens1f0np0\n");
}

/// Port 1 of mlx5_0 as Describe() has it.
json port1(Client& c) {
    const json d = c.describe();
    for (const auto& dev : d["Devices"])
        if (dev["Name"] == "mlx5_0")
            for (const auto& p : dev["Ports"])
                if (p["Number"] == 1)
                    return p;
    return {};
}

json recommended(Client& c) {
    return port1(c)["RecommendedGID"];
}

json gid(uint32_t index, const std::string& gid, const std::string& type, const std::string& netdev,
         const std::string& ip) {
    return {{"Index", index}, {"GID", gid}, {"Type", type}, {"Netdev", netdev}, {"IP", ip}};
}

} // namespace

TEST_CASE("GIDs: an address event re-reads the port's GID table; one change, RecommendedGID "
          "follows",
          "[gids]") {
    Dummy dummy;
    PrivateBus bus;
    Testbed tb("constructed-mlx5-roce");
    tb.set_attr(kNetdev, "ifindex", std::to_string(dummy.ifindex) + "\n");
    DaemonProcess daemon;
    Client client;
    const std::string port = client.device_by_name("mlx5_0") + "/port/1";
    // The fixture's IPv4 address 192.168.10.11 (c0a8:0a0b) at slots 2 (v1) and 3 (v2).
    CHECK(recommended(client) == gid(3, "0000:0000:0000:0000:0000:ffff:c0a8:0a0b", "RoCE v2",
                                     "ens1f0np0", "192.168.10.11"));

    SignalRecorder rec(client);
    // 192.168.10.11 replaced by 10.1.2.3 (0a01:0203): slots 2-3 empty, 4-5 the new address.
    set_gid(tb, 2, kZero, "IB/RoCE v1");
    set_gid(tb, 3, kZero, "RoCE v2");
    set_gid(tb, 4, "0000:0000:0000:0000:0000:ffff:0a01:0203", "IB/RoCE v1");
    set_gid(tb, 5, "0000:0000:0000:0000:0000:ffff:0a01:0203", "RoCE v2");
    dummy.address("add", "10.1.2.3/24");
    REQUIRE(rec.eventually([&] { return rec.size() >= 1; }, kWait));
    CHECK(rec.quiet(kSettle));
    CHECK(rec.summaries() ==
          std::vector<std::string>{"changed " + port + " org.rdmad1.Port GIDs,RecommendedGID"});
    CHECK(recommended(client) ==
          gid(5, "0000:0000:0000:0000:0000:ffff:0a01:0203", "RoCE v2", "ens1f0np0", "10.1.2.3"));
    // The property agrees with Describe(): a (ussss) struct.
    const auto got =
        client.get(port, "org.rdmad1.Port", "RecommendedGID")
            .get<sdbus::Struct<uint32_t, std::string, std::string, std::string, std::string>>();
    CHECK(std::get<0>(got) == 5);
    CHECK(std::get<4>(got) == "10.1.2.3");

    // The address goes: only the link-local GIDs stay, and the doctor says why.
    rec.clear();
    set_gid(tb, 4, kZero, "IB/RoCE v1");
    set_gid(tb, 5, kZero, "RoCE v2");
    dummy.address("del", "10.1.2.3/24");
    REQUIRE(rec.eventually([&] { return rec.size() >= 2; }, kWait));
    CHECK(rec.quiet(kSettle));
    INFO(rec.dump());
    // The port's own change first, then the device's findings derived from it.
    CHECK(rec.summaries() ==
          std::vector<std::string>{"changed " + port + " org.rdmad1.Port GIDs,RecommendedGID",
                                   "changed " + client.device_by_name("mlx5_0") +
                                       " org.rdmad1.Device ProblemDetails,Problems"});
    CHECK(recommended(client) == gid(0, "", "", "", ""));
    const json d = client.describe();
    bool warned = false;
    for (const auto& dev : d["Devices"])
        if (dev["Name"] == "mlx5_0")
            for (const auto& p : dev["ProblemDetails"])
                if (p["Code"] == "no-routable-gid") {
                    warned = true;
                    CHECK(p["Severity"] == "warning");
                    CHECK(p["Port"] == 1);
                    CHECK(p["Evidence"][0] == "/sys/class/infiniband/mlx5_0/ports/1/gids/1 = "
                                              "fe80:0000:0000:0000:0e42:a1ff:fe5b:30e0");
                }
    CHECK(warned);
    CHECK(daemon.stop() == 0);
}
