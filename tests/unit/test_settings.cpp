// SPDX-License-Identifier: MIT
//
// The settings of issue #25 on the settings contract (reconcile/settings/): each setting's keys
// (good and bad values, file:line:column), what a profile expands to and where each value came
// from, the state file round trip, and each setting's compare and plan from Inventory values
// only (no sysfs, no netlink here).
#include "config/config_file.hpp"
#include "config/config_writer.hpp"
#include "config/desired.hpp"
#include "reconcile/plan.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace rdmad;

namespace {

std::string error_of(const std::string& text) {
    auto parsed = parse_config_text(text, "f.conf");
    auto* err = std::get_if<ConfigError>(&parsed);
    return err ? err->to_string() : "(no error)";
}

Rule rule_of(const std::string& text) {
    auto parsed = parse_config_text(text, "f.conf");
    REQUIRE(std::holds_alternative<ConfigFile>(parsed));
    auto& rules = std::get<ConfigFile>(parsed).rules;
    REQUIRE(rules.size() == 1);
    return rules[0];
}

const std::string mlx5_path = "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/mlx5_0";

DeviceState mlx5_roce(const DscpMap& dscp_now = {},
                      PfcActual::Status status = PfcActual::Status::ok) {
    DeviceState d;
    d.name = "mlx5_0";
    d.syspath = mlx5_path;
    d.pci_address = "0000:3b:00.0";
    d.kernel_driver = "mlx5_core";
    PortState p;
    p.number = 1;
    p.link_layer = "Ethernet";
    p.transport = "RoCE";
    p.netdev = "ens1f0np0";
    p.pfc.status = status;
    p.pfc.dscp_map = dscp_now;
    p.pfc.trust = dscp_now.empty() ? "pcp" : "dscp";
    d.ports.push_back(p);
    return d;
}

Plan plan_for(const DeviceState& d, const DeviceDesired& want) {
    HostState host;
    host.devices[d.syspath] = d;
    std::map<std::string, PfcActual> pfc;
    for (const auto& p : d.ports)
        pfc[p.netdev] = p.pfc;
    return make_plan(host, {{d.syspath, want}}, pfc, {});
}

std::vector<std::string> codes_of(const Plan& plan) {
    std::vector<std::string> out;
    if (auto it = plan.problems.find(mlx5_path); it != plan.problems.end())
        for (const auto& p : it->second)
            out.push_back(p.code);
    return out;
}

/// mlx5_0 as an InfiniBand SR-IOV PF with `numvfs` of `totalvfs` VFs enabled.
DeviceState sriov_pf(std::optional<uint32_t> numvfs, std::optional<uint32_t> totalvfs) {
    DeviceState d = mlx5_roce();
    d.ports[0].link_layer = "InfiniBand";
    d.ports[0].transport = "InfiniBand";
    d.ports[0].netdev.clear();
    d.sriov.numvfs = numvfs;
    d.sriov.totalvfs = totalvfs;
    return d;
}

DeviceDesired numvfs(uint32_t n) {
    DeviceDesired want;
    want.sriov_numvfs = n;
    return want;
}

} // namespace

// ---- config keys ----------------------------------------------------------------------------

TEST_CASE("trust, dscp_priority and exclusive read as written") {
    const Rule r = rule_of("[[rule]]\ndriver = \"mlx5_core\"\ntrust = \"dscp\"\n"
                           "dscp_priority = { 48 = 6, 26 = 3 }\nexclusive = true\n");
    CHECK(r.trust == "dscp");
    CHECK(r.dscp_priority == DscpMap{{26, 3}, {48, 6}}); // sorted by DSCP
    CHECK(r.exclusive == true);
}

TEST_CASE("a bad trust, DSCP or priority names its file, line and column") {
    CHECK(error_of("[[rule]]\ndriver = \"x\"\ntrust = \"l2\"\n") ==
          "f.conf:3:9: unknown trust \"l2\" (expected \"dscp\" or \"pcp\")");
    CHECK(error_of("[[rule]]\ndriver = \"x\"\ndscp_priority = { 64 = 3 }\n") ==
          "f.conf:3:19: DSCP \"64\" is not a number from 0 to 63");
    CHECK(error_of("[[rule]]\ndriver = \"x\"\ndscp_priority = { 26 = 8 }\n") ==
          "f.conf:3:24: the priority of DSCP 26 must be from 0 to 7, not 8");
    CHECK(error_of("[[rule]]\ndriver = \"x\"\ndscp_priority = [26, 3]\n") ==
          "f.conf:3:17: dscp_priority must be a table of DSCP = priority (e.g. { 26 = 3, 48 = 6 "
          "}), not an array");
    CHECK(error_of("[[rule]]\ndriver = \"x\"\ndscp_priority = { 26 = 3, 026 = 4 }\n") ==
          "f.conf:3:17: DSCP 26 is listed twice in dscp_priority");
    CHECK(error_of("[[rule]]\ndriver = \"x\"\nexclusive = \"yes\"\n") ==
          "f.conf:3:13: exclusive must be true or false, not a string");
}

TEST_CASE("trust pcp with a DSCP map in one rule is refused at the trust key") {
    CHECK(error_of("[[rule]]\ndriver = \"x\"\ndscp_priority = { 26 = 3 }\ntrust = \"pcp\"\n") ==
          "f.conf:4:9: trust = \"pcp\" removes every DSCP entry, so it cannot go with "
          "dscp_priority in one rule");
}

TEST_CASE("rdma_cm_roce_mode takes the kernel's two names, rdma_cm_tos a byte") {
    const Rule r = rule_of("[[rule]]\ndriver = \"x\"\nrdma_cm_roce_mode = \"IB/RoCE v1\"\n"
                           "rdma_cm_tos = 106\n");
    CHECK(r.rdma_cm_roce_mode == "IB/RoCE v1");
    CHECK(r.rdma_cm_tos == 106);
    CHECK(error_of("[[rule]]\ndriver = \"x\"\nrdma_cm_roce_mode = \"RoCE v1\"\n") ==
          "f.conf:3:21: unknown RoCE mode \"RoCE v1\" (expected \"RoCE v2\" or \"IB/RoCE v1\")");
    CHECK(error_of("[[rule]]\ndriver = \"x\"\nrdma_cm_tos = 256\n") ==
          "f.conf:3:15: rdma_cm_tos must be from 0 to 255, not 256");
    CHECK(error_of("[[rule]]\ndriver = \"x\"\nrdma_cm_tos = -1\n") ==
          "f.conf:3:15: rdma_cm_tos must be from 0 to 255, not -1");
}

TEST_CASE("an unknown profile names the one rdmad knows") {
    CHECK(error_of("[[rule]]\ndriver = \"x\"\nprofile = \"lossy\"\n") ==
          "f.conf:3:11: unknown profile \"lossy\" (expected \"lossless-roce\")");
}

TEST_CASE("the state file keeps every setting's keys: format then parse gives the same rule") {
    Rule r;
    r.file = "D-Bus";
    r.match.pci_address = "0000:3b:00.0";
    r.pfc_no_drop = std::vector<uint8_t>{3};
    r.profile = "lossless-roce";
    r.trust = "dscp";
    r.dscp_priority = DscpMap{{0, 0}, {26, 3}, {48, 6}, {63, 7}};
    r.exclusive = false;
    r.rdma_cm_roce_mode = "RoCE v2";
    r.rdma_cm_tos = 0;
    Rule back = rule_of(format_rules({r}));
    back.file = r.file;
    back.line = r.line;
    CHECK(back == r);
}

// ---- resolve: profiles and where a value came from ------------------------------------------

TEST_CASE("profile lossless-roce gives the lossless chain; the rule's own keys win and say so") {
    DesiredConfig config;
    config.rules = {rule_of("[[rule]]\ndriver = \"mlx5_core\"\nprofile = \"lossless-roce\"\n"
                            "dscp_priority = { 26 = 4 }\n")};
    const DeviceDesired want = resolve(config, mlx5_roce(), {});
    CHECK(want.pfc_no_drop == std::vector<uint8_t>{3});
    CHECK(want.trust == "dscp");
    CHECK(want.dscp_priority == DscpMap{{26, 4}});
    CHECK(want.origin.at("pfc_no_drop") == "profile lossless-roce (f.conf:1)");
    CHECK(want.origin.at("trust") == "profile lossless-roce (f.conf:1)");
    CHECK(want.origin.at("dscp_priority") == "f.conf:1");
    CHECK(want.rdma_cm_roce_mode == "RoCE v2"); // the profile's
    CHECK(want.rdma_cm_tos == 106);             // DSCP 26 << 2 | ECT(0)
    CHECK(want.origin.at("rdma_cm_tos") == "profile lossless-roce (f.conf:1)");
}

TEST_CASE("a later rule overrides one value of an earlier rule's profile") {
    DesiredConfig config;
    config.rules = {rule_of("[[rule]]\ndriver = \"mlx5_core\"\nprofile = \"lossless-roce\"\n"),
                    rule_of("\n\n[[rule]]\ndevice = \"mlx5_*\"\npfc_no_drop = [4]\n")};
    const DeviceDesired want = resolve(config, mlx5_roce(), {});
    CHECK(want.pfc_no_drop == std::vector<uint8_t>{4});
    CHECK(want.origin.at("pfc_no_drop") == "f.conf:3");
    CHECK(want.trust == "dscp");
    CHECK(want.origin.at("trust") == "profile lossless-roce (f.conf:1)");
}

TEST_CASE("trust pcp overrides a profile's DSCP map, and a later map an earlier pcp") {
    DesiredConfig config;
    config.rules = {rule_of("[[rule]]\ndriver = \"mlx5_core\"\nprofile = \"lossless-roce\"\n"
                            "trust = \"pcp\"\n")};
    DeviceDesired want = resolve(config, mlx5_roce(), {});
    CHECK(want.trust == "pcp");
    CHECK(want.origin.at("trust") == "f.conf:1");
    CHECK(want.dscp_priority.empty());
    CHECK(want.origin.count("dscp_priority") == 0);
    CHECK(want.pfc_no_drop == std::vector<uint8_t>{3}); // the rest of the profile stands
    const auto codes = codes_of(plan_for(mlx5_roce({{26, 3}}), want));
    CHECK(std::find(codes.begin(), codes.end(), "dscp-conflict") == codes.end());

    config.rules.push_back(
        rule_of("\n\n[[rule]]\ndevice = \"mlx5_*\"\ndscp_priority = { 46 = 5 }\n"));
    want = resolve(config, mlx5_roce(), {});
    CHECK(want.trust.empty()); // a map is DSCP trust
    CHECK(want.origin.count("trust") == 0);
    CHECK(want.dscp_priority == DscpMap{{46, 5}});
    CHECK(want.origin.at("dscp_priority") == "f.conf:3");
}

// ---- DSCP: compare and plan -----------------------------------------------------------------

TEST_CASE("trust dscp on a table without DSCP entries installs DSCP >> 3; with one, nothing") {
    DeviceDesired want;
    want.trust = "dscp";
    const Plan plan = plan_for(mlx5_roce(), want);
    REQUIRE(plan.actions.size() == 1);
    const Action& a = plan.actions[0];
    CHECK(a.setting == "Trust");
    CHECK(a.from == "pcp");
    CHECK(a.to == "dscp");
    REQUIRE(a.dscp_add.size() == 64); // as mlnx_qos --trust dscp shows: prio = DSCP >> 3
    CHECK(a.dscp_add[26] == std::pair<uint8_t, uint8_t>{26, 3});
    CHECK(a.dscp_add[63] == std::pair<uint8_t, uint8_t>{63, 7});
    CHECK(plan_for(mlx5_roce({{46, 5}}), want).actions.empty());
}

TEST_CASE("trust pcp deletes every DSCP entry; exclusive deletes the unlisted ones") {
    DeviceDesired pcp;
    pcp.trust = "pcp";
    const Plan plan = plan_for(mlx5_roce({{10, 1}, {26, 3}}), pcp);
    REQUIRE(plan.actions.size() == 1);
    CHECK(plan.actions[0].dscp_add.empty());
    CHECK(plan.actions[0].dscp_remove == DscpMap{{10, 1}, {26, 3}});
    DeviceDesired only;
    only.dscp_priority = {{26, 3}};
    CHECK(plan_for(mlx5_roce({{10, 1}, {26, 3}}), only).actions.empty()); // 10:1 left alone
    only.exclusive = true;
    const Plan ex = plan_for(mlx5_roce({{10, 1}, {26, 3}}), only);
    REQUIRE(ex.actions.size() == 1);
    CHECK(ex.actions[0].dscp_remove == DscpMap{{10, 1}});
    CHECK(ex.actions[0].exclusive);
}

TEST_CASE("trust pcp and a DSCP map from two rules: dscp-conflict, no write, and the port shows "
          "what is asked and is not in sync") {
    DeviceDesired want;
    want.trust = "pcp";
    want.dscp_priority = {{26, 3}};
    want.origin = {{"trust", "a.conf:1"}, {"dscp_priority", "b.conf:4"}};
    const Plan plan = plan_for(mlx5_roce({{26, 3}}), want);
    CHECK(plan.actions.empty());
    CHECK(codes_of(plan) == std::vector<std::string>{"dscp-conflict"});
    const PortPlan& pp = plan.ports.at(mlx5_path).at(1);
    CHECK(pp.desired_trust == "pcp");
    CHECK(pp.desired_dscp_priority == DscpMap{{26, 3}});
    CHECK_FALSE(pp.in_sync);
}

TEST_CASE("a DSCP map that differs plans one APP write on the port's netdev") {
    DeviceDesired want;
    want.dscp_priority = {{26, 3}, {48, 6}};
    const Plan plan = plan_for(mlx5_roce({{26, 0}}), want);
    REQUIRE(plan.actions.size() == 1);
    const Action& a = plan.actions[0];
    CHECK(a.kind == Action::Kind::dscp_app);
    CHECK(a.netdev == "ens1f0np0");
    CHECK(a.setting == "DSCPPriority");
    CHECK(a.dscp_add == DscpMap{{26, 3}, {48, 6}});
    CHECK(a.dscp_remove == DscpMap{{26, 0}});
    CHECK(a.from == "26:0");
    CHECK(a.to == "26:3,48:6");
    const PortPlan& pp = plan.ports.at(mlx5_path).at(1);
    CHECK_FALSE(pp.in_sync);
    CHECK(pp.desired_dscp_priority == want.dscp_priority);
}

TEST_CASE("a DSCP map already there plans nothing and the port is in sync") {
    DeviceDesired want;
    want.trust = "dscp";
    want.dscp_priority = {{26, 3}};
    const Plan plan = plan_for(mlx5_roce({{26, 3}, {46, 5}}), want);
    CHECK(plan.actions.empty());
    CHECK(plan.ports.at(mlx5_path).at(1).in_sync);
    CHECK(plan.ports.at(mlx5_path).at(1).desired_trust == "dscp");
}

TEST_CASE("an LLDP agent owning DCB: the DSCP difference is reported, not fought") {
    DeviceState d = mlx5_roce();
    d.ports[0].pfc.lldpad = true;
    DeviceDesired want;
    want.trust = "dscp";
    const Plan plan = plan_for(d, want);
    CHECK(plan.actions.empty());
    CHECK(codes_of(plan) == std::vector<std::string>{"dscp-owned-elsewhere"});
}

TEST_CASE("a netdev without DCB: one no-dcb problem for the port whatever settings ask") {
    DeviceDesired want;
    want.trust = "dscp";
    want.pfc_no_drop = {3};
    const Plan plan = plan_for(mlx5_roce({}, PfcActual::Status::not_supported), want);
    CHECK(plan.actions.empty());
    CHECK(codes_of(plan) == std::vector<std::string>{"no-dcb"});
}

// ---- RDMA-CM: compare and plan --------------------------------------------------------------

TEST_CASE("RDMA-CM values of a device whose group does not exist are written (it is made)") {
    DeviceState d = mlx5_roce();
    d.ports[0].rdma_cm.status = RdmaCmStatus::no_group;
    DeviceDesired want;
    want.rdma_cm_roce_mode = "RoCE v2";
    want.rdma_cm_tos = 106;
    const Plan plan = plan_for(d, want);
    REQUIRE(plan.actions.size() == 1);
    const Action& a = plan.actions[0];
    CHECK(a.kind == Action::Kind::rdma_cm);
    CHECK(a.device == "mlx5_0");
    CHECK(a.port == 1);
    CHECK(a.value == "RoCE v2");
    CHECK(a.number == 106);
    CHECK(a.from == "(not readable without its configfs group)");
    CHECK(a.to == "RoCE v2, tos 106");
}

TEST_CASE("only the RDMA-CM value that differs is written") {
    DeviceState d = mlx5_roce();
    d.ports[0].rdma_cm.status = RdmaCmStatus::ok;
    d.ports[0].rdma_cm.roce_mode = "RoCE v2";
    d.ports[0].rdma_cm.tos = 0;
    DeviceDesired want;
    want.rdma_cm_roce_mode = "RoCE v2";
    want.rdma_cm_tos = 106;
    const Plan plan = plan_for(d, want);
    REQUIRE(plan.actions.size() == 1);
    CHECK(plan.actions[0].value.empty());
    CHECK(plan.actions[0].number == 106);
    CHECK(plan.actions[0].from == "tos 0");
    d.ports[0].rdma_cm.tos = 106;
    CHECK(plan_for(d, want).actions.empty());
}

TEST_CASE("no configfs: a named problem with the remedy, no write to retry") {
    DeviceState d = mlx5_roce();
    d.ports[0].rdma_cm.status = RdmaCmStatus::no_configfs;
    DeviceDesired want;
    want.rdma_cm_tos = 106;
    const Plan plan = plan_for(d, want);
    CHECK(plan.actions.empty());
    REQUIRE(codes_of(plan) == std::vector<std::string>{"rdma-cm-no-configfs"});
    CHECK(plan.problems.at(mlx5_path)[0].remedy ==
          "systemctl start sys-kernel-config.mount (or mount -t configfs none /sys/kernel/config)");
}

TEST_CASE("RDMA-CM values are not asked of an InfiniBand port") {
    DeviceState d = mlx5_roce();
    d.ports[0].transport = "InfiniBand";
    d.ports[0].link_layer = "InfiniBand";
    DeviceDesired want;
    want.rdma_cm_tos = 106;
    Plan plan = plan_for(d, want);
    CHECK(plan.actions.empty());
    CHECK(plan.ports[mlx5_path][1].desired_rdma_cm_tos == -1);
}

// ---- sriov_numvfs ---------------------------------------------------------------------------

TEST_CASE("sriov_numvfs takes a u16, as sriov_numvfs_store() does, and says where it is wrong") {
    CHECK(rule_of("[[rule]]\npci_address = \"0000:3b:00.0\"\nsriov_numvfs = 8\n").sriov_numvfs ==
          8u);
    CHECK(error_of("[[rule]]\ndriver = \"x\"\nsriov_numvfs = 65536\n") ==
          "f.conf:3:16: sriov_numvfs must be from 0 to 65535, not 65536");
    CHECK(error_of("[[rule]]\ndriver = \"x\"\nsriov_numvfs = -1\n") ==
          "f.conf:3:16: sriov_numvfs must be from 0 to 65535, not -1");
    CHECK(error_of("[[rule]]\ndriver = \"x\"\nsriov_numvfs = \"4\"\n") ==
          "f.conf:3:16: sriov_numvfs must be an integer from 0 to 65535, not a string");
}

TEST_CASE("sriov_numvfs survives the state file: format then parse gives the same rule") {
    Rule r;
    r.file = "D-Bus";
    r.match.pci_address = "0000:3b:00.0";
    r.sriov_numvfs = 0;
    Rule back = rule_of(format_rules({r}));
    back.file = r.file;
    back.line = r.line;
    CHECK(back == r);
}

TEST_CASE("a PF with fewer VFs than asked plans one write, from and to the counts") {
    const Plan plan = plan_for(sriov_pf(0, 16), numvfs(8));
    REQUIRE(plan.actions.size() == 1);
    const Action& a = plan.actions[0];
    CHECK(a.kind == Action::Kind::sriov_numvfs);
    CHECK(a.pci_address == "0000:3b:00.0");
    CHECK(a.number == 8);
    CHECK(a.setting == "SRIOVNumVFs");
    CHECK(a.from == "0");
    CHECK(a.to == "8");
    CHECK_FALSE(plan.ports.at(mlx5_path).at(1).in_sync);
    CHECK(codes_of(plan).empty());
}

TEST_CASE("a PF with the VFs asked plans nothing and stays in sync") {
    const Plan plan = plan_for(sriov_pf(4, 16), numvfs(4));
    CHECK(plan.actions.empty());
    CHECK(codes_of(plan).empty());
    // In sync: no port planned out of sync (a port no setting plans has no entry).
    const auto& ports = plan.ports.at(mlx5_path);
    CHECK((!ports.count(1) || ports.at(1).in_sync));
}

TEST_CASE("more VFs than sriov_totalvfs is sriov-numvfs-too-many, and nothing is written") {
    const Plan plan = plan_for(sriov_pf(0, 16), numvfs(17));
    CHECK(plan.actions.empty());
    REQUIRE(codes_of(plan) == std::vector<std::string>{"sriov-numvfs-too-many"});
    const Problem& p = plan.problems.at(mlx5_path)[0];
    CHECK(p.severity == "error");
    CHECK(p.evidence ==
          std::vector<SharedText>{"/sys/bus/pci/devices/0000:3b:00.0/sriov_totalvfs = 16"});
    CHECK_FALSE(plan.ports.at(mlx5_path).at(1).in_sync);
}

TEST_CASE("a function without SR-IOV is sriov-unsupported; a VF matched by driver is left alone") {
    CHECK(codes_of(plan_for(sriov_pf(std::nullopt, std::nullopt), numvfs(4))) ==
          std::vector<std::string>{"sriov-unsupported"});
    // sriov_totalvfs there but no count: the evidence shows what it holds, not "(absent)".
    DeviceState garbled = sriov_pf(std::nullopt, std::nullopt);
    garbled.sriov.unreadable = "sriov_totalvfs = \"abc\"";
    const Plan shown = plan_for(garbled, numvfs(4));
    REQUIRE(shown.problems.at(mlx5_path).size() == 1);
    CHECK(shown.problems.at(mlx5_path)[0].evidence ==
          std::vector<SharedText>{"/sys/bus/pci/devices/0000:3b:00.0/sriov_totalvfs = \"abc\""});
    CHECK(shown.actions.empty());
    DeviceState vf = sriov_pf(std::nullopt, std::nullopt);
    vf.physical_function = "0000:3b:00.0";
    const Plan plan = plan_for(vf, numvfs(4));
    CHECK(plan.actions.empty());
    CHECK(codes_of(plan).empty());
}

// ---- vf_guids -------------------------------------------------------------------------------

TEST_CASE("vf_guids reads a range and a list, the list sorted by VF") {
    const Rule r = rule_of("[[rule]]\npci_address = \"0000:0c:00.0\"\n"
                           "vf_guids = { node = \"00:11:22:33:44:55:66:00\", "
                           "port = \"0011:2233:4455:6700\" }\n");
    REQUIRE(r.vf_guids);
    CHECK(r.vf_guids->base == VfGuid{0, 0x0011223344556600u, 0x0011223344556700u});
    CHECK(r.vf_guids->of(3) == VfGuid{3, 0x0011223344556603u, 0x0011223344556703u});
    const Rule l = rule_of("[[rule]]\ndriver = \"mlx5_core\"\nvf_guids = [\n"
                           "  { vf = 2, node = \"0011:2233:4455:6602\", port = \"0011:2233:4455:6702\" },\n"
                           "  { vf = 0, node = \"0011:2233:4455:6600\", port = \"0011:2233:4455:6700\" },\n"
                           "]\n");
    REQUIRE(l.vf_guids);
    CHECK(l.vf_guids->list ==
          std::vector<VfGuid>{{0, 0x0011223344556600u, 0x0011223344556700u},
                              {2, 0x0011223344556602u, 0x0011223344556702u}});
    CHECK(l.vf_guids->of(1) == std::nullopt);
    CHECK(l.vf_guids->of(2) == VfGuid{2, 0x0011223344556602u, 0x0011223344556702u});
}

TEST_CASE("vf_guids says where it is wrong: a bad or zero GUID, a duplicate VF, an unknown "
          "key, a range that overflows") {
    const std::string head = "[[rule]]\ndriver = \"x\"\n";
    CHECK(error_of(head + "vf_guids = { node = \"zz\", port = \"00:11:22:33:44:55:66:77\" }\n") ==
          "f.conf:3:21: vf_guids node must be a GUID as ip link or node_guid writes it "
          "(\"00:11:22:33:44:55:66:77\" or \"0011:2233:4455:6677\"), not \"zz\"");
    CHECK(error_of(head + "vf_guids = { node = \"0000:0000:0000:0000\", port = "
                          "\"00:11:22:33:44:55:66:77\" }\n") ==
          "f.conf:3:21: vf_guids node must not be zero (no GUID)");
    CHECK(error_of(head + "vf_guids = [\n"
                          "  { vf = 1, node = \"0011:2233:4455:6601\", port = \"0011:2233:4455:6701\" },\n"
                          "  { vf = 1, node = \"0011:2233:4455:6602\", port = \"0011:2233:4455:6702\" },\n"
                          "]\n") == "f.conf:5:10: vf_guids: VF 1 is listed twice (first on line 4)");
    CHECK(error_of(head + "vf_guids = { node = \"0011:2233:4455:6600\", prot = "
                          "\"0011:2233:4455:6700\" }\n") ==
          "f.conf:3:44: unknown key \"prot\" in vf_guids (expected node, port)");
    CHECK(error_of(head + "sriov_numvfs = 16\nvf_guids = { node = \"ffff:ffff:ffff:fff8\", port = "
                          "\"0011:2233:4455:6700\" }\n") ==
          "f.conf:4:12: vf_guids: the range passes ff:ff:ff:ff:ff:ff:ff:ff before VF 15 (the "
          "last of 16 asked by sriov_numvfs); start it lower");
    // Without sriov_numvfs the range must hold the most VFs a PF can have (65535).
    CHECK(error_of(head + "vf_guids = { node = \"0011:2233:4455:6600\", port = "
                          "\"ffff:ffff:ffff:0002\" }\n") ==
          "f.conf:3:12: vf_guids: the range passes ff:ff:ff:ff:ff:ff:ff:ff before VF 65534 (the "
          "last of 65535 a PF can have); start it lower");
    CHECK(error_of(head + "vf_guids = 3\n") ==
          "f.conf:3:12: vf_guids must be a list of tables { vf, node, port }, not an integer");
}

TEST_CASE("vf_guids survives the state file: format then parse gives the same rule") {
    for (const VfGuids& g : {VfGuids{{}, VfGuid{0, 0x0011223344556600u, 0x0011223344556700u}},
                             VfGuids{{{0, 1, 2}, {5, 0xffu, 0x100u}}, std::nullopt}}) {
        Rule r;
        r.file = "D-Bus";
        r.match.pci_address = "0000:0c:00.0";
        r.vf_guids = g;
        Rule back = rule_of(format_rules({r}));
        back.file = r.file;
        back.line = r.line;
        CHECK(back == r);
    }
}

TEST_CASE("vf_guids: a list that gives two VFs the same node or port GUID says where, since an "
          "InfiniBand subnet takes each GUID once") {
    // IBA: a node GUID names one node, a port GUID one port, in the whole subnet; the subnet
    // manager sees two VFs that share one as a single node (or port) seen twice.
    const std::string head = "[[rule]]\ndriver = \"x\"\n";
    CHECK(error_of(
              head +
              "vf_guids = [\n"
              "  { vf = 0, node = \"0011:2233:4455:6601\", port = \"0011:2233:4455:6701\" },\n"
              "  { vf = 1, node = \"00:11:22:33:44:55:66:01\", port = \"0011:2233:4455:6702\" },\n"
              "]\n") ==
          "f.conf:5:20: vf_guids: node GUID 0011:2233:4455:6601 of VF 1 is VF 0's too (line 4)");
    CHECK(error_of(head +
                   "vf_guids = [\n"
                   "  { vf = 3, node = \"0011:2233:4455:6601\", port = \"0011:2233:4455:6701\" },\n"
                   "  { vf = 2, node = \"0011:2233:4455:6602\", port = \"0011:2233:4455:6701\" },\n"
                   "]\n") ==
          "f.conf:5:50: vf_guids: port GUID 0011:2233:4455:6701 of VF 2 is VF 3's too (line 4)");
    // A VF's node and port GUID may be one value (a single-port node, as many firmwares give).
    CHECK(rule_of(head +
                  "vf_guids = [\n"
                  "  { vf = 0, node = \"0011:2233:4455:6601\", port = \"0011:2233:4455:6601\" },\n"
                  "]\n")
              .vf_guids.has_value());
}
