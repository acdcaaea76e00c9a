// SPDX-License-Identifier: MIT
//
// One test case per fixture host: every key of <host>.expected.json must be what rdmad serves.
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

using namespace it;

namespace {

// Path of the device whose PCIAddress is `bdf` ("/" when bdf is empty).
std::string device_path_by_pci(const json& described, const std::string& bdf) {
    if (bdf.empty())
        return "/";
    for (auto& d : described["Devices"])
        if (d.value("PCIAddress", "") == bdf)
            return d.value("Path", "");
    return "<no device on " + bdf + ">";
}

std::string device_path_by_name(const json& described, const std::string& name) {
    if (name.empty())
        return "/";
    for (auto& d : described["Devices"])
        if (d.value("Name", "") == name)
            return d.value("Path", "");
    return "<no device named " + name + ">";
}

std::string link_path_by_name(const json& described, const std::string& name) {
    if (name.empty())
        return "/";
    for (auto& l : described["Links"])
        if (l.value("Name", "") == name)
            return l.value("Path", "");
    return "<no link named " + name + ">";
}

const json* find_named(const json& arr, const char* key, const json& value) {
    for (auto& o : arr)
        if (o.contains(key) && o[key] == value)
            return &o;
    return nullptr;
}

void check_value(const std::string& object, const std::string& key, const json& actual,
                 const json& expected) {
    INFO(object << " " << key << ": expected " << expected.dump() << ", D-Bus says "
                << actual.dump());
    CHECK(actual == expected);
}

// Property Get on the object must agree with Describe() for these properties.
void check_get_agrees(Client& client, const std::string& path, const std::string& iface,
                      const json& described_obj, const std::vector<std::string>& props) {
    for (auto& prop : props) {
        json got = variant_json(client.get(path, iface, prop));
        json want = described_obj.contains(prop) ? described_obj[prop] : json();
        INFO("Get(" << iface << "." << prop << ") on " << path << " = " << got.dump()
                    << ", Describe() says " << want.dump());
        CHECK(got == want);
    }
}

void check_host(const std::string& host) {
    const auto exp_path = expected_file(host);
    INFO("host " << host);
    // A host without expectations is a broken fixture, not something to skip.
    REQUIRE(fs::exists(exp_path));
    const json expected = json::parse(read_file(exp_path));
    REQUIRE(expected.contains("devices"));

    Rig rig(host);
    const json& d = rig.described;
    CHECK(d.value("State", "") == "running");

    // ListDevices names exactly the expected devices, with Describe()'s paths.
    std::set<std::string> want_names, got_names;
    for (auto& [name, _] : expected["devices"].items())
        want_names.insert(name);
    auto listed = rig.client->list_devices();
    for (auto& [name, path] : listed) {
        got_names.insert(name);
        CHECK(path == device_path_by_name(d, name));
    }
    CHECK(got_names == want_names);
    CHECK(std::is_sorted(listed.begin(), listed.end()));
    std::set<std::string> described_names;
    for (auto& dev : d["Devices"])
        described_names.insert(dev.value("Name", ""));
    CHECK(described_names == want_names);

    for (auto& [name, edev] : expected["devices"].items()) {
        const json* dev = find_named(d["Devices"], "Name", name);
        INFO("device " << name);
        REQUIRE(dev != nullptr);
        const std::string obj = host + " device " + name;
        for (auto& [key, want] : edev.items()) {
            if (key == "ports")
                continue;
            if (key == "PhysicalFunction")
                check_value(obj, key, (*dev)[key],
                            device_path_by_pci(d, want.get<std::string>()));
            else
                check_value(obj, key, dev->contains(key) ? (*dev)[key] : json(), want);
        }
        const json eports = edev.value("ports", json::object()); // items() of a temporary dangles
        for (auto& [num, eport] : eports.items()) {
            const json* port = find_named((*dev)["Ports"], "Number", std::stoul(num));
            INFO("port " << num);
            REQUIRE(port != nullptr);
            const std::string pobj = obj + " port " + num;
            for (auto& [key, want] : eport.items()) {
                if (key == "GIDCount")
                    check_value(pobj, "GIDs (count)",
                                json((*port).value("GIDs", json::array()).size()), want);
                else if (key == "Netdev")
                    check_value(pobj, "Link (Netdev " + want.get<std::string>() + ")",
                                (*port)["Link"], link_path_by_name(d, want.get<std::string>()));
                else
                    check_value(pobj, key, port->contains(key) ? (*port)[key] : json(), want);
            }
        }

        // GetDeviceByName and property Get agree with Describe().
        const std::string path = (*dev)["Path"].get<std::string>();
        CHECK(rig.client->device_by_name(name) == path);
        check_get_agrees(*rig.client, path, "org.rdmad1.Device", *dev,
                         {"Name", "NodeType", "NodeGUID", "FirmwareVersion", "HCAType",
                          "PCIAddress", "KernelDriver", "Provider", "ProviderInstalled",
                          "ProviderPackage", "VerbsDevice", "PhysicalFunction", "Links"});
        json port_paths = json::array();
        for (auto& p : (*dev)["Ports"])
            port_paths.push_back(p["Path"]);
        {
            json got = variant_json(rig.client->get(path, "org.rdmad1.Device", "Ports"));
            INFO("Get(Ports) on " << path);
            CHECK(got == port_paths);
        }
        if (!(*dev)["Ports"].empty()) {
            const json& p = (*dev)["Ports"][0];
            check_get_agrees(*rig.client, p["Path"].get<std::string>(), "org.rdmad1.Port", p,
                             {"Number", "State", "PhysicalState", "LinkLayer", "Transport",
                              "RoCEVersions", "RateGbps", "Rate", "LID", "SMLID", "Link"});
        }
    }

    const json elinks = expected.value("links", json::object());
    for (auto& [name, elink] : elinks.items()) {
        const json* link = find_named(d["Links"], "Name", name);
        INFO("link " << name);
        REQUIRE(link != nullptr);
        const std::string obj = host + " link " + name;
        for (auto& [key, want] : elink.items()) {
            if (key == "RdmaDevice")
                check_value(obj, key + " (" + want.get<std::string>() + ")", (*link)[key],
                            device_path_by_name(d, want.get<std::string>()));
            else
                check_value(obj, key, link->contains(key) ? (*link)[key] : json(), want);
        }
        const std::string path = (*link)["Path"].get<std::string>();
        CHECK(rig.client->link_by_name(name) == path);
        check_get_agrees(*rig.client, path, "org.rdmad1.Link", *link,
                         {"Name", "Index", "PCIAddress", "Driver", "OperState", "RdmaCapable",
                          "RdmaDevice", "Hint"});
    }
    rig.stop_daemon();
}

} // namespace

// The hosts of tests/fixtures/hosts when this suite was written. A new host gets a line here.
#define HOST_CASE(h) \
    TEST_CASE("host " h, "[host]") { check_host(h); }

HOST_CASE("azure-hpc-mlx4")
HOST_CASE("gcm-dgx-a100")
HOST_CASE("gpud-h100-cx7-bf3")
HOST_CASE("hwloc-cx3-ib")
HOST_CASE("hwloc-qib-ib")
HOST_CASE("node-exporter-i40iw-mlx4")
HOST_CASE("procfs-hfi1-mlx4-mlx5")
HOST_CASE("constructed-bnxt-re")
HOST_CASE("constructed-cxgb4-iwarp")
HOST_CASE("constructed-efa")
HOST_CASE("constructed-irdma-iwarp")
HOST_CASE("constructed-irdma-unbound")
HOST_CASE("constructed-mlx5-aux-unbound")
HOST_CASE("constructed-mlx5-lag")
HOST_CASE("constructed-mlx5-roce")
HOST_CASE("constructed-renamed")
HOST_CASE("constructed-rxe")
HOST_CASE("constructed-sriov")
HOST_CASE("constructed-uverbs-shuffle")
HOST_CASE("constructed-doctor")

TEST_CASE("every fixture host has a test case and expectations", "[host]") {
    const std::set<std::string> listed = {"azure-hpc-mlx4",
                                          "gcm-dgx-a100",
                                          "gpud-h100-cx7-bf3",
                                          "hwloc-cx3-ib",
                                          "hwloc-qib-ib",
                                          "node-exporter-i40iw-mlx4",
                                          "procfs-hfi1-mlx4-mlx5",
                                          "constructed-bnxt-re",
                                          "constructed-cxgb4-iwarp",
                                          "constructed-efa",
                                          "constructed-irdma-iwarp",
                                          "constructed-irdma-unbound",
                                          "constructed-mlx5-aux-unbound",
                                          "constructed-mlx5-lag",
                                          "constructed-mlx5-roce",
                                          "constructed-renamed",
                                          "constructed-rxe",
                                          "constructed-sriov",
                                          "constructed-uverbs-shuffle",
                                          "constructed-doctor"};
    for (auto& e : fs::directory_iterator(fixtures_dir())) {
        if (e.path().extension() != ".umockdev")
            continue;
        const std::string host = e.path().stem().string();
        INFO("host file " << e.path() << " has no HOST_CASE in tests/integration/test_hosts.cpp");
        CHECK(listed.count(host) == 1);
        INFO("and needs " << expected_file(host));
        CHECK(fs::exists(expected_file(host)));
    }
}
