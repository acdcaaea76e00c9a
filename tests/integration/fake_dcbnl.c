// SPDX-License-Identifier: MIT
//
// LD_PRELOAD shim for the integration suite: netdevs with DCB (dcbnl_ops) at the socket level,
// for a kernel that has none (a veth answers every DCB request with EOPNOTSUPP). Loaded into
// rdmad ahead of umockdev's preload; rdmad's own code is unchanged.
//
// FAKE_DCBNL_NETDEVS=a,b  the emulated netdevs (IEEE DCB, pfc_cap 8, pfc_en 0, DCBX host|IEEE,
//                         an empty APP table)
// FAKE_DCBNL_PFC=a:0x08   a netdev's pfc_en at start (`dcb pfc set dev a prio-pfc 3:on`)
// FAKE_DCBNL_DSCP=a:26:3,a:46:5  APP table DSCP entries (`dcb app add dev a dscp-prio 26:3`)
// FAKE_DCBNL_LOG=file     one line per request rdmad sends: "GET a", "SET a 0x08" (PFC),
//                         "APPSET a 26:3 48:6" / "APPDEL a 26:0" (DSCP:priority of the APP
//                         entries of an IEEE_SET / IEEE_DEL; other selectors as SEL/PROTO:PRIO)
// FAKE_DCBNL_RESET=file   the driver re-created a netdev (driver reload, firmware reset): when
//                         `file` exists at a request, each netdev it names (one a line) is
//                         back to the state above (pfc_en 0, an empty APP table, as the kernel
//                         starts a new netdev with no dcb_app_list entries) and the file is
//                         removed; the kernel sends no DCB notification for that
// iproute2 6.1 takes its replies as the kernel's: with FAKE_DCBNL_PFC=a:0x08 and
// FAKE_DCBNL_DSCP=a:26:3,a:46:5, `dcb pfc show dev a prio-pfc` prints "prio-pfc 0:off 1:off
// 2:off 3:on 4:off 5:off 6:off 7:off" and `dcb -N app show dev a dscp-prio` "dscp-prio 26:3
// 46:5" (`dcb app show` names them AF31 and EF).
//
// Requests (sendto on a NETLINK_ROUTE socket, RTM_GETDCB/RTM_SETDCB naming an emulated netdev)
// are answered as net/dcb/dcbnl.c does: dcb_doit() replies with the command's message (IEEE_GET:
// dcbnl_ieee_fill(); IEEE_SET: the driver's status byte) and netlink_ack() follows; those
// datagrams are returned by the next recvmsg on that socket. APP entries of an IEEE_SET are
// added as dcb_ieee_setapp() adds them (an exact duplicate fails with EEXIST; a DSCP may map to
// several priorities), those of an IEEE_DEL removed as dcb_ieee_delapp() does (exact match, else
// ENOENT); as dcbnl_ieee_set()/dcbnl_ieee_del(), the first failure stops the rest and becomes the
// reply's status byte. After a SET or DEL the kernel multicasts the new state to RTNLGRP_DCB
// (dcbnl_ieee_notify() with the command: DCB_CMD_IEEE_SET or DCB_CMD_IEEE_DEL): the shim sends
// that notification to the group from a socket of its own. A DCB notification that reaches rdmad from a process (the
// tests play "another tool" by multicasting one) is taken as the kernel's: its PFC (and its APP
// table, when it has one) becomes the netdev's state and its sender port id reads 0.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_NETDEVS 8
#define MAX_FDS 1024
#define MAX_QUEUED 8
#define MAX_APP 128 // mlnx_qos --trust dscp alone adds 64 DSCP entries
#define MAX_MSG 2048 // an IEEE_GET reply with MAX_APP entries and struct ieee_pfc fits

struct netdev {
    char name[IFNAMSIZ];
    uint8_t pfc_cap, pfc_en, dcbx;
    struct dcb_app app[MAX_APP]; // the IEEE APP table (dcb_app_list entries of this netdev)
    int n_app;
};
static struct netdev netdevs[MAX_NETDEVS];
static int n_netdevs = -1;

struct datagram {
    uint8_t bytes[MAX_MSG];
    size_t len;
};
static struct datagram queue[MAX_FDS][MAX_QUEUED];
static int queued[MAX_FDS];

static void load(void) {
    if (n_netdevs >= 0)
        return;
    n_netdevs = 0;
    const char* list = getenv("FAKE_DCBNL_NETDEVS");
    if (!list)
        return;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char* save = NULL, *t = strtok_r(copy, ",", &save); t && n_netdevs < MAX_NETDEVS;
         t = strtok_r(NULL, ",", &save)) {
        struct netdev* d = &netdevs[n_netdevs++];
        snprintf(d->name, sizeof d->name, "%s", t);
        d->pfc_cap = 8;
        d->pfc_en = 0;
        d->dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
    }
    const char* pfc = getenv("FAKE_DCBNL_PFC");
    if (pfc) {
        snprintf(copy, sizeof copy, "%s", pfc);
        for (char* save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            char* colon = strchr(t, ':');
            if (!colon)
                continue;
            *colon = 0;
            for (int i = 0; i < n_netdevs; ++i)
                if (strcmp(netdevs[i].name, t) == 0)
                    netdevs[i].pfc_en = (uint8_t)strtoul(colon + 1, NULL, 0);
        }
    }
    const char* dscp = getenv("FAKE_DCBNL_DSCP");
    if (dscp) {
        snprintf(copy, sizeof copy, "%s", dscp);
        for (char* save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            char name[IFNAMSIZ];
            unsigned code, prio;
            if (sscanf(t, "%15[^:]:%u:%u", name, &code, &prio) != 3)
                continue;
            for (int i = 0; i < n_netdevs; ++i)
                if (strcmp(netdevs[i].name, name) == 0 && netdevs[i].n_app < MAX_APP)
                    netdevs[i].app[netdevs[i].n_app++] = (struct dcb_app){
                        .selector = IEEE_8021QAZ_APP_SEL_DSCP, .priority = (uint8_t)prio,
                        .protocol = (uint16_t)code};
        }
    }
}

/// FAKE_DCBNL_RESET: the netdevs the file names start again with the driver's defaults.
static void reset_recreated(void) {
    const char* path = getenv("FAKE_DCBNL_RESET");
    FILE* f = path ? fopen(path, "re") : NULL;
    if (!f)
        return;
    char line[64];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        for (int i = 0; i < n_netdevs; ++i)
            if (strcmp(netdevs[i].name, line) == 0) {
                netdevs[i].pfc_en = 0;
                netdevs[i].n_app = 0;
            }
    }
    fclose(f);
    unlink(path);
}

static struct netdev* find(const char* name, size_t len) {
    load();
    reset_recreated();
    for (int i = 0; i < n_netdevs; ++i)
        if (strnlen(name, len) == strlen(netdevs[i].name) &&
            strncmp(netdevs[i].name, name, len) == 0)
            return &netdevs[i];
    return NULL;
}

static void log_line(const char* fmt, const char* name, unsigned mask) {
    const char* path = getenv("FAKE_DCBNL_LOG");
    if (!path)
        return;
    FILE* f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, fmt, name, mask);
    fclose(f);
}

// --- building messages, 4-byte aligned as the kernel lays them out

struct out {
    uint8_t* p;
    size_t len;
};
static void put(struct out* o, const void* data, size_t n) {
    memcpy(o->p + o->len, data, n);
    o->len += n;
    while (o->len % 4)
        o->p[o->len++] = 0;
}
static void attr(struct out* o, uint16_t type, const void* data, uint16_t n) {
    struct nlattr a = {.nla_len = NLA_HDRLEN + n, .nla_type = type};
    put(o, &a, sizeof a);
    if (n)
        put(o, data, n);
}
static void header(struct out* o, uint16_t type, uint16_t flags, uint32_t seq, uint32_t pid,
                   uint8_t cmd) {
    struct nlmsghdr h = {.nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = seq,
                         .nlmsg_pid = pid};
    put(o, &h, sizeof h);
    struct dcbmsg d = {.dcb_family = AF_UNSPEC, .cmd = cmd};
    put(o, &d, sizeof d);
}
static void finish(struct out* o) {
    uint32_t len = (uint32_t)o->len;
    memcpy(o->p, &len, sizeof len);
}
/// dcbnl_ieee_fill(): IFNAME, IEEE { IEEE_PFC, IEEE_APP_TABLE { IEEE_APP... } }, DCBX.
static void ieee_fill(struct out* o, const struct netdev* d) {
    attr(o, DCB_ATTR_IFNAME, d->name, (uint16_t)(strlen(d->name) + 1));
    size_t nest = o->len;
    struct nlattr n = {.nla_type = DCB_ATTR_IEEE | NLA_F_NESTED};
    put(o, &n, sizeof n);
    struct ieee_pfc pfc = {.pfc_cap = d->pfc_cap, .pfc_en = d->pfc_en};
    attr(o, DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
    // nla_nest_start_noflag(): the kernel sends the APP table without NLA_F_NESTED.
    size_t table = o->len;
    struct nlattr t = {.nla_type = DCB_ATTR_IEEE_APP_TABLE};
    put(o, &t, sizeof t);
    for (int i = 0; i < d->n_app; ++i)
        attr(o, DCB_ATTR_IEEE_APP, &d->app[i], sizeof d->app[i]);
    uint16_t table_len = (uint16_t)(o->len - table);
    memcpy(o->p + table, &table_len, sizeof table_len);
    uint16_t nest_len = (uint16_t)(o->len - nest);
    memcpy(o->p + nest, &nest_len, sizeof nest_len);
    attr(o, DCB_ATTR_DCBX, &d->dcbx, 1);
}

static void enqueue(int fd, const struct out* o) {
    if (fd < 0 || fd >= MAX_FDS || queued[fd] >= MAX_QUEUED)
        return;
    struct datagram* q = &queue[fd][queued[fd]++];
    memcpy(q->bytes, o->p, o->len);
    q->len = o->len;
}

static void ack(int fd, const struct nlmsghdr* request) {
    uint8_t buf[64];
    struct out o = {buf, 0};
    struct nlmsghdr h = {.nlmsg_type = NLMSG_ERROR, .nlmsg_flags = NLM_F_CAPPED,
                         .nlmsg_seq = request->nlmsg_seq, .nlmsg_pid = request->nlmsg_pid};
    put(&o, &h, sizeof h);
    struct nlmsgerr e = {.error = 0, .msg = *request};
    put(&o, &e, sizeof e);
    finish(&o);
    enqueue(fd, &o);
}

/// What the kernel multicasts to RTNLGRP_DCB after a SET or DEL `cmd` (dcbnl_ieee_notify()).
static void notify(const struct netdev* d, uint8_t cmd) {
    uint8_t buf[MAX_MSG];
    struct out o = {buf, 0};
    header(&o, RTM_SETDCB, 0, 0, 0, cmd);
    ieee_fill(&o, d);
    finish(&o);
    int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (s < 0)
        return;
    struct sockaddr_nl to = {.nl_family = AF_NETLINK, .nl_groups = 1u << (RTNLGRP_DCB - 1)};
    ssize_t (*real_sendto)(int, const void*, size_t, int, const struct sockaddr*, socklen_t) =
        dlsym(RTLD_NEXT, "sendto");
    real_sendto(s, buf, o.len, 0, (const struct sockaddr*)&to, sizeof to);
    close(s);
}

/// The DCB_ATTR_IFNAME of a DCB message (after struct dcbmsg), or NULL.
static const char* ifname_of(const uint8_t* msg, size_t len, size_t* name_len) {
    size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct dcbmsg));
    while (off + NLA_HDRLEN <= len) {
        struct nlattr a;
        memcpy(&a, msg + off, sizeof a);
        if (a.nla_len < NLA_HDRLEN || off + a.nla_len > len)
            return NULL;
        if ((a.nla_type & NLA_TYPE_MASK) == DCB_ATTR_IFNAME) {
            *name_len = a.nla_len - NLA_HDRLEN;
            return (const char*)msg + off + NLA_HDRLEN;
        }
        off += NLA_ALIGN(a.nla_len);
    }
    return NULL;
}

/// The payload of the attribute `type` inside DCB_ATTR_IEEE of a DCB message (its length in
/// `*n`), or NULL.
static const uint8_t* ieee_attr(const uint8_t* msg, size_t len, uint16_t type, size_t* n) {
    size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct dcbmsg));
    while (off + NLA_HDRLEN <= len) {
        struct nlattr a;
        memcpy(&a, msg + off, sizeof a);
        if (a.nla_len < NLA_HDRLEN || off + a.nla_len > len)
            return NULL;
        if ((a.nla_type & NLA_TYPE_MASK) == DCB_ATTR_IEEE) {
            size_t in = off + NLA_HDRLEN, end = off + a.nla_len;
            while (in + NLA_HDRLEN <= end) {
                struct nlattr b;
                memcpy(&b, msg + in, sizeof b);
                if (b.nla_len < NLA_HDRLEN || in + b.nla_len > end)
                    return NULL;
                if ((b.nla_type & NLA_TYPE_MASK) == type) {
                    *n = b.nla_len - NLA_HDRLEN;
                    return msg + in + NLA_HDRLEN;
                }
                in += NLA_ALIGN(b.nla_len);
            }
        }
        off += NLA_ALIGN(a.nla_len);
    }
    return NULL;
}

/// The pfc_en of DCB_ATTR_IEEE { DCB_ATTR_IEEE_PFC } in a DCB message, or -1.
static int pfc_en_of(const uint8_t* msg, size_t len) {
    size_t n = 0;
    const uint8_t* pfc = ieee_attr(msg, len, DCB_ATTR_IEEE_PFC, &n);
    return pfc && n >= sizeof(struct ieee_pfc) ? pfc[offsetof(struct ieee_pfc, pfc_en)] : -1;
}

/// The DCB_ATTR_IEEE_APP entries of DCB_ATTR_IEEE { DCB_ATTR_IEEE_APP_TABLE } of a DCB message,
/// at most `max` into `apps`: how many, or -1 when the message has no table. An entry shorter
/// than struct dcb_app ends the walk with *short_entry set (dcbnl_ieee_set(): -ERANGE there).
static int app_entries(const uint8_t* msg, size_t len, struct dcb_app* apps, int max,
                       int* short_entry) {
    size_t n = 0;
    const uint8_t* table = ieee_attr(msg, len, DCB_ATTR_IEEE_APP_TABLE, &n);
    *short_entry = 0;
    if (!table)
        return -1;
    int count = 0;
    for (size_t e = 0; e + NLA_HDRLEN <= n && count < max;) {
        struct nlattr c;
        memcpy(&c, table + e, sizeof c);
        if (c.nla_len < NLA_HDRLEN || e + c.nla_len > n)
            break;
        if ((c.nla_type & NLA_TYPE_MASK) == DCB_ATTR_IEEE_APP) {
            if (c.nla_len < NLA_HDRLEN + sizeof(struct dcb_app)) {
                *short_entry = 1;
                break;
            }
            memcpy(&apps[count++], table + e + NLA_HDRLEN, sizeof(struct dcb_app));
        }
        e += NLA_ALIGN(c.nla_len);
    }
    return count;
}

/// The DCB_ATTR_IEEE { DCB_ATTR_IEEE_APP_TABLE } of a DCB message, into `d` (only when the
/// message has a table: its IEEE_APP entries replace the netdev's).
static void take_app_table(struct netdev* d, const uint8_t* msg, size_t len) {
    struct dcb_app apps[MAX_APP];
    int short_entry;
    const int n = app_entries(msg, len, apps, MAX_APP, &short_entry);
    if (n < 0)
        return;
    memcpy(d->app, apps, sizeof(struct dcb_app) * (size_t)n);
    d->n_app = n;
}

static int app_find(const struct netdev* d, const struct dcb_app* a) {
    for (int i = 0; i < d->n_app; ++i)
        if (d->app[i].selector == a->selector && d->app[i].protocol == a->protocol &&
            d->app[i].priority == a->priority)
            return i;
    return -1;
}

/// The APP entries of an IEEE_SET (dcb_ieee_setapp()) or IEEE_DEL (dcb_ieee_delapp()), in order
/// until one fails, logged as one line: 0 or the negative errno of the failure.
static int apply_app(struct netdev* d, uint8_t cmd, const struct dcb_app* apps, int n,
                     int short_entry) {
    char line[MAX_APP * 16 + 64];
    int at = snprintf(line, sizeof line, "%s %s", cmd == DCB_CMD_IEEE_DEL ? "APPDEL" : "APPSET",
                      d->name);
    for (int i = 0; i < n && at < (int)sizeof line; ++i)
        at += apps[i].selector == IEEE_8021QAZ_APP_SEL_DSCP
                  ? snprintf(line + at, sizeof line - (size_t)at, " %u:%u",
                             (unsigned)apps[i].protocol, (unsigned)apps[i].priority)
                  : snprintf(line + at, sizeof line - (size_t)at, " %u/%u:%u",
                             (unsigned)apps[i].selector, (unsigned)apps[i].protocol,
                             (unsigned)apps[i].priority);
    log_line("%s\n", line, 0);
    for (int i = 0; i < n; ++i) {
        const int found = app_find(d, &apps[i]);
        if (cmd == DCB_CMD_IEEE_SET) {
            if (found >= 0)
                return -EEXIST;
            if (d->n_app >= MAX_APP)
                return -ENOMEM;
            d->app[d->n_app++] = apps[i];
        } else {
            if (found < 0)
                return -ENOENT;
            memmove(&d->app[found], &d->app[found + 1],
                    sizeof(struct dcb_app) * (size_t)(d->n_app - found - 1));
            --d->n_app;
        }
    }
    return short_entry ? -ERANGE : 0;
}

ssize_t sendto(int fd, const void* buf, size_t len, int flags, const struct sockaddr* addr,
               socklen_t addrlen) {
    ssize_t (*real)(int, const void*, size_t, int, const struct sockaddr*, socklen_t) =
        dlsym(RTLD_NEXT, "sendto");
    const uint8_t* msg = buf;
    struct nlmsghdr h;
    if (len < NLMSG_HDRLEN + sizeof(struct dcbmsg))
        return real(fd, buf, len, flags, addr, addrlen);
    memcpy(&h, msg, sizeof h);
    if ((h.nlmsg_type != RTM_GETDCB && h.nlmsg_type != RTM_SETDCB) ||
        !(h.nlmsg_flags & NLM_F_REQUEST) || h.nlmsg_len > len)
        return real(fd, buf, len, flags, addr, addrlen);
    size_t name_len = 0;
    const char* name = ifname_of(msg, h.nlmsg_len, &name_len);
    struct netdev* d = name ? find(name, name_len) : NULL;
    if (!d)
        return real(fd, buf, len, flags, addr, addrlen);
    const uint8_t cmd = msg[NLMSG_HDRLEN + offsetof(struct dcbmsg, cmd)];
    uint8_t out_buf[MAX_MSG];
    struct out o = {out_buf, 0};
    if (h.nlmsg_type == RTM_GETDCB && cmd == DCB_CMD_IEEE_GET) {
        log_line("GET %s\n", d->name, 0);
        header(&o, RTM_GETDCB, h.nlmsg_flags, h.nlmsg_seq, h.nlmsg_pid, DCB_CMD_IEEE_GET);
        ieee_fill(&o, d);
    } else if (h.nlmsg_type == RTM_GETDCB && cmd == DCB_CMD_GDCBX) {
        header(&o, RTM_GETDCB, h.nlmsg_flags, h.nlmsg_seq, h.nlmsg_pid, DCB_CMD_GDCBX);
        attr(&o, DCB_ATTR_DCBX, &d->dcbx, 1);
    } else if (h.nlmsg_type == RTM_SETDCB && (cmd == DCB_CMD_IEEE_SET || cmd == DCB_CMD_IEEE_DEL)) {
        // dcbnl_ieee_set(): PFC first, then the APP table; dcbnl_ieee_del(): the APP table.
        const int en = cmd == DCB_CMD_IEEE_SET ? pfc_en_of(msg, h.nlmsg_len) : -1;
        if (en >= 0)
            d->pfc_en = (uint8_t)en;
        struct dcb_app apps[MAX_APP];
        int short_entry;
        const int n = app_entries(msg, h.nlmsg_len, apps, MAX_APP, &short_entry);
        if (en >= 0 || (n < 0 && cmd == DCB_CMD_IEEE_SET))
            log_line("SET %s 0x%02x\n", d->name, (unsigned)d->pfc_en);
        const int err = n >= 0 ? apply_app(d, cmd, apps, n, short_entry) : 0;
        header(&o, RTM_SETDCB, h.nlmsg_flags, h.nlmsg_seq, h.nlmsg_pid, cmd);
        uint8_t status = (uint8_t)(int8_t)err;
        attr(&o, DCB_ATTR_IEEE, &status, 1);
    } else {
        return real(fd, buf, len, flags, addr, addrlen);
    }
    finish(&o);
    enqueue(fd, &o);
    ack(fd, &h);
    if (h.nlmsg_type == RTM_SETDCB)
        notify(d, cmd);
    return (ssize_t)len;
}

ssize_t recvmsg(int fd, struct msghdr* m, int flags) {
    ssize_t (*real)(int, struct msghdr*, int) = dlsym(RTLD_NEXT, "recvmsg");
    if (fd >= 0 && fd < MAX_FDS && queued[fd] > 0 && m->msg_iovlen >= 1) {
        struct datagram* q = &queue[fd][0];
        size_t n = q->len < m->msg_iov[0].iov_len ? q->len : m->msg_iov[0].iov_len;
        memcpy(m->msg_iov[0].iov_base, q->bytes, n);
        m->msg_flags = n < q->len ? MSG_TRUNC : 0;
        if (m->msg_name && m->msg_namelen >= sizeof(struct sockaddr_nl)) {
            struct sockaddr_nl k = {.nl_family = AF_NETLINK};
            memcpy(m->msg_name, &k, sizeof k);
            m->msg_namelen = sizeof k;
        }
        memmove(&queue[fd][0], &queue[fd][1], sizeof(struct datagram) * (size_t)(queued[fd] - 1));
        --queued[fd];
        return (ssize_t)n;
    }
    ssize_t n = real(fd, m, flags);
    if (n < (ssize_t)(NLMSG_HDRLEN + sizeof(struct dcbmsg)) || !m->msg_name ||
        m->msg_namelen != sizeof(struct sockaddr_nl) || m->msg_iovlen < 1)
        return n;
    struct sockaddr_nl* from = m->msg_name;
    const uint8_t* msg = m->msg_iov[0].iov_base;
    struct nlmsghdr h;
    memcpy(&h, msg, sizeof h);
    if (from->nl_family != AF_NETLINK || from->nl_pid == 0 ||
        (h.nlmsg_type != RTM_SETDCB && h.nlmsg_type != RTM_GETDCB) || h.nlmsg_len > (size_t)n ||
        (h.nlmsg_flags & NLM_F_REQUEST))
        return n;
    size_t name_len = 0;
    const char* name = ifname_of(msg, h.nlmsg_len, &name_len);
    struct netdev* d = name ? find(name, name_len) : NULL;
    if (!d)
        return n;
    // A notification multicast by a process (the shim's own after a SET, or a test playing
    // another tool): the kernel's, for an emulated netdev.
    const int en = pfc_en_of(msg, h.nlmsg_len);
    if (en >= 0)
        d->pfc_en = (uint8_t)en;
    take_app_table(d, msg, h.nlmsg_len);
    from->nl_pid = 0;
    return n;
}
