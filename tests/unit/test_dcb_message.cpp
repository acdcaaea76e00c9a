// SPDX-License-Identifier: MIT
//
// DCB netlink codec (daemon/actuators/dcb_message.hpp) against bytes captured from iproute2
// `dcb pfc`, `dcb app` and the kernel (tests/unit/data/dcb/*.txt, each with the command that
// produced it).
#include "actuators/dcb_message.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

using namespace rdmad::dcb;

namespace {

// __FILE__ is relative to the build directory under meson; find the data next to this file.
std::filesystem::path data_dir() {
    std::filesystem::path here = std::filesystem::path(__FILE__).parent_path() / "data" / "dcb";
    if (here.is_absolute() || std::filesystem::exists(here))
        return here;
    char exe[4096] = {};
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    REQUIRE(n > 0);
    // <build>/tests/unit-tests
    return std::filesystem::path(exe).parent_path().parent_path() / here;
}

Bytes load(const std::string& name) {
    std::ifstream in(data_dir() / name);
    REQUIRE(in.good());
    Bytes out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        std::istringstream words(line);
        std::string w;
        while (words >> w)
            out.push_back(static_cast<uint8_t>(std::stoul(w, nullptr, 16)));
    }
    REQUIRE(!out.empty());
    return out;
}

uint32_t u32_at(const Bytes& b, size_t off) {
    uint32_t v;
    std::memcpy(&v, b.data() + off, 4);
    return v;
}

// Sequence number and port id are the only per-run fields of a request.
void expect_same_but_seq(Bytes ours, Bytes theirs) {
    REQUIRE(ours.size() == theirs.size());
    std::memset(ours.data() + 8, 0, 8);
    std::memset(theirs.data() + 8, 0, 8);
    CHECK(ours == theirs);
}

std::span<const uint8_t> payload_of_first(const Bytes& datagram) {
    auto split = split_messages(datagram);
    REQUIRE(split.ok());
    return split.value->front().payload;
}

} // namespace

TEST_CASE("IEEE_GET request is byte for byte what iproute2 `dcb pfc show` sends") {
    Bytes theirs = load("ieee_get_request.txt");
    Bytes ours = build_ieee_get("rdmatest0", u32_at(theirs, 8), 0);
    CHECK(ours == theirs); // same seq, port 0 like iproute2: identical
    expect_same_but_seq(build_ieee_get("rdmatest0", 7, 99), theirs);
}

TEST_CASE("IEEE_SET PFC request is byte for byte what iproute2 `dcb pfc set prio-pfc 3:on 4:on` "
          "sends") {
    Bytes theirs = load("ieee_set_request.txt");
    // iproute2 read pfc_cap 8 (ieee_get_reply_pfc.txt) and set priorities 3 and 4.
    PfcState want;
    want.pfc_cap = 8;
    want.pfc_en = 0x18;
    Bytes ours = build_ieee_set_pfc("rdmatest0", want, u32_at(theirs, 8), 0);
    CHECK(ours == theirs);
    expect_same_but_seq(build_ieee_set_pfc("rdmatest0", want, 1, 1234), theirs);
}

TEST_CASE("IEEE_SET APP request is byte for byte what iproute2 `dcb app add dscp-prio 26:3 48:6` "
          "sends",
          "[dcb][app]") {
    Bytes theirs = load("ieee_set_app_request.txt");
    const std::vector<AppEntry> add = {{IEEE_8021QAZ_APP_SEL_DSCP, 3, 26},
                                       {IEEE_8021QAZ_APP_SEL_DSCP, 6, 48}};
    CHECK(build_ieee_set_app("rdmatest0", add, u32_at(theirs, 8), 0) == theirs);
    expect_same_but_seq(build_ieee_set_app("rdmatest0", add, 3, 77), theirs);
}

TEST_CASE("IEEE_DEL APP request is byte for byte what iproute2 `dcb app del dscp-prio 26:3` sends: "
          "RTM_SETDCB with DCB_CMD_IEEE_DEL, not an RTM_DELDCB",
          "[dcb][app]") {
    Bytes theirs = load("ieee_del_app_request.txt");
    const std::vector<AppEntry> del = {{IEEE_8021QAZ_APP_SEL_DSCP, 3, 26}};
    Bytes ours = build_ieee_del_app("rdmatest0", del, u32_at(theirs, 8), 0);
    CHECK(ours == theirs);
    CHECK(ours[4] == RTM_SETDCB);
    CHECK(ours[17] == DCB_CMD_IEEE_DEL);
}

TEST_CASE("mlnx_qos's 64-entry default DSCP map goes in one request, each entry a struct dcb_app "
          "in order",
          "[dcb][app]") {
    std::vector<AppEntry> all;
    for (uint16_t d = 0; d < 64; ++d)
        all.push_back({IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(d >> 3), d});
    Bytes b = build_ieee_set_app("eth0", all, 1, 0);
    // header 16 + dcbmsg 4 + IFNAME "eth0\0" 12 + IEEE nest 4 + table nest 4 + 64 * (4 + 4)
    REQUIRE(b.size() == 40 + 64 * 8);
    CHECK(u32_at(b, 0) == b.size());
    uint16_t table_len;
    std::memcpy(&table_len, b.data() + 36, 2);
    CHECK(table_len == 4 + 64 * 8);
    for (size_t i = 0; i < 64; ++i) {
        const size_t at = 40 + i * 8;
        CHECK(b[at + 2] == DCB_ATTR_IEEE_APP);
        CHECK(b[at + 4] == IEEE_8021QAZ_APP_SEL_DSCP);
        CHECK(b[at + 5] == i >> 3); // priority
        CHECK(b[at + 6] == i);      // protocol, host order (x86: low byte first)
    }
}

TEST_CASE("an APP request the kernel would refuse, or that says nothing, is not built",
          "[dcb][app]") {
    const std::vector<AppEntry> none;
    CHECK_THROWS_AS(build_ieee_set_app("eth0", none, 1, 0), std::invalid_argument);
    CHECK_THROWS_AS(build_ieee_del_app("eth0", none, 1, 0), std::invalid_argument);
    // DCB_APP_SEL_PCP (255) belongs in DCB_ATTR_DCB_APP: kernels 6.3+ answer EINVAL for it in
    // DCB_ATTR_IEEE_APP (dcbnl_app_selector_validate()). Selector 0 is no selector at all.
    const std::vector<AppEntry> pcp = {{255, 3, 3}};
    CHECK_THROWS_AS(build_ieee_set_app("eth0", pcp, 1, 0), std::invalid_argument);
    const std::vector<AppEntry> zero = {{0, 3, 26}};
    CHECK_THROWS_AS(build_ieee_del_app("eth0", zero, 1, 0), std::invalid_argument);
    const std::vector<AppEntry> too_many(max_app_entries + 1,
                                         AppEntry{IEEE_8021QAZ_APP_SEL_DSCP, 0, 0});
    CHECK_THROWS_AS(build_ieee_set_app("eth0", too_many, 1, 0), std::invalid_argument);
    const std::vector<AppEntry> fcoe = {{IEEE_8021QAZ_APP_SEL_ETHERTYPE, 3, 0x8906}};
    CHECK(build_ieee_set_app("eth0", fcoe, 1, 0).size() == 48);
    CHECK_THROWS_AS(build_ieee_set_app("", fcoe, 1, 0), std::invalid_argument);
}

TEST_CASE("the IEEE_DEL reply is a status byte under DCB_CMD_IEEE_DEL; a SET reply is not one",
          "[dcb][app]") {
    // dcbmsg{0, cmd}, DCB_ATTR_IEEE u8 status, as dcbnl_ieee_del()/dcbnl_ieee_set() put it
    auto reply = [](uint8_t cmd, uint8_t status) {
        return Bytes{0, cmd, 0, 0, 5, 0, DCB_ATTR_IEEE, 0, status, 0, 0, 0};
    };
    // 0xFE (-2): dcb_ieee_delapp() found no such entry
    auto r = parse_ieee_del_reply(reply(DCB_CMD_IEEE_DEL, 0xFE));
    REQUIRE(r.ok());
    CHECK(*r.value == ENOENT);
    CHECK(*parse_ieee_del_reply(reply(DCB_CMD_IEEE_DEL, 0)).value == 0);
    CHECK(!parse_ieee_set_reply(reply(DCB_CMD_IEEE_DEL, 0)).ok()); // it does not answer a SET
    auto wrong = parse_ieee_del_reply(reply(DCB_CMD_IEEE_SET, 0));
    CHECK(!wrong.ok());
    CHECK_THAT(wrong.error, Catch::Contains("expected 27"));
    auto missing = parse_ieee_del_reply(Bytes{0, DCB_CMD_IEEE_DEL, 0, 0});
    CHECK(!missing.ok());
    CHECK_THAT(missing.error, Catch::Contains("IEEE_DEL reply without"));
}

TEST_CASE("the counters read by IEEE_GET are not echoed back in an IEEE_SET") {
    PfcState s;
    s.pfc_en = 0x08;
    s.requests[3] = 1000;
    s.indications[3] = 7;
    s.delay = 0x1234;
    Bytes b = build_ieee_set_pfc("eth0", s, 1, 0);
    // header 16 + dcbmsg 4 + IFNAME "eth0\0" 12 + nest hdr 4 + PFC hdr 4 = struct at 40
    REQUIRE(b.size() == 40 + 136);
    CHECK(b[40 + 1] == 0x08);
    CHECK(b[40 + 4] == 0x34);
    CHECK(b[40 + 5] == 0x12);
    for (size_t i = 40 + 8; i < b.size(); ++i)
        CHECK(b[i] == 0);
}

TEST_CASE("a netdev name that DCB_ATTR_IFNAME cannot carry is refused before sending") {
    CHECK_THROWS_AS(build_ieee_get("", 1, 0), std::invalid_argument);
    CHECK_THROWS_AS(build_ieee_get("a-sixteen-chars!", 1, 0), std::invalid_argument);
    CHECK_THROWS_AS(build_ieee_get(std::string_view("et\0h0", 5), 1, 0), std::invalid_argument);
    CHECK(valid_ifname("fifteen-chars-x"));
}

TEST_CASE("the kernel's EOPNOTSUPP for a veth (captured) parses to errno 95") {
    for (const char* name : {"ieee_get_reply_eopnotsupp.txt", "ieee_set_reply_eopnotsupp.txt"}) {
        Bytes reply = load(name);
        auto split = split_messages(reply);
        REQUIRE(split.ok());
        REQUIRE(split.value->size() == 1);
        CHECK(split.value->front().type == NLMSG_ERROR);
        CHECK(split.value->front().flags == NLM_F_CAPPED);
        auto e = parse_nlmsg_error(split.value->front().payload);
        REQUIRE(e.ok());
        CHECK(*e.value == EOPNOTSUPP);
    }
}

TEST_CASE("the IEEE_GET reply iproute2 accepted decodes to pfc_cap 8, no priorities") {
    Bytes reply = load("ieee_get_reply_pfc.txt");
    auto split = split_messages(reply);
    REQUIRE(split.ok());
    REQUIRE(split.value->size() == 2); // reply + ACK
    CHECK(split.value->at(0).type == RTM_GETDCB);
    auto r = parse_ieee_get_reply(split.value->at(0).payload);
    REQUIRE(r.ok());
    REQUIRE(r.value->pfc);
    CHECK(r.value->pfc->pfc_cap == 8);
    CHECK(r.value->pfc->pfc_en == 0);
    CHECK(!r.value->dcbx);
    CHECK(!r.value->app); // this capture has no DCB_ATTR_IEEE_APP_TABLE
    auto ack = parse_nlmsg_error(split.value->at(1).payload);
    REQUIRE(ack.ok());
    CHECK(*ack.value == 0);
}

TEST_CASE("every truncation of a captured reply is refused or parsed, never read past the end") {
    for (const char* name : {"ieee_get_reply_pfc.txt", "ieee_get_reply_eopnotsupp.txt"}) {
        Bytes full = load(name);
        for (size_t len = 0; len < full.size(); ++len) {
            // A heap copy of exactly `len` bytes, so ASan sees any overread.
            Bytes cut(full.begin(), full.begin() + static_cast<long>(len));
            auto split = split_messages(cut);
            if (!split.ok())
                continue;
            for (const Message& m : *split.value) {
                (void)parse_nlmsg_error(m.payload);
                (void)parse_ieee_get_reply(m.payload);
                (void)parse_ieee_set_reply(m.payload);
                (void)parse_ieee_del_reply(m.payload);
            }
        }
    }
}

TEST_CASE("a truncated IEEE_GET reply is an error, not a short PFC state") {
    Bytes full = load("ieee_get_reply_pfc.txt");
    auto payload = payload_of_first(full);
    // Cut inside the struct ieee_pfc: the nest and PFC lengths now point past the end.
    auto r = parse_ieee_get_reply(payload.first(payload.size() - 10));
    CHECK(!r.ok());
    CHECK(!r.error.empty());
    CHECK(!split_messages(std::span<const uint8_t>(full).first(100)).ok());
    CHECK(!split_messages(std::span<const uint8_t>(full).first(3)).ok());
    CHECK(!split_messages({}).ok());
}

TEST_CASE("a PFC attribute shorter than struct ieee_pfc is refused") {
    // dcbmsg{0, IEEE_GET}, IEEE nest { PFC of 6 bytes (mlnx_qos-style short struct) }
    Bytes p = {0,
               DCB_CMD_IEEE_GET,
               0,
               0,
               16,
               0,
               DCB_ATTR_IEEE,
               0,
               12,
               0,
               DCB_ATTR_IEEE_PFC,
               0,
               8,
               0x18,
               0,
               0,
               0,
               0,
               0,
               0};
    auto r = parse_ieee_get_reply(p);
    CHECK(!r.ok());
    CHECK_THAT(r.error, Catch::Contains("136"));
}

TEST_CASE("the IEEE_SET status byte is the driver's errno truncated to 8 bits") {
    // dcbmsg{0, IEEE_SET}, DCB_ATTR_IEEE u8 0xEA (-22)
    Bytes p = {0, DCB_CMD_IEEE_SET, 0, 0, 5, 0, DCB_ATTR_IEEE, 0, 0xEA, 0, 0, 0};
    auto r = parse_ieee_set_reply(p);
    REQUIRE(r.ok());
    CHECK(*r.value == EINVAL);
    p[8] = 0;
    CHECK(*parse_ieee_set_reply(p).value == 0);
    Bytes none = {0, DCB_CMD_IEEE_SET, 0, 0};
    CHECK(!parse_ieee_set_reply(none).ok());
    Bytes wrong_cmd = {0, DCB_CMD_IEEE_GET, 0, 0, 5, 0, DCB_ATTR_IEEE, 0, 0, 0, 0, 0};
    CHECK(!parse_ieee_set_reply(wrong_cmd).ok());
}

TEST_CASE("IEEE_GET reply: the DCBX u8 after the nest; an empty one is refused") {
    Bytes empty = {0, DCB_CMD_IEEE_GET, 0, 0, 4, 0, DCB_ATTR_DCBX, 0};
    CHECK(!parse_ieee_get_reply(empty).ok());
    Bytes ieee = {
        0, DCB_CMD_IEEE_GET, 0, 0, 4, 0, DCB_ATTR_IEEE, 0, 5, 0, DCB_ATTR_DCBX, 0, 0x0a, 0, 0, 0};
    auto i = parse_ieee_get_reply(ieee);
    REQUIRE(i.ok());
    CHECK(!i.value->pfc);
    CHECK(i.value->dcbx == uint8_t{0x0a});
}

TEST_CASE("an NLMSG_ERROR shorter than struct nlmsgerr, or with a positive error, is refused") {
    Bytes shortp = {0xa1, 0xff, 0xff, 0xff};
    CHECK(!parse_nlmsg_error(shortp).ok());
    Bytes positive(20, 0);
    positive[0] = 5;
    CHECK(!parse_nlmsg_error(positive).ok());
}

namespace {

void put16(Bytes& b, uint16_t v) {
    b.push_back(static_cast<uint8_t>(v & 0xff));
    b.push_back(static_cast<uint8_t>(v >> 8));
}

/// One attribute (struct nlattr + payload + padding to 4), as the kernel's nla_put() lays it.
Bytes nla(uint16_t type, const Bytes& payload) {
    Bytes b;
    put16(b, static_cast<uint16_t>(NLA_HDRLEN + payload.size()));
    put16(b, type);
    b.insert(b.end(), payload.begin(), payload.end());
    while (b.size() % 4)
        b.push_back(0);
    return b;
}

/// struct dcb_app {selector, priority, protocol (host order)}.
Bytes app(uint8_t selector, uint8_t priority, uint16_t protocol) {
    Bytes b = {selector, priority};
    put16(b, protocol);
    return b;
}

Bytes cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

/// An IEEE_GET reply payload as dcbnl_ieee_fill() lays it: dcbmsg, IFNAME, IEEE { PFC with
/// pfc_en, APP_TABLE { `table` } }.
Bytes reply_with_table(uint8_t cmd, uint8_t pfc_en, const Bytes& table) {
    struct ieee_pfc pfc {};
    pfc.pfc_cap = 8;
    pfc.pfc_en = pfc_en;
    Bytes raw(sizeof pfc);
    std::memcpy(raw.data(), &pfc, sizeof pfc);
    Bytes name = {'e', 'n', 's', '1', 'f', '0', 'n', 'p', '0', 0};
    return cat({{0, cmd, 0, 0},
                nla(DCB_ATTR_IFNAME, name),
                nla(DCB_ATTR_IEEE,
                    cat({nla(DCB_ATTR_IEEE_PFC, raw), nla(DCB_ATTR_IEEE_APP_TABLE, table)}))});
}

} // namespace

TEST_CASE("IEEE_GET reply: the APP table's IEEE_APP entries in order, others skipped",
          "[dcb][app]") {
    // dcb app add dev ens1f0np0 dscp-prio 26:3 46:5 ethtype-prio 0x8906:3 (FCoE), and a
    // DCB_ATTR_DCB_APP (type 2, kernel 6.3+) pcp-prio entry that is not ours.
    Bytes table = cat({nla(DCB_ATTR_IEEE_APP, app(IEEE_8021QAZ_APP_SEL_DSCP, 3, 26)),
                       nla(DCB_ATTR_IEEE_APP, app(IEEE_8021QAZ_APP_SEL_DSCP, 5, 46)),
                       nla(DCB_ATTR_IEEE_APP, app(IEEE_8021QAZ_APP_SEL_ETHERTYPE, 3, 0x8906)),
                       nla(2, app(255, 1, 1))});
    auto r = parse_ieee_get_reply(reply_with_table(DCB_CMD_IEEE_GET, 0x08, table));
    REQUIRE(r.ok());
    REQUIRE(r.value->pfc);
    CHECK(r.value->pfc->pfc_en == 0x08);
    REQUIRE(r.value->app);
    CHECK(*r.value->app == std::vector<AppEntry>{{5, 3, 26}, {5, 5, 46}, {1, 3, 0x8906}});

    auto empty = parse_ieee_get_reply(reply_with_table(DCB_CMD_IEEE_GET, 0x08, {}));
    REQUIRE(empty.ok());
    REQUIRE(empty.value->app);
    CHECK(empty.value->app->empty());
}

TEST_CASE("IEEE notification: the APP table comes with the PFC state", "[dcb][app]") {
    Bytes table = nla(DCB_ATTR_IEEE_APP, app(IEEE_8021QAZ_APP_SEL_DSCP, 3, 26));
    auto n = parse_dcb_notification(reply_with_table(DCB_CMD_IEEE_SET, 0x08, table));
    REQUIRE(n.ok());
    CHECK(n.value->ifname == "ens1f0np0");
    REQUIRE(n.value->app);
    CHECK(*n.value->app == std::vector<AppEntry>{{5, 3, 26}});
}

TEST_CASE("APP tables that do not hold are refused with the reason", "[dcb][app]") {
    SECTION("an entry shorter than struct dcb_app") {
        auto r = parse_ieee_get_reply(
            reply_with_table(DCB_CMD_IEEE_GET, 0, nla(DCB_ATTR_IEEE_APP, {5, 3})));
        CHECK(!r.ok());
        CHECK_THAT(r.error, Catch::Contains("struct dcb_app needs 4"));
    }
    SECTION("a DSCP beyond 63 or a priority beyond 7") {
        auto r = parse_ieee_get_reply(reply_with_table(
            DCB_CMD_IEEE_GET, 0, nla(DCB_ATTR_IEEE_APP, app(IEEE_8021QAZ_APP_SEL_DSCP, 3, 64))));
        CHECK(!r.ok());
        CHECK_THAT(r.error, Catch::Contains("DSCP 64"));
        r = parse_ieee_get_reply(reply_with_table(
            DCB_CMD_IEEE_GET, 0, nla(DCB_ATTR_IEEE_APP, app(IEEE_8021QAZ_APP_SEL_DSCP, 8, 26))));
        CHECK(!r.ok());
        CHECK_THAT(r.error, Catch::Contains("priority 8"));
    }
    SECTION("an entry whose length runs past the table") {
        Bytes table = nla(DCB_ATTR_IEEE_APP, app(IEEE_8021QAZ_APP_SEL_DSCP, 3, 26));
        table[0] = 12; // nla_len 12 in a table of 8 bytes
        auto r = parse_ieee_get_reply(reply_with_table(DCB_CMD_IEEE_GET, 0, table));
        CHECK(!r.ok());
        CHECK_THAT(r.error, Catch::Contains("DCB_ATTR_IEEE_APP_TABLE"));
    }
    SECTION("more entries than max_app_entries") {
        Bytes table;
        for (size_t i = 0; i <= max_app_entries; ++i) {
            auto e =
                nla(DCB_ATTR_IEEE_APP, app(IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(i % 8),
                                           static_cast<uint16_t>(i % 64)));
            table.insert(table.end(), e.begin(), e.end());
        }
        auto r = parse_ieee_get_reply(reply_with_table(DCB_CMD_IEEE_GET, 0, table));
        CHECK(!r.ok());
        CHECK_THAT(r.error, Catch::Contains("more than 1024 entries"));
        // One fewer fits.
        table.resize(table.size() - 8);
        auto ok = parse_ieee_get_reply(reply_with_table(DCB_CMD_IEEE_GET, 0, table));
        REQUIRE(ok.ok());
        CHECK(ok.value->app->size() == max_app_entries);
    }
}
