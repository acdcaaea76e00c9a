// SPDX-License-Identifier: MIT
//
// The exports' renderers (daemon/export/): rdmad.prom for node-exporter's textfile collector
// and the NFD feature file, on plain inventory values. The host below is modelled on the
// recorded constructed-mlx5-roce and azure-hpc-mlx4 fixtures: a ConnectX RoCE port whose GID
// table holds the kernel's default link-local GIDs (index 0 RoCE v1, 1 RoCE v2) and the
// IPv4-mapped GIDs of 192.168.1.1 (index 2 v1, 3 v2), an InfiniBand port and an mlx4 port.
// Rules checked: the exposition format
// (https://prometheus.io/docs/instrumenting/exposition_formats/), Prometheus naming
// (https://prometheus.io/docs/practices/naming/), Kubernetes label syntax (written out below
// from k8s.io/apimachinery validation: IsQualifiedName, IsValidLabelValue) and NFD's feature
// file format (customization-guide, "Feature files").
#include "doctor/gid_choice.hpp"
#include "export/facts.hpp"
#include "export/nfd.hpp"
#include "export/prometheus.hpp"
#include "util/text.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace rdmad;
using namespace rdmad::exports;

namespace {

const Gid kLinkLocal = *Gid::parse("fe80:0000:0000:0000:0202:c9ff:fe00:0001");
const Gid kIpv4 = *Gid::parse("0000:0000:0000:0000:0000:ffff:c0a8:0101"); // 192.168.1.1

PortState roce_port() {
    PortState p;
    p.number = 1;
    p.state = "ACTIVE";
    p.phys_state = "LinkUp";
    p.link_layer = "Ethernet";
    p.transport = "RoCE";
    p.roce_versions = {"v1", "v2"};
    p.netdev = "enp1s0f0np0";
    p.gids = {{0, kLinkLocal, "IB/RoCE v1", "enp1s0f0np0"},
              {1, kLinkLocal, "RoCE v2", "enp1s0f0np0"},
              {2, kIpv4, "IB/RoCE v1", "enp1s0f0np0"},
              {3, kIpv4, "RoCE v2", "enp1s0f0np0"}};
    // As doctor::recommend_gid() derives it (test_doctor_gid_choice.cpp).
    p.recommended_gid = {3, kIpv4, "RoCE v2", "enp1s0f0np0", "192.168.1.1"};
    p.pfc.status = PfcActual::Status::ok;
    p.pfc.priorities = {3};
    p.pfc_no_drop = {3};
    p.desired_pfc_no_drop = {3, 4};
    p.in_sync = false;
    return p;
}

DeviceState device(const std::string& name, const std::string& driver, const std::string& provider,
                   std::vector<PortState> ports) {
    DeviceState d;
    d.name = name;
    d.syspath = "/sys/devices/pci0000:00/0000:00:01.0/infiniband/" + name;
    d.node_type = "CA";
    d.kernel_driver = driver;
    d.provider = provider;
    d.provider_installed = true;
    d.verbs_device = "/dev/infiniband/uverbs0";
    d.pci_address = "0000:01:00.0";
    d.node_guid = "0002:c903:0031:78f0";
    d.ports = std::move(ports);
    return d;
}

HostState host() {
    HostState inv;
    auto roce = device("mlx5_0", "mlx5_core", "mlx5", {roce_port()});
    inv.devices[roce.syspath] = roce;

    PortState ib;
    ib.number = 1;
    ib.state = "ACTIVE";
    ib.link_layer = "InfiniBand";
    ib.transport = "InfiniBand";
    ib.gids = {{0, *Gid::parse("fe80:0000:0000:0000:0002:c903:0031:78f1"), "", ""}};
    auto ibdev = device("mlx5_1", "mlx5_core", "mlx5", {ib});
    inv.devices[ibdev.syspath] = ibdev;

    PortState m1, m2;
    m1.number = 1;
    m1.state = "DOWN";
    m1.link_layer = "InfiniBand";
    m1.transport = "InfiniBand";
    m1.port_type = "ib";
    m2 = m1;
    m2.number = 2;
    m2.link_layer = "Ethernet";
    m2.transport = "RoCE";
    m2.roce_versions = {"v1"};
    m2.port_type = "auto (eth)";
    m2.desired_port_type = "eth";
    m2.pfc.status = PfcActual::Status::not_supported;
    auto mlx4 = device("mlx4_0", "mlx4_core", "mlx4", {m1, m2});
    mlx4.provider_installed = false;
    mlx4.problems = {{"provider-missing", "error", "install ibverbs-providers"},
                     {"port-not-active", "warning", "port 1 is DOWN"},
                     {"port-not-active", "warning", "port 2 is DOWN"}};
    inv.devices[mlx4.syspath] = mlx4;

    LinkState eth;
    eth.index = 4;
    eth.name = "enp1s0f0np0";
    eth.rdma_capable = "yes";
    eth.rdma_device = "mlx5_0";
    inv.links[4] = eth;
    LinkState lo;
    lo.index = 1;
    lo.name = "lo";
    lo.rdma_capable = "no";
    inv.links[1] = lo;
    return inv;
}

ManagerFacts facts() {
    ManagerFacts f;
    f.state = "running";
    f.config_errors = 0;
    f.last_reconcile_usec = 1764590400'500000; // 2025-12-01T12:00:00.5Z
    return f;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

bool has_line(const std::string& text, const std::string& line) {
    const auto all = lines_of(text);
    return std::find(all.begin(), all.end(), line) != all.end();
}

std::string metric_name(const std::string& sample) {
    return sample.substr(0, sample.find_first_of("{ "));
}

/// The label values of a sample line, in order.
std::vector<std::string> label_values(const std::string& sample) {
    std::vector<std::string> out;
    static const std::regex value(R"re(="((?:\\.|[^"\\])*)")re");
    for (auto it = std::sregex_iterator(sample.begin(), sample.end(), value);
         it != std::sregex_iterator(); ++it)
        out.push_back((*it)[1]);
    return out;
}

} // namespace

TEST_CASE("rdmad.prom: every line is a HELP, a TYPE or a sample of the exposition format") {
    const std::string text = render_prometheus(host(), facts());
    REQUIRE(!text.empty());
    CHECK(text.back() == '\n');
    // metric_name{label="value",...} value -- no timestamp after the value.
    static const std::regex sample(
        R"re(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*\})? -?[0-9]+(\.[0-9]+)?$)re");
    static const std::regex help(R"re(^# HELP rdmad_[a-z0-9_]+ \S.*$)re");
    static const std::regex type(R"re(^# TYPE rdmad_[a-z0-9_]+ gauge$)re");
    std::set<std::string> seen, closed;
    std::string current;
    for (const auto& line : lines_of(text)) {
        INFO(line);
        if (line.rfind("# HELP ", 0) == 0) {
            CHECK(std::regex_match(line, help));
            const std::string name = line.substr(7, line.find(' ', 7) - 7);
            CHECK(seen.insert(name).second); // one HELP per family
            if (!current.empty())
                closed.insert(current);
            current = name;
            continue;
        }
        if (line.rfind("# TYPE ", 0) == 0) {
            CHECK(std::regex_match(line, type));
            CHECK(line.substr(7, line.find(' ', 7) - 7) == current);
            continue;
        }
        CHECK(std::regex_match(line, sample));
        // Samples of a family follow its HELP/TYPE, and no family comes back later.
        CHECK(metric_name(line) == current);
        CHECK(!closed.count(metric_name(line)));
    }
}

TEST_CASE("rdmad.prom: names have the rdmad_ prefix, no node-exporter metric is repeated, no GID, "
          "address or text is a label value") {
    const std::string text = render_prometheus(host(), facts());
    static const std::regex gid_like("[0-9a-f]{4}:[0-9a-f]{4}");
    for (const auto& line : lines_of(text)) {
        if (line[0] == '#')
            continue;
        INFO(line);
        const std::string name = metric_name(line);
        CHECK(name.rfind("rdmad_", 0) == 0);
        // node-exporter's infiniband collector already has port state, physical state, rate,
        // counters and board/firmware info; its netclass collector operstate and carrier.
        for (const char* theirs : {"state_id", "physical_state", "rate", "_bytes", "_packets",
                                   "firmware", "board", "operstate", "carrier", "_total"})
            CHECK(name.find(theirs) == std::string::npos);
        for (const auto& v : label_values(line)) {
            CHECK(!std::regex_search(v, gid_like));  // no GID, node GUID or PCI address
            CHECK(v.find(' ') == std::string::npos); // no sentence (problem text)
        }
    }
    CHECK(text.find("0000:01:00.0") == std::string::npos);
    CHECK(text.find("install ibverbs-providers") == std::string::npos);
}

TEST_CASE("rdmad.prom: the port series join node_infiniband_* on device and port") {
    const std::string text = render_prometheus(host(), facts());
    CHECK(has_line(text, R"(rdmad_port_info{device="mlx5_0",port="1",link_layer="Ethernet",)"
                         R"(transport="RoCE",netdev="enp1s0f0np0"} 1)"));
    CHECK(has_line(text, R"(rdmad_port_info{device="mlx5_1",port="1",link_layer="InfiniBand",)"
                         R"(transport="InfiniBand",netdev=""} 1)"));
    CHECK(has_line(text, R"(rdmad_port_in_sync{device="mlx5_0",port="1"} 0)"));
    CHECK(has_line(text, R"(rdmad_port_in_sync{device="mlx5_1",port="1"} 1)"));
    CHECK(has_line(text, R"(rdmad_device_info{device="mlx5_0",kernel_driver="mlx5_core",)"
                         R"(provider="mlx5",node_type="CA"} 1)"));
    CHECK(has_line(text, R"(rdmad_device_provider_installed{device="mlx4_0"} 0)"));
    CHECK(has_line(text, R"(rdmad_device_provider_installed{device="mlx5_0"} 1)"));
}

TEST_CASE("rdmad.prom: PFC no-drop priorities, actual and desired, one series per priority") {
    const std::string text = render_prometheus(host(), facts());
    for (int p = 0; p < 8; ++p) {
        INFO(p);
        const std::string labels =
            R"({device="mlx5_0",port="1",priority=")" + std::to_string(p) + "\"}";
        CHECK(has_line(text, "rdmad_port_pfc_no_drop" + labels + (p == 3 ? " 1" : " 0")));
        CHECK(has_line(text, "rdmad_port_desired_pfc_no_drop" + labels +
                                 (p == 3 || p == 4 ? " 1" : " 0")));
    }
    CHECK(has_line(text, R"(rdmad_port_pfc_status{device="mlx5_0",port="1",status="ok"} 1)"));
    CHECK(has_line(text,
                   R"(rdmad_port_pfc_status{device="mlx4_0",port="2",status="not_supported"} 1)"));
    CHECK(has_line(text, R"(rdmad_port_pfc_status{device="mlx4_0",port="2",status="ok"} 0)"));
    // PFC that could not be read says nothing about priorities; an IB port has no PFC.
    CHECK(text.find(R"(rdmad_port_pfc_no_drop{device="mlx4_0")") == std::string::npos);
    CHECK(text.find(R"(rdmad_port_pfc_status{device="mlx5_1")") == std::string::npos);
}

TEST_CASE("rdmad.prom: port type as state sets, actual (mode) and desired") {
    const std::string text = render_prometheus(host(), facts());
    // mlx4_port2 reads "auto (eth)": the mode set is auto.
    CHECK(has_line(text, R"(rdmad_port_type{device="mlx4_0",port="2",type="auto"} 1)"));
    CHECK(has_line(text, R"(rdmad_port_type{device="mlx4_0",port="2",type="eth"} 0)"));
    CHECK(has_line(text, R"(rdmad_port_type{device="mlx4_0",port="1",type="ib"} 1)"));
    CHECK(has_line(text, R"(rdmad_port_desired_type{device="mlx4_0",port="2",type="eth"} 1)"));
    CHECK(has_line(text, R"(rdmad_port_desired_type{device="mlx4_0",port="2",type="auto"} 0)"));
    CHECK(text.find(R"(rdmad_port_desired_type{device="mlx4_0",port="1")") == std::string::npos);
    CHECK(text.find(R"(rdmad_port_type{device="mlx5_0")") == std::string::npos);
    // Nothing read from a ConnectX-4+ firmware: no next-boot or pending series.
    CHECK(text.find("rdmad_port_next_boot_type{") == std::string::npos);
    CHECK(text.find("rdmad_port_type_pending{") == std::string::npos);
}

TEST_CASE("rdmad.prom: a ConnectX-4+ port whose firmware takes eth at its next reset is "
          "pending: next boot eth, rdmad_port_type_pending 1") {
    HostState inv = host();
    for (auto& [_, d] : inv.devices)
        if (d.name == "mlx5_1") {
            d.ports[0].port_type = "ib";
            d.ports[0].desired_port_type = "eth";
            d.ports[0].next_boot_port_type = "eth";
            d.ports[0].pending_port_type = "eth";
        }
    const std::string text = render_prometheus(inv, facts());
    CHECK(has_line(text, R"(rdmad_port_type{device="mlx5_1",port="1",type="ib"} 1)"));
    CHECK(has_line(text, R"(rdmad_port_next_boot_type{device="mlx5_1",port="1",type="eth"} 1)"));
    CHECK(has_line(text, R"(rdmad_port_next_boot_type{device="mlx5_1",port="1",type="ib"} 0)"));
    CHECK(has_line(text, R"(rdmad_port_type_pending{device="mlx5_1",port="1"} 1)"));
}

TEST_CASE("rdmad.prom: RoCE versions, a routable RoCE v2 GID and the GID index to use") {
    const std::string text = render_prometheus(host(), facts());
    CHECK(has_line(text, R"(rdmad_port_roce_version{device="mlx5_0",port="1",version="v1"} 1)"));
    CHECK(has_line(text, R"(rdmad_port_roce_version{device="mlx5_0",port="1",version="v2"} 1)"));
    CHECK(has_line(text, R"(rdmad_port_roce_version{device="mlx4_0",port="2",version="v2"} 0)"));
    CHECK(has_line(text, R"(rdmad_port_roce_v2_routable_gid{device="mlx5_0",port="1"} 1)"));
    CHECK(has_line(text, R"(rdmad_port_roce_v2_routable_gid{device="mlx4_0",port="2"} 0)"));
    // Index 3: the RoCE v2 GID of 192.168.1.1 (1 is v2 but link-local).
    CHECK(has_line(text, R"(rdmad_port_recommended_roce_gid_index{device="mlx5_0",port="1"} 3)"));
    CHECK(text.find(R"(rdmad_port_roce_version{device="mlx5_1")") == std::string::npos);
}

TEST_CASE("rdmad.prom: problems counted by code and severity, netdev capability, daemon facts") {
    const std::string text = render_prometheus(host(), facts());
    CHECK(has_line(text, R"(rdmad_device_problems{device="mlx4_0",code="port-not-active",)"
                         R"(severity="warning"} 2)"));
    CHECK(has_line(text, R"(rdmad_device_problems{device="mlx4_0",code="provider-missing",)"
                         R"(severity="error"} 1)"));
    CHECK(text.find(R"(rdmad_device_problems{device="mlx5_0")") == std::string::npos);
    CHECK(has_line(text, R"(rdmad_netdev_rdma_capable{device="enp1s0f0np0",state="yes"} 1)"));
    CHECK(has_line(text, R"(rdmad_netdev_rdma_capable{device="enp1s0f0np0",state="no"} 0)"));
    CHECK(has_line(text, R"(rdmad_netdev_rdma_capable{device="lo",state="no"} 1)"));
    CHECK(has_line(text, R"(rdmad_state{state="running"} 1)"));
    CHECK(has_line(text, R"(rdmad_state{state="starting"} 0)"));
    CHECK(has_line(text, R"(rdmad_state{state="degraded"} 0)"));
    CHECK(has_line(text, "rdmad_config_errors 0"));
    CHECK(has_line(text, "rdmad_last_reconcile_timestamp_seconds 1764590400.5"));
    ManagerFacts never = facts();
    never.last_reconcile_usec.reset();
    CHECK(render_prometheus(host(), never).find("rdmad_last_reconcile") == std::string::npos);
}

TEST_CASE("rdmad.prom: the Manager's problems (two modules the kernel refused, a skipped "
          "legacy line) counted by code and severity; without any, no rdmad_problems") {
    ManagerFacts f = facts();
    f.problems = {{"module-load-failed", "error", "kernel module irdma (enp59s0f0): ..."},
                  {"legacy-config", "warning", "/etc/rdma/mlx4.conf:3: ..."},
                  {"module-load-failed", "error", "kernel module ib_ipoib: ..."}};
    const std::string text = render_prometheus(host(), f);
    CHECK(has_line(text, "# TYPE rdmad_problems gauge"));
    CHECK(has_line(text, R"(rdmad_problems{code="legacy-config",severity="warning"} 1)"));
    CHECK(has_line(text, R"(rdmad_problems{code="module-load-failed",severity="error"} 2)"));
    size_t samples = 0;
    for (const auto& line : lines_of(text))
        samples += line.rfind("rdmad_problems{", 0) == 0;
    CHECK(samples == 2);
    // Between the daemon's facts and the devices', as the families are ordered.
    CHECK(text.find("rdmad_config_errors") < text.find("rdmad_problems"));
    CHECK(text.find("rdmad_problems") < text.find("rdmad_device_info"));
    CHECK(render_prometheus(host(), facts()).find("rdmad_problems") == std::string::npos);
}

TEST_CASE("rdmad.prom: equal inputs give equal bytes; a label value is escaped") {
    CHECK(render_prometheus(host(), facts()) == render_prometheus(host(), facts()));
    CHECK(escape_label_value(R"(a"b\c)"
                             "\n") == R"(a\"b\\c\n)");
    HostState empty;
    const std::string text = render_prometheus(empty, facts());
    // Families without samples are left out, HELP and all.
    CHECK(text.find("rdmad_port_info") == std::string::npos);
    CHECK(has_line(text, R"(rdmad_state{state="running"} 1)"));
}

TEST_CASE("rdmad.prom: every sample of an object names it in full, whatever its name holds") {
    // The kept samples leave out the object's first label and put it back when the file is
    // assembled; a name with an escaped quote, a backslash, a ',', a '}' or a control byte
    // must come back as append_label() escaped it, on every series of that object.
    HostState inv;
    PortState p = roce_port();
    p.netdev = "e\x01}";
    auto d = device("mlx\"5,\\}\x01", "mlx5_core", "mlx5", {p});
    inv.devices[d.syspath] = d;
    LinkState l;
    l.index = 7;
    l.name = p.netdev;
    l.rdma_capable = "yes";
    inv.links[l.index] = l;
    const std::string text = render_prometheus(inv, facts());
    const std::string dev = std::string(R"(device="mlx\"5,\\})") + "\x01\"";
    CHECK(has_line(text, "rdmad_device_info{" + dev +
                             R"(,kernel_driver="mlx5_core",provider="mlx5",node_type="CA"} 1)"));
    CHECK(has_line(text, "rdmad_device_provider_installed{" + dev + "} 1"));
    CHECK(has_line(text, "rdmad_port_in_sync{" + dev + R"(,port="1"} 0)"));
    CHECK(has_line(text, "rdmad_port_pfc_no_drop{" + dev + R"(,port="1",priority="3"} 1)"));
    CHECK(has_line(text, "rdmad_netdev_rdma_capable{device=\"e\x01}\",state=\"yes\"} 1"));
    CHECK(has_line(text, "rdmad_netdev_rdma_capable{device=\"e\x01}\",state=\"no\"} 0"));
    // Kept per object, the same bytes.
    Inventory inventory;
    inventory.replace(inv);
    PrometheusRenderer renderer;
    CHECK(renderer.render(inventory, facts()) == text);
}

TEST_CASE("RoCE v2 routable: a RoCE v2 GID that is not link-local") {
    PortState p = roce_port();
    CHECK(has_routable_roce_v2_gid(p));
    p.gids = {{1, kLinkLocal, "RoCE v2", ""}, {2, kIpv4, "IB/RoCE v1", ""}};
    CHECK(!has_routable_roce_v2_gid(p));
}

// ---- NFD ------------------------------------------------------------------------------------

namespace {

// Kubernetes label rules, written out: the name part of a key is 1-63 characters, alphanumeric
// at both ends, [-_.A-Za-z0-9] between; a value is empty or the same. NFD prefixes a name
// without "/" with feature.node.kubernetes.io/.
bool k8s_name(const std::string& s) {
    static const std::regex re("^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$");
    return s.size() <= 63 && std::regex_match(s, re);
}
bool k8s_value(const std::string& s) {
    return s.empty() || k8s_name(s);
}

std::map<std::string, std::string> labels_of(const std::string& text) {
    std::map<std::string, std::string> out;
    for (const auto& line : lines_of(text)) {
        if (line.empty() || line[0] == '#')
            continue;
        const auto eq = line.find('=');
        REQUIRE(eq != std::string::npos);
        out[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return out;
}

} // namespace

TEST_CASE("NFD labels: usable ports per transport, providers, sync, the agreed GID index") {
    const auto labels = labels_of(render_nfd_labels(host(), facts()));
    const std::map<std::string, std::string> want = {
        // mlx5_1 port 1: ACTIVE InfiniBand; mlx5_0 port 1: ACTIVE RoCE with v2 GIDs; mlx4_0's
        // ports are DOWN and its provider is missing.
        {"rdmad.infiniband", "true"},  {"rdmad.infiniband.ports", "1"},
        {"rdmad.roce-v2", "true"},     {"rdmad.roce-v2.ports", "1"},
        {"rdmad.iwarp.ports", "0"},    {"rdmad.providers-installed", "false"},
        {"rdmad.in-sync", "false"}, // mlx5_0 port 1 asks for priority 4 too
        {"rdmad.roce-gid-index", "3"},
    };
    CHECK(labels == want);
    for (const auto& [name, value] : labels) {
        INFO(name << "=" << value);
        CHECK(k8s_name(name));
        CHECK(k8s_value(value));
        CHECK(valid_label_name(name));
        CHECK(valid_label_value(value));
        CHECK(("feature.node.kubernetes.io/" + name).size() <= 253 + 1 + 63);
    }
}

TEST_CASE("NFD labels: no GID index when usable RoCE v2 ports disagree or one has none") {
    HostState inv = host();
    auto second = device("mlx5_2", "mlx5_core", "mlx5", {roce_port()});
    second.ports[0].gids[3].index = 5; // its IPv4 RoCE v2 GID sits at index 5
    second.ports[0].recommended_gid = doctor::recommend_gid(second.ports[0], nullptr);
    REQUIRE(second.ports[0].recommended_gid.index == 5);
    inv.devices[second.syspath] = second;
    auto labels = labels_of(render_nfd_labels(inv, facts()));
    CHECK(labels.at("rdmad.roce-v2.ports") == "2");
    CHECK(!labels.count("rdmad.roce-gid-index"));
    PortState& p = inv.devices[second.syspath].ports[0];
    p.gids.resize(2); // link-local GIDs only
    p.recommended_gid = doctor::recommend_gid(p, nullptr);
    labels = labels_of(render_nfd_labels(inv, facts()));
    CHECK(!labels.count("rdmad.roce-gid-index"));
}

TEST_CASE("NFD labels: a host in sync, without devices, and with a configuration error") {
    HostState inv;
    ManagerFacts f = facts();
    auto labels = labels_of(render_nfd_labels(inv, f));
    CHECK(labels.at("rdmad.in-sync") == "true");
    CHECK(!labels.count("rdmad.providers-installed"));
    CHECK(!labels.count("rdmad.infiniband"));
    CHECK(labels.at("rdmad.infiniband.ports") == "0");
    f.config_errors = 1;
    CHECK(labels_of(render_nfd_labels(inv, f)).at("rdmad.in-sync") == "false");
}

TEST_CASE("NFD file: comment, RFC 3339 UTC expiry directive, labels") {
    const std::string file = render_nfd("rdmad.in-sync=true\n", 1764590400);
    const auto lines = lines_of(file);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].rfind("# ", 0) == 0);
    CHECK(lines[0].find("+") == std::string::npos); // a comment, not a directive
    CHECK(lines[1] == "# +expiry-time=2025-12-01T12:00:00Z");
    CHECK(lines[2] == "rdmad.in-sync=true");
}

TEST_CASE("exports at 1,024 devices: NFD far below its 64 KiB limit, every label still valid") {
    HostState inv;
    for (int i = 0; i < 1024; ++i) {
        auto d = device("mlx5_" + std::to_string(i), "mlx5_core", "mlx5", {roce_port()});
        d.syspath += std::to_string(i);
        inv.devices[d.syspath] = d;
    }
    const std::string nfd = render_nfd(render_nfd_labels(inv, facts()), 1764590400);
    CHECK(nfd.size() < 1024);
    CHECK(labels_of(nfd).at("rdmad.roce-v2.ports") == "1024");
    const std::string prom = render_prometheus(inv, facts());
    // Each device: info and provider series; its RoCE port: info, in-sync, 4 PFC statuses, 8
    // actual and 8 desired priorities, 2 RoCE versions, routable GID and GID index.
    size_t samples = 0;
    for (const auto& line : lines_of(prom))
        samples += line[0] != '#';
    CHECK(samples == 3 /*state*/ + 1 /*config errors*/ + 1 /*reconcile*/ +
                         1024 * (2 + 1 + 1 + 4 + 8 + 8 + 2 + 1 + 1));
}

TEST_CASE("rdmad.prom streamed at 1,024 devices: the pieces write() gives join into the whole "
          "render, each about 64 KiB, none the whole file") {
    HostState host_state;
    for (int i = 0; i < 1024; ++i) {
        auto d = device("mlx5_" + std::to_string(i), "mlx5_core", "mlx5", {roce_port()});
        d.syspath += std::to_string(i);
        host_state.devices[d.syspath] = d;
    }
    Inventory inv;
    PrometheusRenderer renderer;
    renderer.changed(inv.replace(host_state));
    renderer.update(inv, facts());
    std::vector<std::string> pieces;
    renderer.write(inv, [&](std::string_view piece) { pieces.emplace_back(piece); });
    std::string joined;
    for (const auto& p : pieces)
        joined += p;
    const std::string whole = render_prometheus(inv.state(), facts());
    CHECK(joined == whole);
    // A piece goes out once it holds 64 KiB; one object's samples of one family (a few
    // hundred bytes here) may run past that.
    REQUIRE(pieces.size() >= whole.size() / (64 * 1024));
    for (size_t i = 0; i < pieces.size(); ++i) {
        CHECK(pieces[i].size() < 64 * 1024 + 1024);
        if (i + 1 < pieces.size())
            CHECK(pieces[i].size() >= 64 * 1024);
    }
    // render() is update() and the joined pieces: nothing changed, the same bytes.
    CHECK(renderer.render(inv, facts()) == whole);
}

TEST_CASE("rdmad.prom rendered at write: a new generation when a change names what the file "
          "shows, none for other properties, and the text equals a whole render after adds, "
          "changes, renames and removals") {
    Inventory inv;
    ChangeSet all = inv.replace(host());
    PrometheusRenderer renderer;
    renderer.changed(all);
    CHECK(renderer.render(inv, facts()) == render_prometheus(inv.state(), facts()));
    const uint64_t first = renderer.generation();
    CHECK(first == 1);

    // One port of one device changes: a new text.
    DeviceState mlx5 = *inv.device_named("mlx5_0");
    mlx5.ports[0].in_sync = true;
    mlx5.ports[0].pfc.priorities = {3, 4};
    renderer.changed(inv.put_device(mlx5));
    const std::string after_port = renderer.render(inv, facts());
    CHECK(after_port == render_prometheus(inv.state(), facts()));
    CHECK(has_line(after_port, "rdmad_port_in_sync{device=\"mlx5_0\",port=\"1\"} 1"));
    CHECK(has_line(after_port,
                   "rdmad_port_pfc_no_drop{device=\"mlx5_0\",port=\"1\",priority=\"4\"} 1"));
    CHECK(renderer.generation() == first + 1);

    // Nothing changed: the same bytes, the same generation; nor does a change of a property
    // rdmad.prom does not show (the firmware version, a port's rate) move it.
    const uint64_t generation = renderer.generation();
    CHECK(renderer.render(inv, facts()) == after_port);
    CHECK(renderer.generation() == generation);
    mlx5.firmware_version = "16.99.9999";
    mlx5.ports[0].rate = "100 Gb/sec (4X EDR)";
    renderer.changed(inv.put_device(mlx5));
    CHECK(renderer.render(inv, facts()) == after_port);
    CHECK(renderer.generation() == generation);

    // The Manager's facts: a new state is a new text, the same facts are not.
    ManagerFacts degraded = facts();
    degraded.state = "degraded";
    CHECK(renderer.render(inv, degraded) == render_prometheus(inv.state(), degraded));
    CHECK(renderer.generation() == generation + 1);
    CHECK(renderer.render(inv, degraded) == render_prometheus(inv.state(), degraded));
    CHECK(renderer.generation() == generation + 1);

    // A rename moves the device in the name order (mlx5_1 -> mlx5_9 sorts after mlx5_0,
    // mlx4_0); a removal and a new netdev.
    DeviceState ib = *inv.device_named("mlx5_1");
    ib.name = "mlx5_9";
    ChangeSet step = inv.put_device(ib);
    step.merge(inv.remove_device(inv.device_named("mlx4_0")->syspath));
    LinkState ib0;
    ib0.index = 7;
    ib0.name = "ib0";
    ib0.rdma_capable = "yes";
    step.merge(inv.put_link(ib0));
    step.merge(inv.remove_link(1));
    renderer.changed(step);
    const std::string after = renderer.render(inv, facts());
    CHECK(renderer.generation() == generation + 2);
    CHECK(after == render_prometheus(inv.state(), facts()));
    CHECK(after.find("mlx4_0") == std::string::npos);
    CHECK(after.find("device=\"lo\"") == std::string::npos);
    CHECK(after.find("device=\"mlx5_0\"") < after.find("device=\"mlx5_9\""));
    CHECK(has_line(after, "rdmad_netdev_rdma_capable{device=\"ib0\",state=\"yes\"} 1"));

    // invalidate() (a new Inventory, a lost change set): a new generation.
    renderer.invalidate();
    CHECK(renderer.render(inv, facts()) == after);
    CHECK(renderer.generation() == generation + 3);
}

TEST_CASE("rdmad.prom: a netdev's RdmaCapable or Name makes a new text, its other properties do "
          "not") {
    Inventory inv;
    PrometheusRenderer renderer;
    renderer.changed(inv.replace(host()));
    renderer.update(inv, facts());
    const uint64_t first = renderer.generation();

    LinkState eth = *inv.link(4);
    eth.mtu = 9000;
    eth.operstate = "down";
    renderer.changed(inv.put_link(eth));
    CHECK(renderer.render(inv, facts()) == render_prometheus(inv.state(), facts()));
    CHECK(renderer.generation() == first);

    eth.rdma_capable = "module-not-loaded";
    renderer.changed(inv.put_link(eth));
    const std::string capable = renderer.render(inv, facts());
    CHECK(renderer.generation() == first + 1);
    CHECK(capable == render_prometheus(inv.state(), facts()));
    CHECK(has_line(
        capable,
        "rdmad_netdev_rdma_capable{device=\"enp1s0f0np0\",state=\"module-not-loaded\"} 1"));

    // Renamed after lo: the netdevs' order changes with the name.
    eth.name = "zz0";
    renderer.changed(inv.put_link(eth));
    const std::string renamed = renderer.render(inv, facts());
    CHECK(renderer.generation() == first + 2);
    CHECK(renamed == render_prometheus(inv.state(), facts()));
    CHECK(renamed.find("device=\"lo\"") < renamed.find("device=\"zz0\""));
    CHECK(renamed.find("rdmad_netdev_rdma_capable{device=\"enp1s0f0np0\"") == std::string::npos);
}

TEST_CASE("rdmad.prom rendered at write equals a whole render after every step of 300 random "
          "puts, renames and removals of devices and netdevs, and a new text is a new "
          "generation") {
    std::mt19937 rng(20261201); // fixed: a failure replays
    Inventory inv;
    PrometheusRenderer renderer;
    const HostState start = host();
    std::string previous; // the text of the step before ("" before the first render)
    int same_text = 0;    // steps with a new generation and the same text
    std::vector<DeviceState> pool;
    for (const auto& [_, d] : start.devices)
        pool.push_back(d);
    for (int step = 0; step < 300; ++step) {
        CAPTURE(step);
        ChangeSet cs;
        const int what = static_cast<int>(rng() % 6);
        DeviceState d = pool[rng() % pool.size()];
        d.syspath += std::to_string(rng() % 4); // up to 12 devices
        if (what == 0) {
            cs = inv.remove_device(d.syspath);
        } else if (what == 1) {
            LinkState l;
            l.index = static_cast<int32_t>(1 + rng() % 8);
            l.name = "eth" + std::to_string(rng() % 5); // names shared: order by ifindex
            l.rdma_capable = rng() % 2 ? "yes" : "no";
            cs = inv.put_link(l);
        } else if (what == 2) {
            cs = inv.remove_link(static_cast<int32_t>(1 + rng() % 8));
        } else {
            d.name = "dev" + std::to_string(rng() % 6); // renames reorder; names may repeat
            if (!d.ports.empty()) {
                d.ports[0].in_sync = rng() % 2;
                d.ports[0].pfc.priorities = {static_cast<uint8_t>(rng() % 8)};
            }
            if (rng() % 3 == 0)
                d.problems.push_back({"port-not-active", "warning", "port 1 is DOWN"});
            cs = inv.put_device(d);
        }
        renderer.changed(cs);
        const uint64_t generation = renderer.generation();
        const std::string text = renderer.render(inv, facts());
        REQUIRE(text == render_prometheus(inv.state(), facts()));
        // A new text is a new generation (ExportWriter rewrites on it). The converse holds
        // for the properties rdmad.prom does not show (the test case above); one it shows may
        // change without changing the text (the priorities of a port whose PFC is unread).
        if (text != previous)
            REQUIRE(renderer.generation() != generation);
        else if (renderer.generation() != generation)
            ++same_text;
        previous = text;
    }
    // Such a step writes the same bytes again: it stays rare (the PFC priorities of a
    // port whose PFC is not read).
    CHECK(same_text * 20 < 300);
}

TEST_CASE("rdmad.prom: a name that is not UTF-8 is written as valid UTF-8, as node-exporter "
          "refuses the whole file over one invalid label value") {
    // Linux takes any byte but '/', ':', whitespace and NUL in a netdev name (dev_valid_name(),
    // net/core/dev.c); the exposition format's label values are UTF-8, and expfmt's text
    // parser fails the file on one that is not (prometheus/common expfmt/text_parse.go,
    // startLabelValue(): model.LabelValue.IsValid()).
    HostState inv = host();
    LinkState l;
    l.index = 9;
    l.name = "bad\xff\xfe";
    l.rdma_capable = "no";
    inv.links[l.index] = l;
    PortState p = roce_port();
    p.netdev = "e\xc3"; // a truncated two-byte sequence
    auto d = device("mlx5_\x80", "mlx5_core", "mlx5", {p});
    inv.devices[d.syspath] = d;
    const std::string text = render_prometheus(inv, facts());
    CHECK(valid_utf8(text) == text);
    CHECK(has_line(text, R"(rdmad_netdev_rdma_capable{device="bad??",state="no"} 1)"));
    CHECK(has_line(text, R"(rdmad_device_provider_installed{device="mlx5_?"} 1)"));
    CHECK(text.find(R"(netdev="e?")") != std::string::npos);
    // Valid UTF-8 beyond ASCII is kept as it is.
    l.name = "n\xc3\xa9t";
    inv.links[l.index] = l;
    CHECK(has_line(render_prometheus(inv, facts()),
                   "rdmad_netdev_rdma_capable{device=\"n\xc3\xa9t\",state=\"no\"} 1"));
}

TEST_CASE("rdmad.prom rendered at write: each field a sample reads, changed alone by a put, "
          "makes a new generation when it makes a new text") {
    using Mutation = std::pair<const char*, std::function<void(DeviceState&)>>;
    auto p0 = [](DeviceState& d) -> PortState& { return d.ports[0]; };
    const std::vector<Mutation> mutations = {
        {"name", [](DeviceState& d) { d.name = "mlx5_9"; }},
        {"kernel_driver", [](DeviceState& d) { d.kernel_driver = "mlx5_other"; }},
        {"provider", [](DeviceState& d) { d.provider = "other"; }},
        {"node_type", [](DeviceState& d) { d.node_type = "RNIC"; }},
        {"provider_installed", [](DeviceState& d) { d.provider_installed = false; }},
        {"problem", [](DeviceState& d) { d.problems.push_back({"x-code", "warning", "t"}); }},
        {"problem severity",
         [](DeviceState& d) { d.problems.back().severity = "error"; }},
        {"details-only problem",
         [](DeviceState& d) { d.problems.push_back({"y-unknown", "info", "t", {}, "", 0, true}); }},
        {"sriov numvfs", [](DeviceState& d) { d.sriov.numvfs = 4; }},
        {"sriov totalvfs", [](DeviceState& d) { d.sriov.totalvfs = 8; }},
        {"desired numvfs", [](DeviceState& d) { d.desired_sriov_numvfs = 2; }},
        {"port added", [](DeviceState& d) {
             PortState q = d.ports[0];
             q.number = 2;
             d.ports.push_back(q);
         }},
        {"netdev", [&](DeviceState& d) { p0(d).netdev = "eth9"; }},
        {"in_sync", [&](DeviceState& d) { p0(d).in_sync = !p0(d).in_sync; }},
        {"port_type", [&](DeviceState& d) { p0(d).port_type = "auto (eth)"; }},
        {"desired_port_type", [&](DeviceState& d) { p0(d).desired_port_type = "ib"; }},
        {"next_boot", [&](DeviceState& d) { p0(d).next_boot_port_type = "eth"; }},
        {"pending", [&](DeviceState& d) { p0(d).pending_port_type = "eth"; }},
        {"pfc priorities", [&](DeviceState& d) { p0(d).pfc.priorities = {3, 5}; }},
        {"pfc trust", [&](DeviceState& d) { p0(d).pfc.trust = "dscp"; }},
        {"pfc dscp map", [&](DeviceState& d) { p0(d).pfc.dscp_map = {{26, 3}}; }},
        {"pfc status", [&](DeviceState& d) { p0(d).pfc.status = PfcActual::Status::failed; }},
        {"desired no-drop", [&](DeviceState& d) { p0(d).desired_pfc_no_drop = {1}; }},
        {"desired trust", [&](DeviceState& d) { p0(d).desired_trust = "pcp"; }},
        {"desired dscp", [&](DeviceState& d) { p0(d).desired_dscp_priority = {{48, 6}}; }},
        {"rdma_cm mode", [&](DeviceState& d) { p0(d).rdma_cm.roce_mode = "RoCE v2"; }},
        {"rdma_cm tos", [&](DeviceState& d) { p0(d).rdma_cm.tos = 106; }},
        {"desired rdma_cm mode",
         [&](DeviceState& d) { p0(d).desired_rdma_cm_roce_mode = "IB/RoCE v1"; }},
        {"desired rdma_cm tos", [&](DeviceState& d) { p0(d).desired_rdma_cm_tos = 32; }},
        {"roce versions", [&](DeviceState& d) { p0(d).roce_versions = {"v2"}; }},
        {"gids", [&](DeviceState& d) { p0(d).gids.resize(2); }},
        {"recommended index", [&](DeviceState& d) { p0(d).recommended_gid.index = 7; }},
        {"recommended none", [&](DeviceState& d) { p0(d).recommended_gid = {}; }},
        {"link layer", [&](DeviceState& d) { p0(d).link_layer = "InfiniBand"; }},
        {"transport", [&](DeviceState& d) { p0(d).transport = "InfiniBand"; }},
    };
    Inventory inv;
    inv.replace(host());
    PrometheusRenderer renderer;
    std::string previous = renderer.render(inv, facts());
    DeviceState d = *inv.device_named("mlx5_0");
    for (const auto& [what, mutate] : mutations) {
        CAPTURE(what);
        mutate(d);
        const uint64_t generation = renderer.generation();
        renderer.changed(inv.put_device(d));
        d = *inv.device(d.syspath);
        const std::string text = renderer.render(inv, facts());
        CHECK(text != previous); // each mutation shows
        if (text != previous)
            CHECK(renderer.generation() != generation);
        previous = text;
    }
}
