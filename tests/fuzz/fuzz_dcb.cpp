// SPDX-License-Identifier: MIT
//
// libFuzzer target: every DCB netlink reply and notification parser
// (daemon/actuators/dcb_message.hpp), which read what the kernel sends. The input is one received
// datagram: it goes through split_messages() and each message payload through every parser, and the
// whole input also goes to each payload parser directly. Invariants: no out-of-bounds read (ASan),
// a refusal always says why, payload spans stay inside the input, and a decoded NLMSG_ERROR is a
// valid errno.
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

void all_parsers(std::span<const uint8_t> payload) {
    auto e = parse_nlmsg_error(payload);
    check(e);
    if (e.ok() && (*e.value < 0 || *e.value > 4095))
        std::abort();
    check(parse_ieee_get_reply(payload));
    auto s = parse_ieee_set_reply(payload);
    check(s);
    if (s.ok() && (*s.value < 0 || *s.value > 128))
        std::abort();
    auto n = parse_dcb_notification(payload);
    check(n);
    if (n.ok() && n.value->ifname.empty())
        std::abort(); // refused without DCB_ATTR_IFNAME
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
