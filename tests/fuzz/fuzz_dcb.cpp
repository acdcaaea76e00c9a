// SPDX-License-Identifier: MIT
//
// libFuzzer target: every DCB netlink reply and notification parser
// (daemon/actuators/dcb_message.hpp), which read what the kernel sends. The input is one received
// datagram: it goes through split_messages() and each message payload through every parser, and the
// whole input also goes to each payload parser directly. Invariants: no out-of-bounds read (ASan),
// a refusal always says why, payload spans stay inside the input, a decoded NLMSG_ERROR is a
// valid errno, and a decoded APP table has at most max_app_entries entries whose DSCP ones are
// in range.
#include "actuators/dcb_message.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace rdmad::dcb;

namespace {

template <class T> void check(const Parsed<T>& p) {
    if (p.ok() == !p.error.empty())
        std::abort();
}

/// A decoded APP table is bounded, and its DSCP entries hold a DSCP (0-63) and a priority (0-7).
void check_app(const std::optional<std::vector<AppEntry>>& app) {
    if (!app)
        return;
    if (app->size() > max_app_entries)
        std::abort();
    for (const auto& e : *app)
        if (e.selector == app_sel_dscp && (e.protocol > 63 || e.priority > 7))
            std::abort();
}

void all_parsers(std::span<const uint8_t> payload) {
    auto e = parse_nlmsg_error(payload);
    check(e);
    if (e.ok() && (*e.value < 0 || *e.value > 4095))
        std::abort();
    auto g = parse_ieee_get_reply(payload);
    check(g);
    if (g.ok())
        check_app(g.value->app);
    auto s = parse_ieee_set_reply(payload);
    check(s);
    if (s.ok() && (*s.value < 0 || *s.value > 128))
        std::abort();
    auto d = parse_ieee_del_reply(payload);
    check(d);
    if (d.ok() && (*d.value < 0 || *d.value > 128))
        std::abort();
    if (s.ok() && d.ok())
        std::abort(); // one struct dcbmsg cannot answer both IEEE_SET and IEEE_DEL
    auto n = parse_dcb_notification(payload);
    check(n);
    if (n.ok() && n.value->ifname.empty())
        std::abort(); // refused without DCB_ATTR_IFNAME
    if (n.ok())
        check_app(n.value->app);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::span<const uint8_t> in(data, size);
    auto split = split_messages(in);
    check(split);
    if (split.ok()) {
        for (const Message& m : *split.value) {
            if (m.payload.data() < data || m.payload.data() + m.payload.size() > data + size)
                std::abort();
            all_parsers(m.payload);
        }
    }
    all_parsers(in);
    return 0;
}
