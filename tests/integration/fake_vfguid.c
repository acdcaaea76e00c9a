// SPDX-License-Identifier: MIT
//
// LD_PRELOAD shim for the integration suite: the VF GUIDs of an InfiniBand PF at the socket
// level, as the kernel takes them through rtnetlink, for a testbed with no such PF. Loaded into
// rdmad ahead of umockdev's preload; rdmad's own code is unchanged.
//
// FAKE_VFGUID_PF=<ifindex>=<dir>   the emulated PF: its IPoIB netdev's ifindex, and the
//                                  testbed's real path of its PCI function (with virtfn<n> links)
// FAKE_VFGUID_LOG=file             one line per request rdmad sends:
//                                  "<ifindex> vf <n> node <guid> port <guid> <errno>" (a GUID
//                                  the request does not carry is "-"; sysfs form)
// FAKE_VFGUID_ERRNO=<n>            refuse every request with errno n (EOPNOTSUPP: what
//                                  net/core/rtnetlink.c do_setvfinfo() answers for a driver
//                                  without ndo_set_vf_guid)
// FAKE_VFGUID_BOUND=1              take the GUIDs but leave the VFs' files alone, as mlx5 does
//                                  for a VF whose driver is bound (ib_virt.c writes the
//                                  firmware's vport context; the VF's device reads it when it
//                                  binds)
// FAKE_VFGUID_NOACK=1              take the request and never answer it (no ACK, no error): a
//                                  request lost on its way; rdmad's receive times out
//
// A request (sendto on a netlink socket: RTM_SETLINK naming the emulated ifindex and carrying
// IFLA_VFINFO_LIST) is answered as do_setlink() answers it: each IFLA_VF_INFO of the list is one
// do_setvfinfo(), which takes the first of IFLA_VF_IB_NODE_GUID / IFLA_VF_IB_PORT_GUID it
// has (struct ifla_vf_guid, include/uapi/linux/if_link.h); then netlink_ack() with the error,
// returned by the next recvmsg on that socket. Playing the VF's driver re-reading its vport,
// the node GUID is written to the VF's RDMA device's `node_guid` ("%04x:%04x:%04x:%04x\n",
// sysfs.c node_guid_show()) and the port GUID into its port 1's `gids/0` (fe80::/64 + port
// GUID, the default GID). Everything else goes to the real kernel (the daemon's rtnetlink
// monitor and link dumps among them).
#define _GNU_SOURCE
#include <glob.h>
#include <dlfcn.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FDS 1024

struct ack {
    uint8_t bytes[NLMSG_HDRLEN + sizeof(struct nlmsgerr)];
    size_t len;
};
static struct ack acks[MAX_FDS];
static int has_ack[MAX_FDS];

/// The emulated PF's PCI directory when `ifindex` is its netdev, else NULL.
static const char* pf_dir(int ifindex) {
    static char dir[512];
    const char* spec = getenv("FAKE_VFGUID_PF");
    if (!spec)
        return NULL;
    char* eq = strchr(spec, '=');
    if (!eq || atoi(spec) != ifindex)
        return NULL;
    snprintf(dir, sizeof dir, "%s", eq + 1);
    return dir;
}

/// The VF's RDMA device directory into `out`: `<pf>/virtfn<vf>/infiniband/<dev>`, or below
/// an auxiliary device of the VF (mlx5_core.rdma.N, Linux 5.11 and later); 0 when there is one.
static int vf_device(const char* pf, uint32_t vf, char* out, size_t n) {
    char pattern[700];
    int found = -1;
    for (int depth = 0; depth < 2 && found; ++depth) {
        snprintf(pattern, sizeof pattern, depth ? "%s/virtfn%u/*/infiniband/*"
                                                : "%s/virtfn%u/infiniband/*", pf, vf);
        glob_t g;
        if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0)
            found = snprintf(out, n, "%s", g.gl_pathv[0]) < (int)n ? 0 : -1;
        globfree(&g);
    }
    return found;
}

static void write_text(const char* dir, const char* file, const char* text) {
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE* f = fopen(path, "we");
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

static void guid_text(uint64_t g, char* out, size_t n) {
    snprintf(out, n, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48), (unsigned)(g >> 32) & 0xffff,
             (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

/// Walk the attributes in [p, end): call `fn` for each with its type (flags masked).
#define EACH_ATTR(p, end, a)                                                                   \
    for (const struct nlattr* a = (const struct nlattr*)(p);                                   \
         (const uint8_t*)a + NLA_HDRLEN <= (end) && a->nla_len >= NLA_HDRLEN &&                 \
         (const uint8_t*)a + a->nla_len <= (end);                                               \
         a = (const struct nlattr*)((const uint8_t*)a + NLA_ALIGN(a->nla_len)))

static void queue_ack(int fd, const struct nlmsghdr* request, int error) {
    if (fd < 0 || fd >= MAX_FDS)
        return;
    struct ack* a = &acks[fd];
    struct nlmsghdr h = {.nlmsg_len = sizeof a->bytes, .nlmsg_type = NLMSG_ERROR,
                         .nlmsg_flags = NLM_F_CAPPED, .nlmsg_seq = request->nlmsg_seq,
                         .nlmsg_pid = request->nlmsg_pid};
    struct nlmsgerr e = {.error = -error, .msg = *request};
    memcpy(a->bytes, &h, sizeof h);
    memcpy(a->bytes + NLMSG_HDRLEN, &e, sizeof e);
    a->len = sizeof a->bytes;
    has_ack[fd] = 1;
}

ssize_t sendto(int fd, const void* buf, size_t len, int flags, const struct sockaddr* addr,
               socklen_t addrlen) {
    ssize_t (*real)(int, const void*, size_t, int, const struct sockaddr*, socklen_t) =
        dlsym(RTLD_NEXT, "sendto");
    const uint8_t* msg = buf;
    struct nlmsghdr h;
    if (len < NLMSG_HDRLEN + sizeof(struct ifinfomsg))
        return real(fd, buf, len, flags, addr, addrlen);
    memcpy(&h, msg, sizeof h);
    if (h.nlmsg_type != RTM_SETLINK || !(h.nlmsg_flags & NLM_F_REQUEST) || h.nlmsg_len > len)
        return real(fd, buf, len, flags, addr, addrlen);
    struct ifinfomsg ifi;
    memcpy(&ifi, msg + NLMSG_HDRLEN, sizeof ifi);
    const char* pf = pf_dir(ifi.ifi_index);
    const uint8_t* end = msg + h.nlmsg_len;
    const uint8_t* attrs = msg + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof ifi);
    const struct nlattr* list = NULL;
    EACH_ATTR(attrs, end, a) {
        if ((a->nla_type & NLA_TYPE_MASK) == IFLA_VFINFO_LIST)
            list = a;
    }
    if (!pf || !list)
        return real(fd, buf, len, flags, addr, addrlen);
    const char* refuse = getenv("FAKE_VFGUID_ERRNO");
    const int error = refuse ? atoi(refuse) : 0;
    int64_t vf = -1;
    char node[24] = "-", port[24] = "-";
    const uint8_t* list_end = (const uint8_t*)list + list->nla_len;
    EACH_ATTR((const uint8_t*)list + NLA_HDRLEN, list_end, info) {
        if ((info->nla_type & NLA_TYPE_MASK) != IFLA_VF_INFO)
            continue;
        const uint8_t* info_end = (const uint8_t*)info + info->nla_len;
        EACH_ATTR((const uint8_t*)info + NLA_HDRLEN, info_end, g) {
            const int type = g->nla_type & NLA_TYPE_MASK;
            if ((type != IFLA_VF_IB_NODE_GUID && type != IFLA_VF_IB_PORT_GUID) ||
                g->nla_len < NLA_HDRLEN + sizeof(struct ifla_vf_guid))
                continue;
            struct ifla_vf_guid v;
            memcpy(&v, (const uint8_t*)g + NLA_HDRLEN, sizeof v);
            vf = v.vf;
            guid_text(v.guid, type == IFLA_VF_IB_NODE_GUID ? node : port, sizeof node);
            char dev[1200];
            if (!error && !getenv("FAKE_VFGUID_BOUND") && !getenv("FAKE_VFGUID_NOACK") &&
                vf_device(pf, v.vf, dev, sizeof dev) == 0) {
                char text[64];
                if (type == IFLA_VF_IB_NODE_GUID) {
                    snprintf(text, sizeof text, "%s\n", node);
                    write_text(dev, "node_guid", text);
                } else {
                    snprintf(text, sizeof text, "fe80:0000:0000:0000:%s\n", port);
                    write_text(dev, "ports/1/gids/0", text);
                }
            }
            break; // do_setvfinfo(): the first GUID attribute of an IFLA_VF_INFO, no more
        }
    }
    const char* log = getenv("FAKE_VFGUID_LOG");
    FILE* f = log ? fopen(log, "ae") : NULL;
    if (f) {
        fprintf(f, "%d vf %lld node %s port %s %d\n", ifi.ifi_index, (long long)vf, node, port,
                error);
        fclose(f);
    }
    if ((h.nlmsg_flags & NLM_F_ACK || error) && !getenv("FAKE_VFGUID_NOACK"))
        queue_ack(fd, &h, error);
    return (ssize_t)len;
}

ssize_t recvmsg(int fd, struct msghdr* m, int flags) {
    ssize_t (*real)(int, struct msghdr*, int) = dlsym(RTLD_NEXT, "recvmsg");
    if (fd < 0 || fd >= MAX_FDS || !has_ack[fd] || m->msg_iovlen < 1)
        return real(fd, m, flags);
    const struct ack* a = &acks[fd];
    const size_t n = a->len < m->msg_iov[0].iov_len ? a->len : m->msg_iov[0].iov_len;
    memcpy(m->msg_iov[0].iov_base, a->bytes, n);
    m->msg_flags = 0;
    if (m->msg_name && m->msg_namelen >= sizeof(struct sockaddr_nl)) {
        struct sockaddr_nl k = {.nl_family = AF_NETLINK};
        memcpy(m->msg_name, &k, sizeof k);
        m->msg_namelen = sizeof k;
    }
    has_ack[fd] = 0;
    return (ssize_t)n;
}
