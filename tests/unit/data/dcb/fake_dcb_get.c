// SPDX-License-Identifier: MIT
//
// LD_PRELOAD shim used once to capture the bytes iproute2 `dcb pfc set` sends. A veth has no
// dcbnl_ops, so the kernel answers the IEEE_GET that `dcb pfc set` does first (read-modify-write)
// with EOPNOTSUPP and dcb would never send its SET. This shim lets the real kernel answer, then
// replaces that answer with what net/dcb/dcbnl.c dcbnl_ieee_fill() sends for a driver that has
// only ieee_getpfc (pfc_cap 8, pfc_en 0): RTM_GETDCB {dcbmsg AF_UNSPEC, IEEE_GET} IFNAME,
// IEEE{PFC: struct ieee_pfc}, followed by the ACK. The SET then goes to the real kernel.
// Build: cc -shared -fPIC -o fake_dcb_get.so fake_dcb_get.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

static int last_type, last_cmd;
static char last_req[16];
static char ifname[16];

ssize_t sendto(int fd, const void* buf, size_t len, int flags, const struct sockaddr* a, socklen_t al) {
    ssize_t (*real)(int, const void*, size_t, int, const struct sockaddr*, socklen_t) =
        dlsym(RTLD_NEXT, "sendto");
    const struct nlmsghdr* n = buf;
    if (len >= 36) {
        last_type = n->nlmsg_type;
        last_cmd = ((const uint8_t*)buf)[17];
        memcpy(last_req, buf, 16);
        strncpy(ifname, (const char*)buf + 24, 15);
    }
    return real(fd, buf, len, flags, a, al);
}

static void put_attr(uint8_t* p, size_t* off, uint16_t type, const void* data, uint16_t len) {
    struct nlattr* a = (struct nlattr*)(p + *off);
    a->nla_len = NLA_HDRLEN + len;
    a->nla_type = type;
    memcpy(p + *off + NLA_HDRLEN, data, len);
    *off += NLA_ALIGN(a->nla_len);
}

ssize_t recvmsg(int fd, struct msghdr* m, int flags) {
    ssize_t (*real)(int, struct msghdr*, int) = dlsym(RTLD_NEXT, "recvmsg");
    ssize_t r = real(fd, m, flags);
    if (r < 16 || last_type != RTM_GETDCB || last_cmd != DCB_CMD_IEEE_GET)
        return r;
    uint8_t* p = m->msg_iov[0].iov_base;
    struct nlmsghdr kernel = *(struct nlmsghdr*)p;
    memset(p, 0, 512);
    size_t off = NLMSG_HDRLEN;
    struct dcbmsg d = {.dcb_family = AF_UNSPEC, .cmd = DCB_CMD_IEEE_GET};
    memcpy(p + off, &d, sizeof d);
    off += NLMSG_ALIGN(sizeof d);
    put_attr(p, &off, DCB_ATTR_IFNAME, ifname, strlen(ifname) + 1);
    size_t nest = off;
    off += NLA_HDRLEN;
    struct ieee_pfc pfc = {.pfc_cap = 8};
    put_attr(p, &off, DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
    ((struct nlattr*)(p + nest))->nla_len = off - nest;
    ((struct nlattr*)(p + nest))->nla_type = DCB_ATTR_IEEE; // dcbnl.c: nla_nest_start_noflag, no NLA_F_NESTED
    struct nlmsghdr* h = (struct nlmsghdr*)p;
    h->nlmsg_len = off;
    h->nlmsg_type = RTM_GETDCB;
    h->nlmsg_flags = 0;
    h->nlmsg_seq = kernel.nlmsg_seq;
    h->nlmsg_pid = kernel.nlmsg_pid;
    // ACK, capped (NLM_F_CAPPED: the kernel echoes only the request header).
    struct nlmsghdr* ack = (struct nlmsghdr*)(p + off);
    ack->nlmsg_len = NLMSG_HDRLEN + sizeof(struct nlmsgerr);
    ack->nlmsg_type = NLMSG_ERROR;
    ack->nlmsg_flags = NLM_F_CAPPED;
    ack->nlmsg_seq = kernel.nlmsg_seq;
    ack->nlmsg_pid = kernel.nlmsg_pid;
    struct nlmsgerr e = {.error = 0};
    memcpy(&e.msg, last_req, 16);
    memcpy(p + off + NLMSG_HDRLEN, &e, sizeof e);
    off += ack->nlmsg_len;
    last_type = 0;
    // FAKE_DCB_DUMP=<file>: keep the reply that was handed to dcb (test data).
    if (getenv("FAKE_DCB_DUMP")) {
        FILE* f = fopen(getenv("FAKE_DCB_DUMP"), "wb");
        fwrite(p, 1, off, f);
        fclose(f);
    }
    return off;
}
