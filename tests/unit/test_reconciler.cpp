// SPDX-License-Identifier: MIT
//
// The stateful part of reconciliation (daemon/reconcile/reconciler.hpp) without hardware:
// which desired state is in force after good and bad reloads of /etc/rdmad and state.conf,
// and what a persisted D-Bus setting does to state.conf. Files live in a scratch directory.
#include "reconcile/reconciler.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rdmad;
namespace fs = std::filesystem;

namespace {

struct Dirs : rdmad::test::TempDir {
    const fs::path& root = path;
    Dirs() : TempDir("rdmad-reconciler") {
        fs::create_directories(root / "etc");
        fs::create_directories(root / "state");
    }
    ReconcilerOptions options() const {
        ReconcilerOptions o;
        o.config_dir = (root / "etc").string();
        o.state_dir = (root / "state").string();
        o.legacy_mlx4_conf = (root / "mlx4.conf").string();
        o.modprobe_dir = (root / "modprobe.d").string();
        return o;
    }
    std::string etc() const { return (root / "etc" / "rdmad.conf").string(); }
    std::string state() const { return (root / "state" / "state.conf").string(); }
};

void write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Two functions: mlx4_0 (ConnectX-3, 2 ports) and mlx5_0 (ConnectX-5, 1 port).
HostState host() {
    HostState inv;
    DeviceState mlx4;
    mlx4.name = "mlx4_0";
    mlx4.syspath = "/sys/devices/pci0000:00/0000:03:00.0/infiniband/mlx4_0";
    mlx4.pci_address = "0000:03:00.0";
    mlx4.kernel_driver = "mlx4_core";
    for (uint32_t n : {1u, 2u}) {
        PortState p;
        p.number = n;
        p.port_type = "ib";
        p.link_layer = "InfiniBand";
        mlx4.ports.push_back(p);
    }
    DeviceState mlx5;
    mlx5.name = "mlx5_0";
    mlx5.syspath = "/sys/devices/pci0000:00/0000:04:00.0/infiniband/mlx5_0";
    mlx5.pci_address = "0000:04:00.0";
    mlx5.kernel_driver = "mlx5_core";
    PortState p;
    p.number = 1;
    p.link_layer = "Ethernet";
    mlx5.ports.push_back(p);
    inv.devices[mlx4.syspath] = mlx4;
    inv.devices[mlx5.syspath] = mlx5;
    return inv;
}

const DeviceState& device(const HostState& inv, const std::string& name) {
    for (const auto& [_, d] : inv.devices)
        if (d.name == name)
            return d;
    FAIL("no device " << name);
    throw;
}

DeviceDesired want(const Reconciler& r, const HostState& inv, const std::string& name) {
    const auto all = r.desired(inv);
    auto it = all.find(device(inv, name).syspath);
    return it == all.end() ? DeviceDesired{} : it->second;
}

const std::string kEthEth = "[[rule]]\npci_address = \"0000:03:00.0\"\nport_type = [\"eth\", \"eth\"]\n";
const std::string kBad = "[[rule]]\ndevice = 5\n";

} // namespace

TEST_CASE("a bad /etc file keeps the last good /etc rules in force until it is fixed") {
    Dirs d;
    Reconciler r(d.options(), nullptr);
    const HostState inv = host();
    write(d.etc(), kEthEth);
    REQUIRE_FALSE(r.reload());
    CHECK(want(r, inv, "mlx4_0").port_type == std::vector<std::string>{"eth", "eth"});

    write(d.etc(), kBad);
    auto err = r.reload();
    REQUIRE(err);
    CHECK(err->to_string() == d.etc() + ":2:10: device must be a string, not an integer");
    CHECK(r.config_error() == err);
    CHECK(want(r, inv, "mlx4_0").port_type == std::vector<std::string>{"eth", "eth"});

    write(d.etc(), "[[rule]]\npci_address = \"0000:03:00.0\"\nport_type = [\"ib\", \"ib\"]\n");
    CHECK_FALSE(r.reload());
    CHECK_FALSE(r.config_error());
    CHECK(want(r, inv, "mlx4_0").port_type == std::vector<std::string>{"ib", "ib"});
}

TEST_CASE("state.conf applies even when /etc is bad from the start") {
    Dirs d;
    write(d.state(), "[[rule]]\npci_address = \"0000:04:00.0\"\npfc_no_drop = [3, 4]\n");
    write(d.etc(), kBad);
    Reconciler r(d.options(), nullptr);
    auto err = r.reload();
    REQUIRE(err);
    CHECK(err->file == d.etc());
    CHECK(want(r, host(), "mlx5_0").pfc_no_drop == std::vector<uint8_t>{3, 4});
}

TEST_CASE("a persist while /etc is bad keeps every rule state.conf had") {
    Dirs d;
    write(d.state(), "[[rule]]\npci_address = \"0000:04:00.0\"\npfc_no_drop = [3, 4]\n");
    write(d.etc(), kBad);
    Reconciler r(d.options(), nullptr);
    r.reload();
    const HostState inv = host();
    r.override_port_type(inv, device(inv, "mlx4_0"), 1, "auto", true);
    // rdmad must accept its own file: reload it and compare the desired state.
    Reconciler again(d.options(), nullptr);
    again.reload();
    CHECK(want(again, inv, "mlx5_0").pfc_no_drop == std::vector<uint8_t>{3, 4});
    CHECK(want(again, inv, "mlx4_0").port_type == std::vector<std::string>{"auto", "ib"});
}

TEST_CASE("a state.conf with an error is neither applied nor overwritten") {
    Dirs d;
    const std::string broken = "[[rule]]\npci_address = 7\n";
    write(d.state(), broken);
    Reconciler r(d.options(), nullptr);
    auto err = r.reload();
    REQUIRE(err);
    CHECK(err->to_string() == d.state() + ":2:15: pci_address must be a string, not an integer");
    const HostState inv = host();
    CHECK_THROWS_WITH(r.override_pfc(device(inv, "mlx5_0"), {3}, true),
                      d.state() + ":2:15: pci_address must be a string, not an integer; rdmad "
                                  "does not overwrite a state file it could not read: fix or "
                                  "remove it, then Reload");
    CHECK(read(d.state()) == broken);
    // Without persist the setting holds for this run.
    r.override_pfc(device(inv, "mlx5_0"), {3}, false);
    CHECK(want(r, inv, "mlx5_0").pfc_no_drop == std::vector<uint8_t>{3});
    // Removing the file clears the error and allows a persist again.
    fs::remove(d.state());
    CHECK_FALSE(r.reload());
    r.override_pfc(device(inv, "mlx5_0"), {5}, true);
    CHECK(read(d.state()).find("pfc_no_drop = [ 5 ]") != std::string::npos);
}

TEST_CASE("a symbolic link as state.conf is an error, not followed") {
    Dirs d;
    write((d.root / "elsewhere").string(), "[[rule]]\npci_address = \"0000:04:00.0\"\npfc_no_drop = [1]\n");
    fs::create_symlink(d.root / "elsewhere", d.state());
    Reconciler r(d.options(), nullptr);
    auto err = r.reload();
    REQUIRE(err);
    CHECK(err->to_string() == d.state() +
                                  ": is a symbolic link; rdmad does not follow links in its state "
                                  "directory");
    CHECK(want(r, host(), "mlx5_0").pfc_no_drop.empty());
}

TEST_CASE("two persisted settings of one device are one rule in state.conf") {
    Dirs d;
    Reconciler r(d.options(), nullptr);
    r.reload();
    const HostState inv = host();
    r.override_pfc(device(inv, "mlx4_0"), {3}, true);
    r.override_pfc(device(inv, "mlx4_0"), {4}, true);
    r.override_port_type(inv, device(inv, "mlx4_0"), 2, "eth", true);
    const std::string text = read(d.state());
    INFO(text);
    size_t rules = 0;
    for (size_t at = text.find("[[rule]]"); at != std::string::npos;
         at = text.find("[[rule]]", at + 1))
        ++rules;
    CHECK(rules == 1);
    CHECK(text == "# Written by rdmad: settings made over D-Bus with persist = true.\n"
                  "# Same format as rdmad.conf(5); it wins over /etc/rdmad.\n\n"
                  "[[rule]]\npci_address = \"0000:03:00.0\"\npfc_no_drop = [ 4 ]\n"
                  "port_type = [ \"ib\", \"eth\" ]\n");
    CHECK_FALSE(r.reload()); // and rdmad reads it back
}

TEST_CASE("a state.conf of 100 rules (over one page) loads whole") {
    Dirs d;
    std::string text;
    for (int i = 0; i < 100; ++i) {
        char pci[16];
        std::snprintf(pci, sizeof pci, "0000:%02x:00.0", 0x40 + i);
        text += std::string("[[rule]]\npci_address = \"") + pci + "\"\npfc_no_drop = [3]\n\n";
    }
    text += "[[rule]]\npci_address = \"0000:04:00.0\"\npfc_no_drop = [6]\n";
    REQUIRE(text.size() > 4096);
    write(d.state(), text);
    Reconciler r(d.options(), nullptr);
    CHECK_FALSE(r.reload());
    CHECK(want(r, host(), "mlx5_0").pfc_no_drop == std::vector<uint8_t>{6});
}

TEST_CASE("a persist keeps every key of every rule state.conf had, hand-written ones included") {
    Dirs d;
    // Match keys rdmad never writes itself (driver, netdev) and require_provider.
    write(d.state(), "[[rule]]\ndriver = \"mlx5_core\"\nrequire_provider = false\n\n"
                     "[[rule]]\ndevice = \"mlx4_*\"\nnetdev = \"ib*\"\npfc_no_drop = [5]\n");
    Reconciler r(d.options(), nullptr);
    REQUIRE_FALSE(r.reload());
    const HostState inv = host();
    r.override_pfc(device(inv, "mlx5_0"), {3}, true);
    CHECK(read(d.state()) ==
          "# Written by rdmad: settings made over D-Bus with persist = true.\n"
          "# Same format as rdmad.conf(5); it wins over /etc/rdmad.\n\n"
          "[[rule]]\ndriver = \"mlx5_core\"\nrequire_provider = false\n\n"
          "[[rule]]\ndevice = \"mlx4_*\"\nnetdev = \"ib*\"\npfc_no_drop = [ 5 ]\n\n"
          "[[rule]]\npci_address = \"0000:04:00.0\"\npfc_no_drop = [ 3 ]\n");
    CHECK_FALSE(r.reload());
}

TEST_CASE("a device without PCI address or GUID is persisted by its name, quoted and escaped") {
    Dirs d;
    Reconciler r(d.options(), nullptr);
    r.reload();
    HostState inv;
    DeviceState rxe;
    rxe.name = "rxe\"x\\y[1]*";
    rxe.syspath = "/sys/devices/virtual/infiniband/rxe";
    rxe.kernel_driver = "rdma_rxe";
    inv.devices[rxe.syspath] = rxe;
    DeviceState other = rxe;
    other.name = "rxe\"x\\y1-other"; // what the name would match as a pattern
    other.syspath = "/sys/devices/virtual/infiniband/other";
    inv.devices[other.syspath] = other;
    r.override_pfc(rxe, {3}, true);
    // The name is a literal pattern (fnmatch escapes) inside a TOML basic string.
    CHECK(read(d.state()).find("device = \"rxe\\\"x\\\\\\\\y\\\\[1]\\\\*\"") !=
          std::string::npos);
    Reconciler again(d.options(), nullptr);
    REQUIRE_FALSE(again.reload());
    const auto all = again.desired(inv);
    CHECK(all.count(rxe.syspath) == 1);
    CHECK(all.count(other.syspath) == 0);
}

TEST_CASE("a state.conf edited by hand since rdmad read it is not overwritten by a persist") {
    Dirs d;
    Reconciler r(d.options(), nullptr);
    r.reload();
    const HostState inv = host();
    r.override_pfc(device(inv, "mlx5_0"), {3}, true);
    const std::string edited = read(d.state()) + "\n[[rule]]\ndriver = \"mlx4_core\"\npfc_no_drop = [1]\n";
    write(d.state(), edited);
    CHECK_THROWS_WITH(r.override_pfc(device(inv, "mlx5_0"), {4}, true),
                      d.state() + " changed since rdmad read it; Reload (or SIGHUP) first, so "
                                  "that the change is kept");
    CHECK(read(d.state()) == edited);
    // After a reload the edit is part of what rdmad keeps.
    CHECK_FALSE(r.reload());
    r.override_pfc(device(inv, "mlx5_0"), {4}, true);
    CHECK(read(d.state()).find("driver = \"mlx4_core\"") != std::string::npos);
    // A file removed by hand counts as an edit too.
    fs::remove(d.state());
    CHECK_THROWS(r.override_pfc(device(inv, "mlx5_0"), {5}, true));
}

TEST_CASE("the latest call wins: a persisted setting replaces an earlier runtime one") {
    Dirs d;
    Reconciler r(d.options(), nullptr);
    r.reload();
    const HostState inv = host();
    r.override_pfc(device(inv, "mlx5_0"), {3}, false);
    r.override_pfc(device(inv, "mlx5_0"), {5}, true);
    CHECK(want(r, inv, "mlx5_0").pfc_no_drop == std::vector<uint8_t>{5});
    r.override_port_type(inv, device(inv, "mlx4_0"), 1, "auto", false);
    r.override_port_type(inv, device(inv, "mlx4_0"), 1, "ib", true);
    CHECK(want(r, inv, "mlx4_0").port_type == std::vector<std::string>{"ib", "ib"});
    // And a runtime call after a persisted one wins for this run.
    r.override_pfc(device(inv, "mlx5_0"), {6}, false);
    CHECK(want(r, inv, "mlx5_0").pfc_no_drop == std::vector<uint8_t>{6});
}

TEST_CASE("after a failed mlx4 port write the card's next write is not made") {
    // The plan writes port 2 before port 1 for eth/eth; port 1 alone would leave eth/ib.
    // ffff:ff:1f.7 exists on no machine: the write fails with ENOENT.
    Dirs d;
    Reconciler r(d.options(), nullptr);
    r.reload();
    Plan plan;
    for (uint32_t port : {2u, 1u})
        plan.actions.push_back({Action::Kind::mlx4_port_type, "mlx4_9", "/sys/x/mlx4_9", port,
                                "ffff:ff:1f.7", "", "eth", 0, "PortType", "ib", "eth"});
    const auto outcomes = r.execute(plan);
    REQUIRE(outcomes.size() == 2);
    CHECK_FALSE(outcomes[0].ok);
    CHECK(outcomes[0].error == ENOENT);
    CHECK_FALSE(outcomes[1].ok);
    CHECK(outcomes[1].error == ECANCELED);
    CHECK(outcomes[1].message == "not written: the write before it on this card failed");
    // Both are failures the device shows, and neither is tried again until forget().
    const auto problems = r.failure_problems()["/sys/x/mlx4_9"];
    REQUIRE(problems.size() == 2);
    std::vector<std::string> codes;
    for (const auto& p : problems)
        codes.push_back(p.code);
    std::sort(codes.begin(), codes.end());
    CHECK(codes == std::vector<std::string>{"apply-failed", "port-type-skipped"}); // ENOENT, then
    CHECK(r.execute(plan).empty());
}

TEST_CASE("persisting one port's type does not save another port's runtime request") {
    Dirs d;
    Reconciler r(d.options(), nullptr);
    r.reload();
    const HostState inv = host(); // mlx4_0 ports read ib, ib
    // Port 2 eth for this run only, then port 1 ib saved.
    r.override_port_type(inv, device(inv, "mlx4_0"), 2, "eth", false);
    r.override_port_type(inv, device(inv, "mlx4_0"), 1, "ib", true);
    CHECK(read(d.state()).find("port_type = [ \"ib\", \"ib\" ]\n") != std::string::npos);
    CHECK(want(r, inv, "mlx4_0").port_type == std::vector<std::string>{"ib", "eth"}); // this run
    Reconciler after_restart(d.options(), nullptr);
    after_restart.reload();
    CHECK(want(after_restart, inv, "mlx4_0").port_type == std::vector<std::string>{"ib", "ib"});
    // Saving port 2 later keeps port 1's saved type.
    r.override_port_type(inv, device(inv, "mlx4_0"), 2, "eth", true);
    CHECK(read(d.state()).find("port_type = [ \"ib\", \"eth\" ]\n") != std::string::npos);
}

TEST_CASE("a persisted port type whose saved pair mlx4 refuses is refused, and nothing changes") {
    Dirs d;
    Reconciler r(d.options(), nullptr);
    r.reload();
    const HostState inv = host();
    r.override_port_type(inv, device(inv, "mlx4_0"), 2, "eth", true);
    r.override_port_type(inv, device(inv, "mlx4_0"), 1, "eth", true); // saved eth, eth
    r.override_port_type(inv, device(inv, "mlx4_0"), 1, "ib", false);  // this run: ib, eth
    const std::string saved = read(d.state());
    // Port 2 ib is fine now (ib, ib) but would be eth/ib after a restart.
    CHECK_THROWS_WITH(r.override_port_type(inv, device(inv, "mlx4_0"), 2, "ib", true),
                      "port 2 must be eth while port 1 is eth (mlx4); it would be ib with the "
                      "saved types (save the other port first)");
    CHECK(read(d.state()) == saved);
    CHECK(want(r, inv, "mlx4_0").port_type == std::vector<std::string>{"ib", "eth"});
    // The pair in force now is checked too: port 1 eth with this run's port 2 ib.
    r.override_port_type(inv, device(inv, "mlx4_0"), 2, "ib", false); // ib, ib now
    CHECK_THROWS_AS(r.override_port_type(inv, device(inv, "mlx4_0"), 1, "eth", false),
                    std::invalid_argument);
}

TEST_CASE("a persisted port type keeps what /etc asks of the other ports") {
    Dirs d;
    write(d.etc(), "[[rule]]\npci_address = \"0000:03:00.0\"\nport_type = [\"ib\", \"eth\"]\n");
    Reconciler r(d.options(), nullptr);
    REQUIRE_FALSE(r.reload());
    const HostState inv = host();
    r.override_port_type(inv, device(inv, "mlx4_0"), 1, "auto", true);
    Reconciler after_restart(d.options(), nullptr);
    after_restart.reload();
    CHECK(want(after_restart, inv, "mlx4_0").port_type ==
          std::vector<std::string>{"auto", "eth"});
}
