// SPDX-License-Identifier: MIT
//
// driver_capabilities() (daemon/inventory/driver_capabilities.hpp): what a device's driver
// lets rdmad do, as rdmad.conf(5) and org.rdmad1(5) document it.
#include "inventory/driver_capabilities.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;

TEST_CASE("mlx4 switches its port type in sysfs and keeps PFC in a host-wide module option",
          "[capabilities]") {
    // ConnectX-3: mlx4_port<n>; mlx4_en pfctx/pfcrx in modprobe.d.
    const DriverCapabilities c = driver_capabilities("mlx4_core");
    CHECK(c.port_type == PortTypeSwitch::sysfs);
    CHECK(c.vpi());
    CHECK(c.host_wide_pfc_option);
}

TEST_CASE("mlx5 has its port type in firmware and no host-wide PFC option", "[capabilities]") {
    // ConnectX-4 and later: mstconfig LINK_TYPE_P<n>, PFC per netdev through DCB netlink.
    const DriverCapabilities c = driver_capabilities("mlx5_core");
    CHECK(c.port_type == PortTypeSwitch::firmware);
    CHECK(c.vpi());
    CHECK_FALSE(c.host_wide_pfc_option);
}

TEST_CASE("other drivers, the mlx4 Ethernet driver and no driver have no port type switch",
          "[capabilities]") {
    // mlx4_en is the netdev's driver, not the RDMA device's (device/driver is mlx4_core).
    for (const char* driver : {"irdma", "bnxt_en", "rdma_rxe", "hfi1", "mlx4_en", "mlx5_ib", ""}) {
        INFO(driver);
        const DriverCapabilities c = driver_capabilities(driver);
        CHECK(c.port_type == PortTypeSwitch::none);
        CHECK_FALSE(c.vpi());
        CHECK_FALSE(c.host_wide_pfc_option);
    }
}
