// SPDX-License-Identifier: MIT
//
// Unit tests for the reconciler's pure part (daemon/reconcile/plan.hpp): which writes bring an
// adapter to the desired port type and PFC no-drop priorities, in which order, and which
// problems are reported instead of a write. Expected values come from DOMAIN.md §1 and §2, the
// kernel (drivers/net/ethernet/mellanox/mlx4/main.c, en_main.c) and rdma-core's
// redhat/rdma.mlx4-setup.sh, not from what the code happens to print.
#include "reconcile/plan.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <utility>

using namespace rdmad;

namespace {

const std::string mlx4_path = "/sys/devices/pci0000:00/0000:00:02.0/0000:0b:00.0/infiniband/mlx4_0";
const std::string mlx5_path = "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/mlx5_0";

// A ConnectX-3 VPI (mlx4_core): one RDMA device for both ports, port type in `mlx4_port<n>`
// (DOMAIN.md §1.3), one mlx4_en netdev per Ethernet port (§3.4).
DeviceState mlx4_device(const std::vector<std::string>& port_types,
                        const std::string& syspath = mlx4_path) {
    DeviceState d;
    d.name = "mlx4_0";
    d.syspath = syspath;
    d.pci_address = "0000:0b:00.0";
    d.kernel_driver = "mlx4_core";
    for (size_t i = 0; i < port_types.size(); ++i) {
        PortState p;
        p.number = static_cast<uint32_t>(i + 1);
        p.port_type = port_types[i];
        const bool eth = port_types[i] == "eth" || port_types[i] == "auto (eth)";
        p.link_layer = eth ? "Ethernet" : "InfiniBand";
        p.netdev = eth ? (i == 0 ? "ens2" : "ens2d1") : "";
        d.ports.push_back(p);
    }
    return d;
}

// A ConnectX-4+ function (mlx5_core): one port, no port-type file; the link layer is all the
// kernel tells (DOMAIN.md §1.4).
DeviceState mlx5_device(const std::string& link_layer, const std::string& netdev = "ens1f0np0") {
    DeviceState d;
    d.name = "mlx5_0";
    d.syspath = mlx5_path;
    d.pci_address = "0000:3b:00.0";
    d.kernel_driver = "mlx5_core";
    PortState p;
    p.number = 1;
    p.link_layer = link_layer;
    p.netdev = netdev;
    d.ports.push_back(p);
    return d;
}

HostState inventory_of(std::vector<DeviceState> devices) {
    HostState inv;
    for (auto& d : devices)
        inv.devices[d.syspath] = std::move(d);
    return inv;
}

DeviceDesired port_types(std::vector<std::string> types) {
    DeviceDesired want;
    want.port_type = std::move(types);
    return want;
}

DeviceDesired pfc(std::vector<uint8_t> priorities) {
    DeviceDesired want;
    want.pfc_no_drop = std::move(priorities);
    return want;
}

// What DCB IEEE_GET read: pfc_en as priorities (bit n = priority n, DOMAIN.md §2.2).
PfcActual pfc_read(std::vector<uint8_t> priorities) {
    PfcActual a;
    a.status = PfcActual::Status::ok;
    a.priorities = std::move(priorities);
    return a;
}

std::vector<Problem> problems_of(const Plan& plan, const std::string& syspath) {
    auto it = plan.problems.find(syspath);
    return it == plan.problems.end() ? std::vector<Problem>{} : it->second;
}

std::vector<std::string> codes_of(const Plan& plan, const std::string& syspath) {
    std::vector<std::string> codes;
    for (const auto& p : problems_of(plan, syspath))
        codes.push_back(p.code);
    return codes;
}

std::vector<Action> actions_of_kind(const Plan& plan, Action::Kind kind) {
    std::vector<Action> out;
    std::copy_if(plan.actions.begin(), plan.actions.end(), std::back_inserter(out),
                 [&](const Action& a) { return a.kind == kind; });
    return out;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

// ---- mlx4 port type ----

TEST_CASE("mlx4 eth eth from ib ib writes port 2 before port 1, as mlx4-setup.sh does") {
    // rdma-core redhat/rdma.mlx4-setup.sh: for port1 = eth it writes mlx4_port2 first, then
    // mlx4_port1, so the card never passes through port1 eth / port2 ib (refused by older
    // kernels' mlx4_check_port_params, DOMAIN.md §1.3).
    const auto plan = make_plan(inventory_of({mlx4_device({"ib", "ib"})}),
                                {{mlx4_path, port_types({"eth", "eth"})}}, {}, {});
    REQUIRE(plan.actions.size() == 2);
    for (const auto& a : plan.actions) {
        CHECK(a.kind == Action::Kind::mlx4_port_type);
        CHECK(a.device == "mlx4_0");
        CHECK(a.syspath == mlx4_path);
        CHECK(a.pci_address == "0000:0b:00.0");
        CHECK(a.value == "eth");
        CHECK(a.setting == "PortType");
        CHECK(a.from == "ib");
        CHECK(a.to == "eth");
    }
    CHECK(plan.actions[0].port == 2);
    CHECK(plan.actions[1].port == 1);
    CHECK(problems_of(plan, mlx4_path).empty());
    const auto& ports = plan.ports.at(mlx4_path);
    CHECK(ports.at(1).desired_port_type == "eth");
    CHECK(ports.at(2).desired_port_type == "eth");
    CHECK_FALSE(ports.at(1).in_sync);
    CHECK_FALSE(ports.at(2).in_sync);
}

TEST_CASE("mlx4 ib ib from eth eth writes port 1 first, so no step is port1 eth / port2 ib") {
    const auto plan = make_plan(inventory_of({mlx4_device({"eth", "eth"})}),
                                {{mlx4_path, port_types({"ib", "ib"})}}, {}, {});
    REQUIRE(plan.actions.size() == 2);
    CHECK(plan.actions[0].port == 1);
    CHECK(plan.actions[1].port == 2);
    for (const auto& a : plan.actions) {
        CHECK(a.value == "ib");
        CHECK(a.from == "eth");
        CHECK(a.to == "ib");
    }
}

TEST_CASE("no order of mlx4 port type writes passes through port1 eth / port2 ib") {
    // Every valid eth/ib target from every eth/ib start: apply the writes in plan order and
    // check each intermediate pair (kernel main.c mlx4_check_port_params, older kernels, and
    // mlx4-setup.sh both refuse port 1 Ethernet with port 2 InfiniBand).
    const std::vector<std::string> types{"ib", "eth"};
    for (const auto& from1 : types)
        for (const auto& from2 : types)
            for (const auto& to1 : types)
                for (const auto& to2 : types) {
                    if (to1 == "eth" && to2 == "ib")
                        continue;
                    CAPTURE(from1, from2, to1, to2);
                    const auto plan = make_plan(inventory_of({mlx4_device({from1, from2})}),
                                                {{mlx4_path, port_types({to1, to2})}}, {}, {});
                    std::vector<std::string> now{from1, from2};
                    for (const auto& a : plan.actions) {
                        REQUIRE(a.kind == Action::Kind::mlx4_port_type);
                        now[a.port - 1] = a.value;
                        CHECK_FALSE((now[0] == "eth" && now[1] == "ib"));
                    }
                    CHECK(now == std::vector<std::string>{to1, to2});
                }
}

TEST_CASE("eth ib is refused on mlx4: invalid_mlx4_port names port 2") {
    CHECK(invalid_mlx4_port({"eth", "ib"}) == 2);
    CHECK(invalid_mlx4_port({"ib", "eth"}) == 0);
    CHECK(invalid_mlx4_port({"eth", "eth"}) == 0);
    CHECK(invalid_mlx4_port({"ib", "ib"}) == 0);
    CHECK(invalid_mlx4_port({"eth"}) == 0);
    CHECK(invalid_mlx4_port({}) == 0);
}

TEST_CASE("eth ib asked of a dual-port mlx4 gives a port-type-invalid error and no write") {
    // mlx4-setup.sh: "In order for port1 to be eth, port2 to must also be eth", then returns
    // without writing anything.
    const auto plan = make_plan(inventory_of({mlx4_device({"ib", "ib"})}),
                                {{mlx4_path, port_types({"eth", "ib"})}}, {}, {});
    CHECK(plan.actions.empty());
    const auto problems = problems_of(plan, mlx4_path);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].code == "port-type-invalid");
    CHECK(problems[0].severity == "error");
}

TEST_CASE("a single-port mlx4 gets one write for port 1") {
    // mlx4-setup.sh: single-port card, `echo "$port1" > $device/mlx4_port1`.
    const auto plan =
        make_plan(inventory_of({mlx4_device({"ib"})}), {{mlx4_path, port_types({"eth"})}}, {}, {});
    REQUIRE(plan.actions.size() == 1);
    CHECK(plan.actions[0].kind == Action::Kind::mlx4_port_type);
    CHECK(plan.actions[0].port == 1);
    CHECK(plan.actions[0].value == "eth");
    CHECK(plan.actions[0].from == "ib");
    CHECK(plan.actions[0].to == "eth");
    CHECK(problems_of(plan, mlx4_path).empty());
}

TEST_CASE("a single-port mlx4 already at the asked type gets no write and is in sync") {
    const auto plan = make_plan(inventory_of({mlx4_device({"auto (eth)"})}),
                                {{mlx4_path, port_types({"eth"})}}, {}, {});
    CHECK(plan.actions.empty());
    CHECK(plan.ports.at(mlx4_path).at(1).desired_port_type == "eth");
    CHECK(plan.ports.at(mlx4_path).at(1).in_sync);
}

TEST_CASE("a dual-port mlx4 with only port 1 asked eth while port 2 is ib is refused, not "
          "written") {
    // mlx4-setup.sh skips a line when $device/mlx4_port2 exists but port2 is empty. Writing
    // only port 1 = eth here would put the card at port1 eth / port2 ib.
    const auto plan = make_plan(inventory_of({mlx4_device({"ib", "ib"})}),
                                {{mlx4_path, port_types({"eth"})}}, {}, {});
    CHECK(plan.actions.empty());
    const auto problems = problems_of(plan, mlx4_path);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].code == "port-type-invalid");
    CHECK(contains(problems[0].text, "port 2 must be eth while port 1 is eth"));
    // The refused port shows what is asked and that it is not so.
    CHECK(plan.ports.at(mlx4_path).at(1).desired_port_type == "eth");
    CHECK_FALSE(plan.ports.at(mlx4_path).at(1).in_sync);
}

TEST_CASE("a dual-port mlx4 with only port 1 asked is written when the pair stays valid") {
    // port 2 already eth: eth/eth after the write. port 1 ib on an eth/eth card: ib/eth.
    auto plan = make_plan(inventory_of({mlx4_device({"ib", "eth"})}),
                          {{mlx4_path, port_types({"eth"})}}, {}, {});
    REQUIRE(plan.actions.size() == 1);
    CHECK(plan.actions[0].port == 1);
    CHECK(plan.actions[0].value == "eth");
    plan = make_plan(inventory_of({mlx4_device({"eth", "eth"})}), {{mlx4_path, port_types({"ib"})}},
                     {}, {});
    REQUIRE(plan.actions.size() == 1);
    CHECK(plan.actions[0].value == "ib");
}

TEST_CASE("eth with auto on port 2 is refused, as mlx4-setup.sh refuses any port 2 but eth") {
    // An auto port 2 may sense InfiniBand: the pair eth/ib again.
    CHECK(invalid_mlx4_port({"eth", "auto"}) == 2);
    const auto plan = make_plan(inventory_of({mlx4_device({"ib", "ib"})}),
                                {{mlx4_path, port_types({"eth", "auto"})}}, {}, {});
    CHECK(plan.actions.empty());
    REQUIRE(problems_of(plan, mlx4_path).size() == 1);
    CHECK(problems_of(plan, mlx4_path)[0].code == "port-type-invalid");
}

// ---- reading back mlx4_port<n> ----

TEST_CASE("auto (eth) satisfies auto and eth, not ib") {
    // kernel main.c show_port_type: "auto (eth)" is an auto-sensing port now in Ethernet;
    // mlx4-setup.sh accepts "auto (eth)" as success for "eth".
    CHECK(port_type_satisfied("auto", "auto (eth)"));
    CHECK(port_type_satisfied("eth", "auto (eth)"));
    CHECK_FALSE(port_type_satisfied("ib", "auto (eth)"));
}

TEST_CASE("auto (ib) satisfies ib and auto, not eth") {
    CHECK(port_type_satisfied("ib", "auto (ib)"));
    CHECK(port_type_satisfied("auto", "auto (ib)"));
    CHECK_FALSE(port_type_satisfied("eth", "auto (ib)"));
}

TEST_CASE("a fixed eth or ib port does not satisfy auto") {
    // kernel main.c show_port_type prints "auto (...)" exactly when possible_type is AUTO; a
    // plain "eth" is a port whose sensing is off, so "auto" still has to be written.
    CHECK_FALSE(port_type_satisfied("auto", "eth"));
    CHECK_FALSE(port_type_satisfied("auto", "ib"));
}

TEST_CASE("a fixed port satisfies its own type only") {
    CHECK(port_type_satisfied("eth", "eth"));
    CHECK(port_type_satisfied("ib", "ib"));
    CHECK_FALSE(port_type_satisfied("eth", "ib"));
    CHECK_FALSE(port_type_satisfied("ib", "eth"));
}

TEST_CASE("auto asked of a fixed eth mlx4 port is written, and not of an auto (eth) port") {
    auto plan = make_plan(inventory_of({mlx4_device({"eth"})}), {{mlx4_path, port_types({"auto"})}},
                          {}, {});
    REQUIRE(plan.actions.size() == 1);
    CHECK(plan.actions[0].value == "auto");
    CHECK(plan.actions[0].from == "eth");
    CHECK(plan.actions[0].to == "auto");

    plan = make_plan(inventory_of({mlx4_device({"auto (eth)"})}),
                     {{mlx4_path, port_types({"auto"})}}, {}, {});
    CHECK(plan.actions.empty());
    CHECK(plan.ports.at(mlx4_path).at(1).in_sync);
}

// ---- mlx5: port type is firmware ----

TEST_CASE("eth asked of an InfiniBand mlx5 port names mstconfig LINK_TYPE_P1=2, writes nothing") {
    // DOMAIN.md §1.4: no mlx5_portN file; `mlxconfig/mstconfig -d <dev> set LINK_TYPE_P1=<n>`,
    // IB(1), ETH(2), VPI(3), then a reboot (NVIDIA MFT docs).
    const auto plan = make_plan(inventory_of({mlx5_device("InfiniBand", "")}),
                                {{mlx5_path, port_types({"eth"})}}, {}, {});
    CHECK(plan.actions.empty());
    const auto problems = problems_of(plan, mlx5_path);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].code == "port-type-firmware");
    CHECK(contains(problems[0].text, "mstconfig -d 0000:3b:00.0 set LINK_TYPE_P1=2"));
    CHECK(contains(problems[0].text, "reboot"));
    CHECK(problems[0].port == 1);
    CHECK(plan.ports.at(mlx5_path).at(1).desired_port_type == "eth");
    CHECK_FALSE(plan.ports.at(mlx5_path).at(1).in_sync);
}

TEST_CASE("ib asked of an Ethernet mlx5 port names mstconfig LINK_TYPE_P1=1") {
    const auto plan = make_plan(inventory_of({mlx5_device("Ethernet")}),
                                {{mlx5_path, port_types({"ib"})}}, {}, {});
    CHECK(plan.actions.empty());
    const auto problems = problems_of(plan, mlx5_path);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].code == "port-type-firmware");
    CHECK(contains(problems[0].text, "mstconfig -d 0000:3b:00.0 set LINK_TYPE_P1=1"));
}

TEST_CASE("an mlx5 port whose link layer is the asked type has no problem and is in sync") {
    auto plan = make_plan(inventory_of({mlx5_device("Ethernet")}),
                          {{mlx5_path, port_types({"eth"})}}, {}, {});
    CHECK(plan.actions.empty());
    CHECK(problems_of(plan, mlx5_path).empty());
    CHECK(plan.ports.at(mlx5_path).at(1).desired_port_type == "eth");
    CHECK(plan.ports.at(mlx5_path).at(1).in_sync);

    plan = make_plan(inventory_of({mlx5_device("InfiniBand", "")}),
                     {{mlx5_path, port_types({"ib"})}}, {}, {});
    CHECK(plan.actions.empty());
    CHECK(problems_of(plan, mlx5_path).empty());
    CHECK(plan.ports.at(mlx5_path).at(1).in_sync);
}

// ---- PFC no-drop priorities over DCB netlink ----

TEST_CASE("PFC 3,4 on a netdev already at mask 0x18 needs no action and is in sync") {
    // 0x18 = bits 3 and 4 = priorities 3 and 4 (DOMAIN.md §2.2, struct ieee_pfc.pfc_en).
    const auto plan = make_plan(inventory_of({mlx5_device("Ethernet")}), {{mlx5_path, pfc({3, 4})}},
                                {{"ens1f0np0", pfc_read({3, 4})}}, {});
    CHECK(plan.actions.empty());
    CHECK(problems_of(plan, mlx5_path).empty());
    const auto& pp = plan.ports.at(mlx5_path).at(1);
    CHECK(pp.in_sync);
    CHECK(pp.desired_pfc == std::vector<uint8_t>{3, 4});
    CHECK(pp.pfc_now == std::vector<uint8_t>{3, 4});
}

TEST_CASE("PFC 3,4 on a netdev at mask 0x00 gives one pfc action with mask 0x18") {
    const auto plan = make_plan(inventory_of({mlx5_device("Ethernet")}), {{mlx5_path, pfc({3, 4})}},
                                {{"ens1f0np0", pfc_read({})}}, {});
    REQUIRE(plan.actions.size() == 1);
    const Action& a = plan.actions[0];
    CHECK(a.kind == Action::Kind::pfc);
    CHECK(a.netdev == "ens1f0np0");
    CHECK(a.mask == 0x18);
    CHECK(a.device == "mlx5_0");
    CHECK(a.syspath == mlx5_path);
    CHECK(a.port == 1);
    CHECK(a.setting == "PFCNoDrop");
    CHECK(a.from == "[]");
    CHECK(a.to == "[3,4]");
    CHECK(problems_of(plan, mlx5_path).empty());
    CHECK_FALSE(plan.ports.at(mlx5_path).at(1).in_sync);
}

TEST_CASE("PFC 3 on a netdev at priority 4 goes from [4] to [3] with mask 0x08") {
    const auto plan = make_plan(inventory_of({mlx5_device("Ethernet")}), {{mlx5_path, pfc({3})}},
                                {{"ens1f0np0", pfc_read({4})}}, {});
    REQUIRE(plan.actions.size() == 1);
    CHECK(plan.actions[0].mask == 0x08);
    CHECK(plan.actions[0].from == "[4]");
    CHECK(plan.actions[0].to == "[3]");
}

TEST_CASE("a netdev without DCB (EOPNOTSUPP) gives a no-dcb problem and no action") {
    // DOMAIN.md §2.3: a driver without dcbnl_ops answers EOPNOTSUPP.
    PfcActual none;
    none.status = PfcActual::Status::not_supported;
    const auto plan = make_plan(inventory_of({mlx5_device("Ethernet")}), {{mlx5_path, pfc({3})}},
                                {{"ens1f0np0", none}}, {});
    CHECK(plan.actions.empty());
    CHECK(codes_of(plan, mlx5_path) == std::vector<std::string>{"no-dcb"});
    CHECK(problems_of(plan, mlx5_path)[0].port == 1);
    CHECK(contains(problems_of(plan, mlx5_path)[0].text, "ens1f0np0"));
    CHECK_FALSE(plan.ports.at(mlx5_path).at(1).in_sync);
}

TEST_CASE("lldpad owning DCB gives the pfc-owned-elsewhere problem and no action") {
    PfcActual now = pfc_read({});
    now.lldpad = true;
    const auto plan = make_plan(inventory_of({mlx5_device("Ethernet")}), {{mlx5_path, pfc({3})}},
                                {{"ens1f0np0", now}}, {});
    CHECK(plan.actions.empty());
    CHECK(codes_of(plan, mlx5_path) == std::vector<std::string>{"pfc-owned-elsewhere"});
    CHECK(contains(problems_of(plan, mlx5_path)[0].text, "lldpad"));
    CHECK_FALSE(plan.ports.at(mlx5_path).at(1).in_sync);
}

TEST_CASE("firmware DCBX in willing mode gives the pfc-owned-elsewhere problem and no action") {
    // DOMAIN.md §2.3 (mlx5): in willing mode the switch's negotiation overrides host settings.
    PfcActual now = pfc_read({});
    now.willing = true;
    const auto plan = make_plan(inventory_of({mlx5_device("Ethernet")}), {{mlx5_path, pfc({3})}},
                                {{"ens1f0np0", now}}, {});
    CHECK(plan.actions.empty());
    CHECK(codes_of(plan, mlx5_path) == std::vector<std::string>{"pfc-owned-elsewhere"});
    CHECK(contains(problems_of(plan, mlx5_path)[0].text, "willing"));
}

TEST_CASE("a port without a netdev gives a pfc-no-netdev problem and no action") {
    const auto plan =
        make_plan(inventory_of({mlx5_device("InfiniBand", "")}), {{mlx5_path, pfc({3})}}, {}, {});
    CHECK(plan.actions.empty());
    CHECK(codes_of(plan, mlx5_path) == std::vector<std::string>{"pfc-no-netdev"});
    CHECK(problems_of(plan, mlx5_path)[0].port == 1); // the port it is about, not 0 (device-wide)
    CHECK_FALSE(plan.ports.at(mlx5_path).at(1).in_sync);
}

TEST_CASE("a netdev whose PFC could not be read gives pfc-unreadable and no action") {
    PfcActual failed;
    failed.status = PfcActual::Status::failed;
    failed.message = "Operation not permitted";
    auto plan = make_plan(inventory_of({mlx5_device("Ethernet")}), {{mlx5_path, pfc({3})}},
                          {{"ens1f0np0", failed}}, {});
    CHECK(plan.actions.empty());
    CHECK(codes_of(plan, mlx5_path) == std::vector<std::string>{"pfc-unreadable"});
    CHECK(contains(problems_of(plan, mlx5_path)[0].text, "Operation not permitted"));
    CHECK(problems_of(plan, mlx5_path)[0].port == 1);
    // What to do: ask the kernel the same with iproute2's dcb(8) (a new user found none).
    CHECK(problems_of(plan, mlx5_path)[0].remedy.str().find("run dcb pfc show dev ens1f0np0") ==
          0);

    plan = make_plan(inventory_of({mlx5_device("Ethernet")}), {{mlx5_path, pfc({3})}}, {}, {});
    CHECK(plan.actions.empty()); // never read: not assumed to be 0x00
    CHECK(codes_of(plan, mlx5_path) == std::vector<std::string>{"pfc-unreadable"});
}

// ---- mlx4_en pfctx/pfcrx module options ----

TEST_CASE("PFC on an mlx4 device gives one mlx4_modprobe action with bit n for priority n") {
    // kernel en_main.c / DOMAIN.md §2.1: pfctx/pfcrx bit n is 802.1p priority n.
    const std::vector<std::pair<std::vector<uint8_t>, uint8_t>> cases{
        {{3}, 0x08}, {{4}, 0x10}, {{3, 4}, 0x18}};
    for (const auto& [priorities, mask] : cases) {
        CAPTURE(static_cast<int>(mask));
        // The netdevs already run the asked PFC, so only the module option is planned.
        const auto plan =
            make_plan(inventory_of({mlx4_device({"eth", "eth"})}), {{mlx4_path, pfc(priorities)}},
                      {{"ens2", pfc_read(priorities)}, {"ens2d1", pfc_read(priorities)}}, {});
        REQUIRE(plan.actions.size() == 1);
        const Action& a = plan.actions[0];
        CHECK(a.kind == Action::Kind::mlx4_modprobe);
        CHECK(a.mask == mask);
        CHECK(a.setting == "mlx4_en pfctx/pfcrx");
        CHECK(a.from == ""); // no rdmad modprobe.d file yet
    }
}

TEST_CASE("the mlx4_modprobe action's from and to are the masks in hex") {
    Mlx4ModuleState mlx4;
    mlx4.file_pfctx = 0x08;
    const auto plan =
        make_plan(inventory_of({mlx4_device({"eth", "eth"})}), {{mlx4_path, pfc({3, 4})}},
                  {{"ens2", pfc_read({3, 4})}, {"ens2d1", pfc_read({3, 4})}}, mlx4);
    const auto modprobe = actions_of_kind(plan, Action::Kind::mlx4_modprobe);
    REQUIRE(modprobe.size() == 1);
    CHECK(modprobe[0].from == "0x08");
    CHECK(modprobe[0].to == "0x18");
}

TEST_CASE("no mlx4_modprobe action when the file already has the mask") {
    Mlx4ModuleState mlx4;
    mlx4.file_pfctx = 0x18;
    mlx4.loaded_pfctx = 0x18;
    const auto plan =
        make_plan(inventory_of({mlx4_device({"eth", "eth"})}), {{mlx4_path, pfc({3, 4})}},
                  {{"ens2", pfc_read({3, 4})}, {"ens2d1", pfc_read({3, 4})}}, mlx4);
    CHECK(plan.actions.empty());
    CHECK(problems_of(plan, mlx4_path).empty());
}

TEST_CASE("mlx4_en loaded with another pfctx gives a pending-reload warning") {
    // DOMAIN.md §2.1: pfctx/pfcrx are read at mlx4_en load (mode 0444); a new value in the
    // file takes effect only when the module is reloaded.
    Mlx4ModuleState mlx4;
    mlx4.file_pfctx = 0x18;
    mlx4.loaded_pfctx = 0x00;
    const auto plan =
        make_plan(inventory_of({mlx4_device({"eth", "eth"})}), {{mlx4_path, pfc({3, 4})}},
                  {{"ens2", pfc_read({3, 4})}, {"ens2d1", pfc_read({3, 4})}}, mlx4);
    CHECK(actions_of_kind(plan, Action::Kind::mlx4_modprobe).empty());
    const auto problems = problems_of(plan, mlx4_path);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].code == "pending-reload");
    CHECK(problems[0].severity == "warning");
}

TEST_CASE("PFC on an mlx5 device plans no mlx4 module option") {
    const auto plan = make_plan(inventory_of({mlx5_device("Ethernet")}), {{mlx5_path, pfc({3})}},
                                {{"ens1f0np0", pfc_read({})}}, {});
    CHECK(actions_of_kind(plan, Action::Kind::mlx4_modprobe).empty());
}

// ---- devices nobody asked about ----

TEST_CASE("a device without a desired entry is left alone") {
    Mlx4ModuleState mlx4;
    mlx4.loaded_pfctx = 0x00; // would be a pending reload, were the device asked anything
    const auto plan = make_plan(inventory_of({mlx4_device({"ib", "ib"}), mlx5_device("Ethernet")}),
                                {{mlx5_path, port_types({"eth"})}}, {}, mlx4);
    CHECK(plan.actions.empty());
    CHECK(problems_of(plan, mlx4_path).empty());
    CHECK(plan.ports.count(mlx4_path) == 0);
}

TEST_CASE("a pending reload is reported only on the mlx4 devices that were asked something") {
    const std::string other = "/sys/devices/pci0000:00/0000:00:03.0/0000:0c:00.0/infiniband/mlx4_1";
    Mlx4ModuleState mlx4;
    mlx4.file_pfctx = 0x08;
    mlx4.loaded_pfctx = 0x00;
    const auto plan = make_plan(
        inventory_of({mlx4_device({"eth", "eth"}), mlx4_device({"ib", "ib"}, other)}),
        {{mlx4_path, pfc({3})}}, {{"ens2", pfc_read({3})}, {"ens2d1", pfc_read({3})}}, mlx4);
    CHECK(codes_of(plan, mlx4_path) == std::vector<std::string>{"pending-reload"});
    CHECK(problems_of(plan, other).empty());
}

TEST_CASE("the plan's desired member is what the plan was made for") {
    const std::map<std::string, DeviceDesired> want{{mlx5_path, pfc({3})},
                                                    {mlx4_path, port_types({"eth", "eth"})}};
    const auto plan = make_plan(inventory_of({mlx4_device({"ib", "ib"}), mlx5_device("Ethernet")}),
                                want, {{"ens1f0np0", pfc_read({3})}}, {});
    CHECK(plan.desired == want);
}

TEST_CASE("the mstconfig remedy names the card's port: function 1 of a ConnectX-4+ is P2") {
    // DOMAIN.md §1.4: LINK_TYPE_P1/P2 are the card's ports; each PCI function drives one.
    DeviceState d = mlx5_device("InfiniBand");
    d.pci_address = "0000:3b:00.1";
    const auto plan = make_plan(inventory_of({d}), {{mlx5_path, port_types({"eth"})}}, {}, {});
    REQUIRE(problems_of(plan, mlx5_path).size() == 1);
    CHECK(contains(problems_of(plan, mlx5_path)[0].text,
                   "mstconfig -d 0000:3b:00.1 set LINK_TYPE_P2=2"));
}

TEST_CASE("an SR-IOV VF is pointed at its physical function, not given an mstconfig command") {
    DeviceState d = mlx5_device("InfiniBand");
    d.pci_address = "0000:3b:00.2";
    d.physical_function = "0000:3b:00.0";
    const auto plan = make_plan(inventory_of({d}), {{mlx5_path, port_types({"eth"})}}, {}, {});
    const auto problems = problems_of(plan, mlx5_path);
    REQUIRE(problems.size() == 1);
    const auto& p = problems[0];
    CHECK(p.code == "port-type-firmware");
    CHECK(contains(p.text, "physical function 0000:3b:00.0"));
    CHECK_FALSE(contains(p.text, "LINK_TYPE"));
}

TEST_CASE("a port type asked of a non-Mellanox device is port-type-unsupported, no mstconfig") {
    DeviceState d = mlx5_device("Ethernet");
    d.name = "bnxt_re0";
    d.kernel_driver = "bnxt_en";
    const auto plan = make_plan(inventory_of({d}), {{mlx5_path, port_types({"ib"})}}, {}, {});
    REQUIRE(problems_of(plan, mlx5_path).size() == 1);
    CHECK(problems_of(plan, mlx5_path)[0].code == "port-type-unsupported");
    CHECK(problems_of(plan, mlx5_path)[0].text ==
          "port 1 is Ethernet but ib is asked: bnxt_en has no port type switch");
    CHECK(plan.actions.empty());
}

TEST_CASE("two mlx4 cards asking different PFC masks: one module option, the other is told") {
    // mlx4_en's pfctx/pfcrx are module parameters: one value for every card of the host.
    DeviceState a = mlx4_device({"eth"});
    DeviceState b = mlx4_device({"eth"});
    b.name = "mlx4_1";
    b.syspath = "/sys/devices/pci0000:00/0000:00:04.0/0000:08:00.0/infiniband/mlx4_1";
    b.pci_address = "0000:08:00.0";
    b.ports[0].netdev = "eth9";
    const auto plan = make_plan(inventory_of({a, b}),
                                {{a.syspath, pfc({3})}, {b.syspath, pfc({4})}}, {}, {});
    const Action* modprobe = nullptr;
    for (const auto& act : plan.actions)
        if (act.kind == Action::Kind::mlx4_modprobe)
            modprobe = &act;
    REQUIRE(modprobe);
    const bool a_wins = modprobe->mask == 0x08;
    CHECK((modprobe->mask == 0x08 || modprobe->mask == 0x10));
    const std::string loser = a_wins ? b.syspath : a.syspath;
    bool told = false;
    for (const auto& p : problems_of(plan, loser))
        told = told || p.code == "pfc-module-conflict";
    CHECK(told);
}

TEST_CASE("rdmad's modprobe.d file is removed when mlx4 is present and nothing asks for PFC") {
    // A request without persist lasts until rdmad stops (rdmactl(1)); its boot-time file must
    // not outlive it.
    Mlx4ModuleState mlx4;
    mlx4.file_pfctx = 0x08;
    auto plan = make_plan(inventory_of({mlx4_device({"eth", "eth"})}), {}, {}, mlx4);
    const auto removes = actions_of_kind(plan, Action::Kind::mlx4_modprobe_remove);
    REQUIRE(removes.size() == 1);
    CHECK(removes[0].from == "0x08");
    CHECK(removes[0].to == "(removed)");
    // Without an mlx4 device (not loaded yet, card away) the file stays for the next load.
    plan = make_plan(inventory_of({mlx5_device("Ethernet")}), {}, {}, mlx4);
    CHECK(actions_of_kind(plan, Action::Kind::mlx4_modprobe_remove).empty());
    // No file, nothing to remove.
    plan = make_plan(inventory_of({mlx4_device({"eth", "eth"})}), {}, {}, {});
    CHECK(plan.actions.empty());
    // A rule that may still ask it (or a config error) keeps it.
    mlx4.keep_file = true;
    plan = make_plan(inventory_of({mlx4_device({"eth", "eth"})}), {}, {}, mlx4);
    CHECK(actions_of_kind(plan, Action::Kind::mlx4_modprobe_remove).empty());
}

// ---- expectations (min_rate_gbps, min_active_ports) ----

TEST_CASE("expectations: an ACTIVE port below min_rate_gbps and too few ACTIVE ports warn, with "
          "the files read") {
    DeviceState d = mlx5_device("Ethernet");
    d.ports[0].state = "ACTIVE";
    d.ports[0].rate = "25 Gb/sec (1X EDR)";
    d.ports[0].rate_gbps = 25;
    PortState second = d.ports[0];
    second.number = 2;
    second.state = "DOWN";
    second.netdev = "ens1f1np1";
    d.ports.push_back(second);
    DeviceDesired want;
    want.min_rate_gbps = 100;
    want.min_active_ports = 2;
    const auto plan = make_plan(inventory_of({d}), {{mlx5_path, want}}, {}, {});
    const auto problems = problems_of(plan, mlx5_path);
    REQUIRE(problems.size() == 2);
    CHECK(problems[0].code == "port-below-min-rate");
    CHECK(problems[0].severity == "warning");
    CHECK(problems[0].port == 1);
    CHECK(
        problems[0].evidence ==
        std::vector<std::string>{"/sys/class/infiniband/mlx5_0/ports/1/rate = 25 Gb/sec (1X EDR)"});
    CHECK(contains(problems[0].text, "25 Gb/s, below the 100 Gb/s"));
    CHECK(contains(problems[0].remedy, "ethtool ens1f0np0"));
    CHECK(problems[1].code == "too-few-active-ports");
    CHECK(contains(problems[1].text, "1 of 2 ports ACTIVE"));
    CHECK(problems[1].evidence ==
          std::vector<std::string>{"/sys/class/infiniband/mlx5_0/ports/1/state = ACTIVE",
                                   "/sys/class/infiniband/mlx5_0/ports/2/state = DOWN"});
    // Expectations are never acted on.
    CHECK(plan.actions.empty());
}

TEST_CASE("expectations: met, or about a port that is not ACTIVE or whose rate is unknown") {
    DeviceState d = mlx5_device("InfiniBand", "");
    d.ports[0].state = "ACTIVE";
    d.ports[0].rate_gbps = 100; // 4X EDR: exactly the floor
    DeviceDesired want;
    want.min_rate_gbps = 100;
    want.min_active_ports = 1;
    CHECK(
        problems_of(make_plan(inventory_of({d}), {{mlx5_path, want}}, {}, {}), mlx5_path).empty());
    d.ports[0].rate_gbps = -1; // rate unreadable: port-rate-unknown tells it, not a guess
    CHECK(
        problems_of(make_plan(inventory_of({d}), {{mlx5_path, want}}, {}, {}), mlx5_path).empty());
    d.ports[0].state = "DOWN";
    d.ports[0].rate_gbps = 10; // a port that is not ACTIVE: only the count speaks
    CHECK(codes_of(make_plan(inventory_of({d}), {{mlx5_path, want}}, {}, {}), mlx5_path) ==
          std::vector<std::string>{"too-few-active-ports"});
}
