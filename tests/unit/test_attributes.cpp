// SPDX-License-Identifier: MIT
//
// Unit tests for the sysfs attribute parsers (daemon/inventory/attributes.hpp). Formats: kernel
// drivers/infiniband/core/sysfs.c as summarised in DOMAIN.md §3; the odd values come from the
// recorded fixtures in /work/shared/fixtures/recorded (named per test).
#include "inventory/attributes.hpp"

#include <catch2/catch.hpp>

#include <iterator>
#include <string>
#include <utility>

using namespace rdmad;

// ---- trim_attribute -------------------------------------------------------------------------

TEST_CASE("trimming removes the kernel's newline, trailing spaces and leading blanks only") {
    CHECK(trim_attribute("4: ACTIVE\n") == "4: ACTIVE");
    CHECK(trim_attribute("4: ACTIVE") == "4: ACTIVE");
    CHECK(trim_attribute("  Phy Test \t\r\n") == "Phy Test");
    CHECK(trim_attribute("usNIC UDP") == "usNIC UDP"); // inner spaces are kept
    CHECK(trim_attribute("") == "");
    CHECK(trim_attribute("\n\n ") == "");
}

// ---- rate -----------------------------------------------------------------------------------

TEST_CASE("a rate reads the leading number of \"%d%s Gb/sec (%dX%s)\"") {
    CHECK(parse_rate_gbps("100 Gb/sec (4X EDR)\n") == 100.0);
    CHECK(parse_rate_gbps("56 Gb/sec (4X FDR)\n") == 56.0);
    CHECK(parse_rate_gbps("200 Gb/sec (4X HDR)\n") == 200.0);
    CHECK(parse_rate_gbps("25 Gb/sec (1X EDR)\n") == 25.0);
}

TEST_CASE("a half-integer SDR rate keeps its .5") {
    CHECK(parse_rate_gbps("2.5 Gb/sec (1X SDR)\n") == 2.5);
}

TEST_CASE("a rate without the trailing newline parses the same") {
    // the gpud H100 capture stores rate files without "\n"
    CHECK(parse_rate_gbps("400 Gb/sec (4X NDR)") == 400.0);
    CHECK(parse_rate_gbps("400 Gb/sec (4X NDR)\n") == 400.0);
}

TEST_CASE("the old kernel's \"0 GB/sec\" for an unset rate is zero, not an error") {
    CHECK(parse_rate_gbps("0 GB/sec\n") == 0.0);
}

TEST_CASE("a rate without a speed name after the width still parses") {
    // hwloc-cx3 capture: "10 Gb/sec (4X)"
    CHECK(parse_rate_gbps("10 Gb/sec (4X)\n") == 10.0);
}

TEST_CASE("a rate with trailing spaces parses the same") {
    CHECK(parse_rate_gbps("100 Gb/sec (4X EDR)   \n") == 100.0);
}

TEST_CASE("an empty or non-numeric rate is unknown, not zero") {
    CHECK_FALSE(parse_rate_gbps("").has_value());
    CHECK_FALSE(parse_rate_gbps("\n").has_value());
    CHECK_FALSE(parse_rate_gbps("N/A").has_value());
    CHECK_FALSE(parse_rate_gbps("Gb/sec").has_value());
}

TEST_CASE("a negative rate is refused instead of reported") {
    CHECK_FALSE(parse_rate_gbps("-5 Gb/sec").has_value());
    CHECK_FALSE(parse_rate_gbps("-0 Gb/sec").has_value());
    CHECK_FALSE(parse_rate_gbps("+5 Gb/sec").has_value());
}

TEST_CASE("nan and inf never leak out of a rate") {
    CHECK_FALSE(parse_rate_gbps("nan Gb/sec").has_value());
    CHECK_FALSE(parse_rate_gbps("NaN").has_value());
    CHECK_FALSE(parse_rate_gbps("inf").has_value());
    CHECK_FALSE(parse_rate_gbps("infinity Gb/sec").has_value());
}

TEST_CASE("an exponent or overflowing rate is refused, not read as infinity or its mantissa") {
    CHECK_FALSE(parse_rate_gbps("1e999 Gb/sec").has_value());
    CHECK_FALSE(parse_rate_gbps("1e2 Gb/sec").has_value());
    CHECK_FALSE(parse_rate_gbps(std::string(400, '9') + " Gb/sec").has_value());
}

TEST_CASE("a rate glued to other text is refused") {
    CHECK_FALSE(parse_rate_gbps("10x Gb/sec").has_value());
    CHECK_FALSE(parse_rate_gbps(".5 Gb/sec").has_value());
}

// ---- state / phys_state ---------------------------------------------------------------------

TEST_CASE("a port state yields the kernel's name") {
    CHECK(parse_port_state("4: ACTIVE\n") == "ACTIVE");
    CHECK(parse_port_state("1: DOWN\n") == "DOWN");
    CHECK(parse_port_state("5: ACTIVE_DEFER\n") == "ACTIVE_DEFER");
    CHECK(parse_port_state("0: NOP") == "NOP");
}

TEST_CASE("a port state without the number passes through trimmed, empty stays empty") {
    CHECK(parse_port_state("ACTIVE\n") == "ACTIVE");
    CHECK(parse_port_state("") == "");
    CHECK(parse_port_state(" \n") == "");
}

TEST_CASE("a phys_state yields LinkUp, not \"5: LinkUp\"") {
    CHECK(parse_phys_state("5: LinkUp\n") == "LinkUp");
    CHECK(parse_phys_state("5: LinkUp") == "LinkUp");
}

TEST_CASE("a phys_state name with a space is kept whole") {
    CHECK(parse_phys_state("7: Phy Test\n") == "Phy Test");
}

TEST_CASE("the Azure capture's \"0: <unknown>\" phys_state reads as <unknown>") {
    CHECK(parse_phys_state("0: <unknown>\n") == "<unknown>");
}

TEST_CASE("a phys_state whose name does not match its number passes the name through") {
    // procfs-hfi1-mlx4-mlx5 capture holds a state value in phys_state: "4: ACTIVE"
    CHECK(parse_phys_state("4: ACTIVE\n") == "ACTIVE");
}

TEST_CASE("text without \"N: \" is not mistaken for a numbered attribute") {
    CHECK(parse_port_state("ACTIVE") == "ACTIVE");
    CHECK(parse_port_state("4:ACTIVE") == "4:ACTIVE");
    CHECK(parse_port_state(": ACTIVE") == ": ACTIVE");
    CHECK(parse_port_state("-1: ACTIVE") == "-1: ACTIVE");
    CHECK(parse_port_state("x4: ACTIVE") == "x4: ACTIVE");
    CHECK(parse_port_state("99999999999: ACTIVE") == "99999999999: ACTIVE");
    CHECK(parse_port_state("") == "");
}

// ---- node_type ------------------------------------------------------------------------------

TEST_CASE("node_type names CA and RNIC from the number") {
    CHECK(parse_node_type("1: CA\n") == "CA");
    CHECK(parse_node_type("2: switch\n") == "switch");
    CHECK(parse_node_type("3: router\n") == "router");
    CHECK(parse_node_type("4: RNIC\n") == "RNIC");
}

TEST_CASE("node_type 5, 6, 7 use the kernel's usNIC, usNIC UDP and unspecified spelling") {
    CHECK(parse_node_type("5: usNIC\n") == "usNIC");
    CHECK(parse_node_type("6: usNIC UDP\n") == "usNIC UDP");
    CHECK(parse_node_type("7: unspecified\n") == "unspecified");
}

TEST_CASE("the node_type number wins over a name that disagrees") {
    CHECK(parse_node_type("7: whatever") == "unspecified");
    CHECK(parse_node_type("1: ca") == "CA");
}

TEST_CASE("an out-of-range node_type keeps the kernel's <unknown>") {
    CHECK(parse_node_type("9: <unknown>\n") == "<unknown>");
    CHECK(parse_node_type("0: <unknown>") == "<unknown>");
    CHECK(parse_node_type("garbage\n") == "garbage");
    CHECK(parse_node_type("") == "");
}

// ---- GUIDs ----------------------------------------------------------------------------------

TEST_CASE("a node GUID in the kernel's form is returned as is") {
    CHECK(parse_guid("0002:c903:0031:78f0\n") == std::optional<std::string>("0002:c903:0031:78f0"));
    CHECK(parse_guid("0011:7500:0077:cfc8") == std::optional<std::string>("0011:7500:0077:cfc8"));
}

TEST_CASE("an upper-case GUID is normalised so equal GUIDs compare equal") {
    CHECK(parse_guid("0002:C903:0031:78F0") == std::optional<std::string>("0002:c903:0031:78f0"));
}

TEST_CASE("a GUID with short groups is zero-padded to the kernel's %04x form") {
    CHECK(parse_guid("2:c903:31:78f0") == std::optional<std::string>("0002:c903:0031:78f0"));
}

TEST_CASE("the all-zero GUID is a valid value, not an absent one") {
    CHECK(parse_guid("0000:0000:0000:0000\n") == std::optional<std::string>("0000:0000:0000:0000"));
}

TEST_CASE("the anonymised capture holding the text node_guid is not a GUID") {
    // gcm-dgx-a100 capture: node_guid/sys_image_guid files literally hold their own names
    CHECK_FALSE(parse_guid("node_guid").has_value());
    CHECK_FALSE(parse_guid("sys_image_guid\n").has_value());
}

TEST_CASE("a GUID with the wrong number or size of groups is refused") {
    CHECK_FALSE(parse_guid("").has_value());
    CHECK_FALSE(parse_guid("0002:c903:0031").has_value());
    CHECK_FALSE(parse_guid("0002:c903:0031:78f0:0000").has_value());
    CHECK_FALSE(parse_guid("0002:c903:00031:78f0").has_value());
    CHECK_FALSE(parse_guid("0002::0031:78f0").has_value());
    CHECK_FALSE(parse_guid("0002:c903:0031:78f0:").has_value());
    CHECK_FALSE(parse_guid("0002:c903:0031:78fg").has_value());
    // two GUIDs glued together, as a capture without newlines concatenates them
    CHECK_FALSE(parse_guid("0a7f:bc12:45ef:d23b0002:c903:00f9:bfa0").has_value());
}

// ---- GIDs -----------------------------------------------------------------------------------

TEST_CASE("an all-zero GID is an empty table entry: an empty Gid, shown as \"\"") {
    const auto gid = parse_gid("0000:0000:0000:0000:0000:0000:0000:0000\n");
    REQUIRE(gid.has_value());
    CHECK(gid->empty());
    CHECK(gid->text() == "");
    CHECK(*gid == Gid());
}

TEST_CASE("a link-local GID with a zero interface id is a real entry, not an empty one") {
    const auto gid = parse_gid("fe80:0000:0000:0000:0000:0000:0000:0000\n");
    REQUIRE(gid.has_value());
    CHECK_FALSE(gid->empty());
    CHECK(gid->text() == "fe80:0000:0000:0000:0000:0000:0000:0000");
}

TEST_CASE("a full GID is kept as its 16 bytes and shown as the kernel printed it") {
    // The kernel's "%pI6" (Documentation/ABI/stable/sysfs-class-infiniband, gids/N): a RoCE
    // link-local GID from a MAC, and an IPv4-mapped GID for 10.0.0.1.
    const auto link_local = parse_gid("fe80:0000:0000:0000:0202:c9ff:fe00:0001\n");
    REQUIRE(link_local.has_value());
    CHECK(link_local->bytes() ==
          Gid::Bytes{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x02, 0xc9, 0xff, 0xfe, 0x00, 0x00, 0x01});
    CHECK(link_local->text() == "fe80:0000:0000:0000:0202:c9ff:fe00:0001");
    const auto mapped = parse_gid("0000:0000:0000:0000:0000:ffff:0a00:0001");
    REQUIRE(mapped.has_value());
    CHECK(mapped->bytes() ==
          Gid::Bytes{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x0a, 0x00, 0x00, 0x01});
    CHECK(mapped->text() == "0000:0000:0000:0000:0000:ffff:0a00:0001");
}

TEST_CASE("an upper-case GID reads as the same bytes and is shown in lower case") {
    const auto gid = parse_gid("FE80:0000:0000:0000:0202:C9FF:FE00:00AB");
    REQUIRE(gid.has_value());
    CHECK(gid->text() == "fe80:0000:0000:0000:0202:c9ff:fe00:00ab");
    CHECK(*gid == *Gid::parse("fe80:0000:0000:0000:0202:c9ff:fe00:00ab"));
}

TEST_CASE("GIDs order as their kernel texts do") {
    const char* texts[] = {
        "0000:0000:0000:0000:0000:ffff:0a00:0001", "0000:0000:0000:0000:0000:ffff:0a00:0002",
        "fe80:0000:0000:0000:0202:c9ff:fe00:0001", "fe80:0000:0000:0000:f202:c9ff:fe00:0001"};
    for (size_t i = 0; i + 1 < std::size(texts); ++i) {
        CHECK(*Gid::parse(texts[i]) < *Gid::parse(texts[i + 1]));
        CHECK(std::string(texts[i]) < std::string(texts[i + 1]));
    }
}

TEST_CASE("a compressed GID is refused because the kernel never prints one") {
    CHECK_FALSE(parse_gid("fe80::1").has_value());
    CHECK_FALSE(parse_gid("::").has_value());
}

TEST_CASE("a GID with seven groups or short groups is refused") {
    CHECK_FALSE(parse_gid("fe80:0000:0000:0000:0202:c9ff:fe00").has_value());
    CHECK_FALSE(parse_gid("fe80:0:0:0:202:c9ff:fe00:1").has_value());
    CHECK_FALSE(parse_gid("fe80:0000:0000:0000:0202:c9ff:fe00:000g").has_value());
    CHECK_FALSE(parse_gid("fe80-0000-0000-0000-0202-c9ff-fe00-0001").has_value());
    CHECK_FALSE(parse_gid("").has_value());
}

// ---- gid_attrs/types ------------------------------------------------------------------------

TEST_CASE("GID types are the two strings libibverbs matches, with or without newline") {
    CHECK(parse_gid_type("IB/RoCE v1\n") == std::optional<std::string>("IB/RoCE v1"));
    CHECK(parse_gid_type("IB/RoCE v1") == std::optional<std::string>("IB/RoCE v1"));
    CHECK(parse_gid_type("RoCE v2\n") == std::optional<std::string>("RoCE v2"));
    CHECK(parse_gid_type("RoCE v2") == std::optional<std::string>("RoCE v2"));
}

TEST_CASE("a GID type in another case is refused, as libibverbs refuses it") {
    CHECK_FALSE(parse_gid_type("roce v2").has_value());
    CHECK_FALSE(parse_gid_type("RoCE v3").has_value());
    CHECK_FALSE(parse_gid_type("RoCEv2").has_value());
    CHECK_FALSE(parse_gid_type("").has_value());
}

// ---- lid ------------------------------------------------------------------------------------

TEST_CASE("a LID is read as the kernel's 0x-prefixed hex") {
    CHECK(parse_lid("0x0\n") == std::optional<uint16_t>(0));
    CHECK(parse_lid("0x12\n") == std::optional<uint16_t>(18));
    CHECK(parse_lid("0x3a4") == std::optional<uint16_t>(0x3a4)); // hwloc-cx3 capture
    CHECK(parse_lid("0xffff") == std::optional<uint16_t>(0xffff));
}

TEST_CASE("a LID above 16 bits is refused instead of truncated") {
    CHECK_FALSE(parse_lid("0x10000").has_value());
    CHECK_FALSE(parse_lid("0xffffffffffffffff").has_value());
}

TEST_CASE("a LID without 0x is refused rather than guessed as decimal or hex") {
    CHECK_FALSE(parse_lid("12").has_value());
    CHECK_FALSE(parse_lid("0x").has_value());
    CHECK_FALSE(parse_lid("0x-1").has_value());
    CHECK_FALSE(parse_lid("0x12 junk").has_value());
    CHECK_FALSE(parse_lid("lid").has_value()); // gcm-dgx-a100 anonymised capture
    CHECK_FALSE(parse_lid("").has_value());
}

// ---- link_layer -----------------------------------------------------------------------------

TEST_CASE("link_layer passes the kernel's names through without the newline") {
    CHECK(parse_link_layer("InfiniBand\n") == "InfiniBand");
    CHECK(parse_link_layer("Ethernet") == "Ethernet");
    CHECK(parse_link_layer("Unknown\n") == "Unknown");
    CHECK(parse_link_layer("") == "");
}

// ---- mlx4_portN -----------------------------------------------------------------------------

TEST_CASE("mlx4 port types read back as ib, eth and the auto forms") {
    CHECK(parse_mlx4_port_type("ib\n") == std::optional<std::string>("ib"));
    CHECK(parse_mlx4_port_type("eth\n") == std::optional<std::string>("eth"));
    CHECK(parse_mlx4_port_type("auto (eth)\n") == std::optional<std::string>("auto (eth)"));
    CHECK(parse_mlx4_port_type("auto (ib)") == std::optional<std::string>("auto (ib)"));
}

TEST_CASE("a link_layer name in mlx4_portN is not a port type") {
    CHECK_FALSE(parse_mlx4_port_type("Ethernet").has_value());
    CHECK_FALSE(parse_mlx4_port_type("auto").has_value()); // writable, never read back
    CHECK_FALSE(parse_mlx4_port_type("IB").has_value());
    CHECK_FALSE(parse_mlx4_port_type("").has_value());
}

// ---- PCI addresses --------------------------------------------------------------------------

TEST_CASE("a full lower-case PCI address is recognised") {
    CHECK(is_pci_address("0000:3b:00.0"));
    CHECK(is_pci_address("0003:01:00.0"));
    CHECK(is_pci_address("0000:ba:1f.7"));
}

TEST_CASE("a PCI address without its domain is not one (mlx4.conf needs DDDD:BB:DD.F)") {
    CHECK_FALSE(is_pci_address("3b:00.0"));
}

TEST_CASE("a PCI function above 7 is not a PCI address") {
    CHECK_FALSE(is_pci_address("0000:3b:00.8"));
    CHECK_FALSE(is_pci_address("0000:3b:20.0")); // slot is 5 bits
}

TEST_CASE("an upper-case PCI address is not what the kernel names devices") {
    CHECK_FALSE(is_pci_address("0000:3B:00.0"));
}

TEST_CASE("a VMD domain above 0xffff is a PCI address, a zero-padded one is not") {
    CHECK(is_pci_address("10000:e1:00.0"));
    CHECK_FALSE(is_pci_address("00000:e1:00.0"));
}

TEST_CASE("PCI address checks do not trim or accept near misses") {
    CHECK_FALSE(is_pci_address(""));
    CHECK_FALSE(is_pci_address("0000:3b:00.0\n"));
    CHECK_FALSE(is_pci_address("0000:3b:00"));
    CHECK_FALSE(is_pci_address("0000:3b:00.00"));
    CHECK_FALSE(is_pci_address("0000-3b:00.0"));
    CHECK_FALSE(is_pci_address("pci0000:80"));
}

TEST_CASE("ports count from 1 on a CA and an RNIC, and a switch has port 0 only") {
    // kernel include/rdma/ib_verbs.h rdma_start_port()/rdma_end_port()
    CHECK_FALSE(is_port_number("CA", 0));
    CHECK(is_port_number("CA", 1));
    CHECK(is_port_number("CA", 2));
    CHECK_FALSE(is_port_number("RNIC", 0));
    CHECK(is_port_number("RNIC", 1));
    CHECK(is_port_number("switch", 0));
    CHECK_FALSE(is_port_number("switch", 1));
    CHECK_FALSE(is_port_number("", 0)); // node_type unreadable: not a switch we know of
}
