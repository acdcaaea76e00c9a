// SPDX-License-Identifier: MIT
//
// Unit tests for the verbs provider and package mapping (daemon/inventory/provider.hpp).
// Facts: DOMAIN.md §4.4 (rdma-core providers/*/CMakeLists.txt, redhat/rdma-core.spec,
// debian/control, suse/rdma-core.spec) and §5; os-release(5). The os-release texts below are
// written from what each distribution ships in /etc/os-release (/usr/lib/os-release).
#include "inventory/provider.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace rdmad;

namespace {

using Strings = std::vector<std::string>;

constexpr const char* kDebian12 = R"OS(PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
)OS";

constexpr const char* kUbuntu2204 = R"OS(PRETTY_NAME="Ubuntu 22.04.3 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.3 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=jammy
)OS";

constexpr const char* kRhel73 = R"OS(NAME="Red Hat Enterprise Linux Server"
VERSION="7.3 (Maipo)"
ID="rhel"
ID_LIKE="fedora"
VERSION_ID="7.3"
PRETTY_NAME="Red Hat Enterprise Linux Server 7.3 (Maipo)"
ANSI_COLOR="0;31"
CPE_NAME="cpe:/o:redhat:enterprise_linux:7.3:GA:server"
HOME_URL="https://www.redhat.com/"
BUG_REPORT_URL="https://bugzilla.redhat.com/"

REDHAT_BUGZILLA_PRODUCT="Red Hat Enterprise Linux 7"
REDHAT_BUGZILLA_PRODUCT_VERSION=7.3
REDHAT_SUPPORT_PRODUCT="Red Hat Enterprise Linux"
REDHAT_SUPPORT_PRODUCT_VERSION="7.3"
)OS";

constexpr const char* kRhel92 = R"OS(NAME="Red Hat Enterprise Linux"
VERSION="9.2 (Plow)"
ID="rhel"
ID_LIKE="fedora"
VERSION_ID="9.2"
PLATFORM_ID="platform:el9"
PRETTY_NAME="Red Hat Enterprise Linux 9.2 (Plow)"
ANSI_COLOR="0;31"
LOGO="fedora-logo-icon"
CPE_NAME="cpe:/o:redhat:enterprise_linux:9::baseos"
HOME_URL="https://www.redhat.com/"
DOCUMENTATION_URL="https://access.redhat.com/documentation/en-us/red_hat_enterprise_linux/9/"
BUG_REPORT_URL="https://bugzilla.redhat.com/"

REDHAT_BUGZILLA_PRODUCT="Red Hat Enterprise Linux 9"
REDHAT_BUGZILLA_PRODUCT_VERSION=9.2
REDHAT_SUPPORT_PRODUCT="Red Hat Enterprise Linux"
REDHAT_SUPPORT_PRODUCT_VERSION="9.2"
)OS";

constexpr const char* kRocky9 = R"OS(NAME="Rocky Linux"
VERSION="9.3 (Blue Onyx)"
ID="rocky"
ID_LIKE="rhel centos fedora"
VERSION_ID="9.3"
PLATFORM_ID="platform:el9"
PRETTY_NAME="Rocky Linux 9.3 (Blue Onyx)"
ANSI_COLOR="0;32"
LOGO="fedora-logo-icon"
CPE_NAME="cpe:/o:rocky:rocky:9::baseos"
HOME_URL="https://rockylinux.org/"
BUG_REPORT_URL="https://bugs.rockylinux.org/"
SUPPORT_END="2032-05-31"
ROCKY_SUPPORT_PRODUCT="Rocky-Linux-9"
ROCKY_SUPPORT_PRODUCT_VERSION="9.3"
REDHAT_SUPPORT_PRODUCT="Rocky Linux"
REDHAT_SUPPORT_PRODUCT_VERSION="9.3"
)OS";

constexpr const char* kFedora39 = R"OS(NAME="Fedora Linux"
VERSION="39 (Workstation Edition)"
ID=fedora
VERSION_ID=39
VERSION_CODENAME=""
PLATFORM_ID="platform:f39"
PRETTY_NAME="Fedora Linux 39 (Workstation Edition)"
ANSI_COLOR="0;38;2;60;110;180"
LOGO=fedora-logo-icon
CPE_NAME="cpe:/o:fedoraproject:fedora:39"
DEFAULT_HOSTNAME="fedora"
HOME_URL="https://fedoraproject.org/"
DOCUMENTATION_URL="https://docs.fedoraproject.org/en-US/fedora/f39/system-administrators-guide/"
SUPPORT_URL="https://ask.fedoraproject.org/"
BUG_REPORT_URL="https://bugzilla.redhat.com/"
REDHAT_BUGZILLA_PRODUCT="Fedora"
REDHAT_BUGZILLA_PRODUCT_VERSION=39
REDHAT_SUPPORT_PRODUCT="Fedora"
REDHAT_SUPPORT_PRODUCT_VERSION=39
SUPPORT_END=2024-11-12
VARIANT="Workstation Edition"
VARIANT_ID=workstation
)OS";

constexpr const char* kLeap155 = R"OS(NAME="openSUSE Leap"
VERSION="15.5"
ID="opensuse-leap"
ID_LIKE="suse opensuse"
VERSION_ID="15.5"
PRETTY_NAME="openSUSE Leap 15.5"
ANSI_COLOR="0;32"
CPE_NAME="cpe:/o:opensuse:leap:15.5"
BUG_REPORT_URL="https://bugs.opensuse.org"
HOME_URL="https://www.opensuse.org/"
DOCUMENTATION_URL="https://en.opensuse.org/Portal:Leap"
LOGO="distributor-logo-Leap"
)OS";

constexpr const char* kSles15 = R"OS(NAME="SLES"
VERSION="15-SP5"
VERSION_ID="15.5"
PRETTY_NAME="SUSE Linux Enterprise Server 15 SP5"
ID="sles"
ID_LIKE="suse"
ANSI_COLOR="0;32"
CPE_NAME="cpe:/o:suse:sles:15:sp5"
DOCUMENTATION_URL="https://documentation.suse.com/"
)OS";

DistroFamily family_of(const char* text) {
    return distro_family(parse_os_release(text));
}

} // namespace

// ---- provider_for_driver ----------------------------------------------------------------

TEST_CASE("each RDMA parent driver maps to the rdma-core provider that serves it") {
    // DOMAIN.md §4.4: provider = the .driver name from providers/*/CMakeLists.txt.
    CHECK(provider_for_driver("mlx5_core") == "mlx5");
    CHECK(provider_for_driver("mlx4_core") == "mlx4");
    CHECK(provider_for_driver("cxgb4") == "cxgb4");
    CHECK(provider_for_driver("bnxt_en") == "bnxt_re");
    CHECK(provider_for_driver("efa") == "efa");
}

TEST_CASE("Intel E810 (ice) and X722 (i40e) need irdma, not the removed i40iw provider") {
    // DOMAIN.md §4.4: i40iw was removed in rdma-core v37, replaced by irdma.
    CHECK(provider_for_driver("ice") == "irdma");
    CHECK(provider_for_driver("i40e") == "irdma");
}

TEST_CASE("hfi1 and qib map to the hfi1verbs and ipathverbs providers, not their module names") {
    CHECK(provider_for_driver("hfi1") == "hfi1verbs");
    CHECK(provider_for_driver("ib_qib") == "ipathverbs");
}

TEST_CASE("vmw_pvrdma's provider is the .driver name vmw_pvrdma, not its .name pvrdma") {
    // DOMAIN.md §4.3: vmw_pvrdma.driver holds "driver vmw_pvrdma" although .name is "pvrdma".
    CHECK(provider_for_driver("vmw_pvrdma") == "vmw_pvrdma");
}

TEST_CASE("software RDMA drivers rdma_rxe and siw map to the rxe and siw providers") {
    CHECK(provider_for_driver("rdma_rxe") == "rxe");
    CHECK(provider_for_driver("siw") == "siw");
}

TEST_CASE("enic (usNIC) has no rdma-core provider") {
    // DOMAIN.md §4.4: none in rdma-core; "enic no longer has a userspace verbs driver".
    CHECK(provider_for_driver("enic") == "");
}

TEST_CASE("a NIC driver without RDMA, or an unknown or empty driver, has no provider") {
    CHECK(provider_for_driver("virtio_net") == "");
    CHECK(provider_for_driver("bnx2") == "");
    CHECK(provider_for_driver("") == "");
    CHECK(provider_for_driver("MLX5_CORE") == "");
}

// ---- parse_os_release -------------------------------------------------------------------

TEST_CASE("os-release values lose their double or single quotes") {
    auto os = parse_os_release("ID=\"rhel\"\nVERSION_ID='9.2'\nID_LIKE=\"fedora\"\n");
    CHECK(os.id == "rhel");
    CHECK(os.version_id == "9.2");
    CHECK(os.id_like == Strings{"fedora"});
}

TEST_CASE("unquoted os-release values are taken as they are") {
    auto os = parse_os_release("ID=fedora\nVERSION_ID=39\n");
    CHECK(os.id == "fedora");
    CHECK(os.version_id == "39");
    CHECK(os.id_like.empty());
}

TEST_CASE("an ID_LIKE list is split on spaces, in order") {
    auto os = parse_os_release("ID_LIKE=\"rhel centos fedora\"\n");
    CHECK(os.id_like == Strings{"rhel", "centos", "fedora"});
}

TEST_CASE("backslash escapes inside double quotes are resolved") {
    // os-release(5): shell special characters must be escaped with backslashes.
    auto os = parse_os_release("ID=\"my\\\"distro\"\nVERSION_ID=\"1\\\\2\"\n");
    CHECK(os.id == "my\"distro");
    CHECK(os.version_id == "1\\2");
}

TEST_CASE("comments, blank lines and garbage lines in os-release are skipped") {
    auto os = parse_os_release("# ID=wrong\n"
                               "\n"
                               "this line has no equals sign\n"
                               "=novalue\n"
                               "   # indented comment ID=alsowrong\n"
                               "ID=debian\n"
                               "VERSION_ID=\"12\"\n"
                               "garbage\x01\xff\n");
    CHECK(os.id == "debian");
    CHECK(os.version_id == "12");
    CHECK(os.id_like.empty());
}

TEST_CASE("os-release with CRLF line ends and no final newline still parses") {
    auto os = parse_os_release("ID=ubuntu\r\nID_LIKE=debian\r\nVERSION_ID=\"22.04\"");
    CHECK(os.id == "ubuntu");
    CHECK(os.id_like == Strings{"debian"});
    CHECK(os.version_id == "22.04");
}

TEST_CASE("empty os-release text gives empty fields") {
    auto os = parse_os_release("");
    CHECK(os.id.empty());
    CHECK(os.id_like.empty());
    CHECK(os.version_id.empty());
}

TEST_CASE("Debian 12's os-release parses to id debian, version 12, no ID_LIKE") {
    auto os = parse_os_release(kDebian12);
    CHECK(os.id == "debian");
    CHECK(os.version_id == "12");
    CHECK(os.id_like.empty());
}

TEST_CASE("Ubuntu 22.04's os-release parses to id ubuntu like debian") {
    auto os = parse_os_release(kUbuntu2204);
    CHECK(os.id == "ubuntu");
    CHECK(os.version_id == "22.04");
    CHECK(os.id_like == Strings{"debian"});
}

TEST_CASE("RHEL 7.3's os-release with a blank line and REDHAT_* keys parses") {
    auto os = parse_os_release(kRhel73);
    CHECK(os.id == "rhel");
    CHECK(os.version_id == "7.3");
    CHECK(os.id_like == Strings{"fedora"});
}

TEST_CASE("Rocky 9 and openSUSE Leap parse their multi-word ID_LIKE") {
    auto rocky = parse_os_release(kRocky9);
    CHECK(rocky.id == "rocky");
    CHECK(rocky.version_id == "9.3");
    CHECK(rocky.id_like == Strings{"rhel", "centos", "fedora"});
    auto leap = parse_os_release(kLeap155);
    CHECK(leap.id == "opensuse-leap");
    CHECK(leap.version_id == "15.5");
    CHECK(leap.id_like == Strings{"suse", "opensuse"});
}

// ---- distro_family ----------------------------------------------------------------------

TEST_CASE("Debian and Ubuntu are the debian family") {
    CHECK(family_of(kDebian12) == DistroFamily::debian);
    CHECK(family_of(kUbuntu2204) == DistroFamily::debian);
}

TEST_CASE("RHEL 7.3 predates rdma-core and is rhel_legacy") {
    // DOMAIN.md §4.4: RHEL 7.0-7.3 had standalone provider packages; rdma-core came in 7.4.
    CHECK(family_of(kRhel73) == DistroFamily::rhel_legacy);
    CHECK(family_of("ID=\"rhel\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"7.0\"\n") ==
          DistroFamily::rhel_legacy);
    CHECK(family_of("ID=\"centos\"\nID_LIKE=\"rhel fedora\"\nVERSION_ID=\"7.2\"\n") ==
          DistroFamily::rhel_legacy);
}

TEST_CASE("RHEL 7.4 and later ship rdma-core and are rhel, not rhel_legacy") {
    CHECK(family_of("ID=\"rhel\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"7.4\"\n") == DistroFamily::rhel);
    CHECK(family_of("ID=\"rhel\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"7.9\"\n") == DistroFamily::rhel);
    // 7.10 would be minor 10, not "7.1".
    CHECK(family_of("ID=\"rhel\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"7.10\"\n") ==
          DistroFamily::rhel);
    CHECK(family_of(kRhel92) == DistroFamily::rhel);
}

TEST_CASE("Rocky 9 and Fedora 39 are the rhel family") {
    CHECK(family_of(kRocky9) == DistroFamily::rhel);
    CHECK(family_of(kFedora39) == DistroFamily::rhel);
}

TEST_CASE("openSUSE Leap and SLES are the suse family") {
    CHECK(family_of(kLeap155) == DistroFamily::suse);
    CHECK(family_of(kSles15) == DistroFamily::suse);
}

TEST_CASE("an unknown distribution or empty os-release is the unknown family") {
    CHECK(family_of("ID=arch\n") == DistroFamily::unknown);
    CHECK(family_of("ID=alpine\nVERSION_ID=3.19.0\n") == DistroFamily::unknown);
    CHECK(family_of("") == DistroFamily::unknown);
}

// ---- provider_package -------------------------------------------------------------------

TEST_CASE("on Debian/Ubuntu every provider comes from ibverbs-providers") {
    for (const char* p : {"mlx5", "mlx4", "cxgb4", "irdma", "bnxt_re", "efa", "rxe", "siw"})
        CHECK(provider_package(p, DistroFamily::debian) == "ibverbs-providers");
}

TEST_CASE("on RHEL >= 7.4 and Fedora every provider comes from libibverbs") {
    // DOMAIN.md §4.4/§7.7: RHEL 8+ has no libmlx5 package, only libibverbs' Provides.
    for (const char* p : {"mlx5", "mlx4", "cxgb4", "irdma", "bnxt_re", "efa", "rxe", "siw"})
        CHECK(provider_package(p, DistroFamily::rhel) == "libibverbs");
}

TEST_CASE("on RHEL 7.0-7.3 each provider has its own standalone package") {
    CHECK(provider_package("mlx5", DistroFamily::rhel_legacy) == "libmlx5");
    CHECK(provider_package("mlx4", DistroFamily::rhel_legacy) == "libmlx4");
    CHECK(provider_package("cxgb4", DistroFamily::rhel_legacy) == "libcxgb4");
    CHECK(provider_package("ocrdma", DistroFamily::rhel_legacy) == "libocrdma");
    CHECK(provider_package("hfi1verbs", DistroFamily::rhel_legacy) == "libhfi1");
    CHECK(provider_package("ipathverbs", DistroFamily::rhel_legacy) == "libipathverbs");
    CHECK(provider_package("mthca", DistroFamily::rhel_legacy) == "libmthca");
    CHECK(provider_package("rxe", DistroFamily::rhel_legacy) == "librxe");
}

TEST_CASE("on SUSE a shared provider needs libibverbs plus its .so.1 package") {
    // DOMAIN.md §4.4: SUSE splits mlx4/mlx5/efa/hns/mana/ionic .so.1 into lib<x>-1 / lib<x>1.
    CHECK(provider_package("mlx5", DistroFamily::suse) == "libibverbs libmlx5-1");
    CHECK(provider_package("mlx4", DistroFamily::suse) == "libibverbs libmlx4-1");
    CHECK(provider_package("efa", DistroFamily::suse) == "libibverbs libefa1");
    CHECK(provider_package("hns", DistroFamily::suse) == "libibverbs libhns1");
    CHECK(provider_package("mana", DistroFamily::suse) == "libibverbs libmana1");
    CHECK(provider_package("ionic", DistroFamily::suse) == "libibverbs libionic1");
}

TEST_CASE("on SUSE a plugin-only provider such as cxgb4 needs only libibverbs") {
    CHECK(provider_package("cxgb4", DistroFamily::suse) == "libibverbs");
    CHECK(provider_package("irdma", DistroFamily::suse) == "libibverbs");
    CHECK(provider_package("rxe", DistroFamily::suse) == "libibverbs");
}

TEST_CASE("on an unknown distribution the package to name is rdma-core") {
    CHECK(provider_package("mlx5", DistroFamily::unknown) == "rdma-core");
    CHECK(provider_package("cxgb4", DistroFamily::unknown) == "rdma-core");
}

TEST_CASE("no provider means no package to install, on every family") {
    for (auto f : {DistroFamily::debian, DistroFamily::rhel_legacy, DistroFamily::rhel,
                   DistroFamily::suse, DistroFamily::unknown})
        CHECK(provider_package("", f) == "");
}

TEST_CASE("the install command a provider problem names is the distribution's own") {
    CHECK(install_command(DistroFamily::debian, "ibverbs-providers") ==
          "apt install ibverbs-providers");
    CHECK(install_command(DistroFamily::rhel, "libibverbs") == "dnf install libibverbs");
    CHECK(install_command(DistroFamily::rhel_legacy, "libmlx5") == "yum install libmlx5");
    CHECK(install_command(DistroFamily::suse, "libibverbs libmlx5-1") ==
          "zypper install libibverbs libmlx5-1");
    CHECK(install_command(DistroFamily::unknown, "rdma-core") == "install rdma-core");
}
