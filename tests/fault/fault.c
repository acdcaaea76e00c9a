// SPDX-License-Identifier: MIT
//
// Fault injection for the real rdmad (issue #14): an LD_PRELOAD library, loaded before
// umockdev's preload, that makes chosen calls fail the way the kernel can make them fail.
//
// RDMAD_FAULTS names a rules file, read again whenever it changes (checked at most every
// 10 ms), so a test turns faults on and off while rdmad runs; no file, no faults. One rule a
// line, '#' starts a comment:
//
//   OP ERROR GLOB [every N]
//
//   OP     open | read | write | fsync | rename | recv
//   ERROR  an errno name (EIO, ENOENT, ENOSPC, ENOBUFS, EINVAL, EAGAIN, EACCES), or
//          short     read/write move at most one byte a call (POSIX allows it; a reader
//                    must loop)
//          slow      open/read/recv wait 10 ms first, then do what they would (a sysfs
//                    attribute whose driver sleeps, a busy machine)
//          truncate  recv gets at most 20 bytes of the datagram and the kernel drops the rest
//                    (MSG_TRUNC, as for any reader whose buffer is too small: netlink(7))
//          reorder   recv holds this datagram back and returns the one queued behind it
//                    first, when there is one; the held one comes at the next recv on the fd
//   GLOB   fnmatch(3) pattern on the path: open as called, read/write/fsync the file the fd
//          is open on (/proc/self/fd, so under umockdev the testbed's path), rename and
//          renameat the new name; for recv, "uevent" (umockdev's AF_UNIX stand-in for the uevent netlink
//          socket), "route" (NETLINK_ROUTE) or "*"
//   every  fail one matching call in N (default 1: every one)
//
// recv ENOBUFS also drops the message it stands in front of, as the kernel's overflow did.
//
// Each injected fault is told on stderr ("rdmad-fault: read EIO /path"), the first 10,000.
// open and open64 are both wrapped: without this meson's -D_FILE_OFFSET_BITS=64 would make the
// headers name both open64.
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum op { OP_OPEN, OP_READ, OP_WRITE, OP_FSYNC, OP_RENAME, OP_RECV, OP_COUNT };
static const char* const op_names[OP_COUNT] = {"open", "read", "write", "fsync", "rename", "recv"};

#define SHORT_IO (-1)
#define SLOW (-2)
#define TRUNCATE (-3)
#define REORDER (-4)
#define MAX_RULES 32

struct rule {
    enum op op;
    int error; // errno, or SHORT_IO
    char glob[256];
    unsigned every;
    unsigned long seen;
};

static struct rule rules[MAX_RULES];
static int n_rules;
static struct timespec rules_mtime;
static long long next_check_ns;
static unsigned long told;

static const struct {
    const char* name;
    int value;
} errnos[] = {{"EIO", EIO},         {"ENOENT", ENOENT}, {"ENOSPC", ENOSPC},
              {"ENOBUFS", ENOBUFS}, {"EINVAL", EINVAL}, {"EAGAIN", EAGAIN},
              {"EACCES", EACCES},   {"EDQUOT", EDQUOT}, {"EINTR", EINTR}};

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// Raw system calls for the shim's own reads: never through umockdev's wrappers or ours.
static void load_rules(void) {
    const char* path = getenv("RDMAD_FAULTS");
    if (!path)
        return;
    long long now = now_ns();
    if (now < next_check_ns)
        return;
    next_check_ns = now + 10 * 1000000LL;
    struct stat st;
    if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) < 0) {
        n_rules = 0;
        rules_mtime.tv_sec = rules_mtime.tv_nsec = 0;
        return;
    }
    if (st.st_mtim.tv_sec == rules_mtime.tv_sec && st.st_mtim.tv_nsec == rules_mtime.tv_nsec)
        return;
    rules_mtime = st.st_mtim;
    char buf[8192];
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t len = 0, n;
    while (len < (ssize_t)sizeof buf - 1 &&
           (n = syscall(SYS_read, fd, buf + len, sizeof buf - 1 - len)) > 0)
        len += n;
    syscall(SYS_close, fd);
    buf[len] = '\0';
    n_rules = 0;
    for (char* save = NULL;;) {
        char* line = strtok_r(save ? NULL : buf, "\n", &save);
        if (!line)
            break;
        char op[16], err[16], glob[256];
        unsigned every = 1;
        if (line[0] == '#' || sscanf(line, "%15s %15s %255s every %u", op, err, glob, &every) < 3)
            continue;
        struct rule r = {.every = every ? every : 1};
        int o;
        for (o = 0; o < OP_COUNT && strcmp(op, op_names[o]); ++o) {
        }
        if (o == OP_COUNT || n_rules == MAX_RULES)
            continue;
        r.op = (enum op)o;
        r.error = 0;
        if (!strcmp(err, "short"))
            r.error = SHORT_IO;
        else if (!strcmp(err, "slow"))
            r.error = SLOW;
        else if (!strcmp(err, "truncate"))
            r.error = TRUNCATE;
        else if (!strcmp(err, "reorder"))
            r.error = REORDER;
        for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; ++i)
            if (!strcmp(err, errnos[i].name))
                r.error = errnos[i].value;
        if (!r.error)
            continue;
        snprintf(r.glob, sizeof r.glob, "%s", glob);
        rules[n_rules++] = r;
    }
}

static void tell(enum op op, int error, const char* what) {
    if (told++ >= 10000)
        return;
    char line[600];
    const char* name = error == SLOW       ? "slow"
                       : error == TRUNCATE ? "truncate"
                       : error == REORDER  ? "reorder"
                                           : "short";
    for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; ++i)
        if (errnos[i].value == error)
            name = errnos[i].name;
    int n = snprintf(line, sizeof line, "rdmad-fault: %s %s %s\n", op_names[op], name, what);
    if (n > 0)
        syscall(SYS_write, 2, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
}

/// The fault for `op` on `what`, 0 for none.
static int fault_for(enum op op, const char* what) {
    load_rules();
    for (int i = 0; i < n_rules; ++i) {
        struct rule* r = &rules[i];
        if (r->op != op || fnmatch(r->glob, what, 0) != 0)
            continue;
        if (r->seen++ % r->every != 0)
            continue;
        tell(op, r->error, what);
        return r->error;
    }
    return 0;
}

static void wait_briefly(void) {
    struct timespec ts = {0, 10 * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static int any_rule(enum op op) {
    load_rules();
    for (int i = 0; i < n_rules; ++i)
        if (rules[i].op == op)
            return 1;
    return 0;
}

static void fd_path(int fd, char* out, size_t size) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = syscall(SYS_readlinkat, AT_FDCWD, link, out, size - 1);
    out[n > 0 ? n : 0] = '\0';
}

static const char* socket_kind(int fd) {
    int domain = 0, type = 0, proto = 0;
    socklen_t l = sizeof domain;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) < 0)
        return "";
    l = sizeof type;
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
    l = sizeof proto;
    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l);
    if (domain == AF_NETLINK)
        return proto == NETLINK_ROUTE ? "route" : "netlink";
    if (domain == AF_UNIX && type == SOCK_DGRAM) {
        // umockdev 0.17 binds its uevent socket to <UMOCKDEV_DIR>/event<N>.
        struct sockaddr_un sa;
        socklen_t sl = sizeof sa;
        memset(&sa, 0, sizeof sa);
        if (getsockname(fd, (struct sockaddr*)&sa, &sl) == 0 && strstr(sa.sun_path, "/event"))
            return "uevent";
    }
    return "";
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static int open_fault(const char* path) {
    if (!path || !any_rule(OP_OPEN))
        return 0;
    int e = fault_for(OP_OPEN, path);
    if (e == SLOW) {
        int saved = errno;
        wait_briefly();
        errno = saved;
    }
    return e < 0 ? 0 : e;
}

#define OPEN_WRAPPER(name, ...)                                                                    \
    int name(__VA_ARGS__, int flags, ...) {                                                        \
        mode_t mode = 0;                                                                           \
        if ((flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE) {                           \
            va_list ap;                                                                            \
            va_start(ap, flags);                                                                   \
            mode = va_arg(ap, mode_t);                                                             \
            va_end(ap);                                                                            \
        }                                                                                          \
        int e = open_fault(path);                                                                  \
        if (e) {                                                                                   \
            errno = e;                                                                             \
            return -1;                                                                             \
        }

OPEN_WRAPPER(open, const char* path)
return NEXT(open)(path, flags, mode);
}
OPEN_WRAPPER(open64, const char* path)
return NEXT(open64)(path, flags, mode);
}
OPEN_WRAPPER(openat, int dirfd, const char* path)
return NEXT(openat)(dirfd, path, flags, mode);
}
OPEN_WRAPPER(openat64, int dirfd, const char* path)
return NEXT(openat64)(dirfd, path, flags, mode);
}

static int io_fault(enum op op, int fd) {
    if (!any_rule(op))
        return 0;
    char path[512];
    fd_path(fd, path, sizeof path);
    return path[0] == '/' ? fault_for(op, path) : 0;
}

ssize_t read(int fd, void* buf, size_t count) {
    int e = io_fault(OP_READ, fd);
    if (e == SHORT_IO)
        count = count > 1 ? 1 : count;
    else if (e == SLOW)
        wait_briefly();
    else if (e < 0)
        ;
    else if (e) {
        errno = e;
        return -1;
    }
    return NEXT(read)(fd, buf, count);
}

ssize_t write(int fd, const void* buf, size_t count) {
    int e = io_fault(OP_WRITE, fd);
    if (e == SHORT_IO)
        count = count > 1 ? 1 : count;
    else if (e < 0)
        ;
    else if (e) {
        errno = e;
        return -1;
    }
    return NEXT(write)(fd, buf, count);
}

static int sync_fault(int fd) {
    int e = io_fault(OP_FSYNC, fd);
    if (e > 0) {
        errno = e;
        return -1;
    }
    return 0;
}

int fsync(int fd) {
    return sync_fault(fd) ? -1 : NEXT(fsync)(fd);
}

int fdatasync(int fd) {
    return sync_fault(fd) ? -1 : NEXT(fdatasync)(fd);
}

int rename(const char* from, const char* to) {
    int e = any_rule(OP_RENAME) ? fault_for(OP_RENAME, to) : 0;
    if (e > 0) {
        errno = e;
        return -1;
    }
    return NEXT(rename)(from, to);
}

// util/atomic_file.cpp renames from a descriptor of the temporary file's directory to the
// file's path: renameat(dirfd, name, AT_FDCWD, path). The rule's glob is on the new name.
int renameat(int from_dir, const char* from, int to_dir, const char* to) {
    int e = any_rule(OP_RENAME) ? fault_for(OP_RENAME, to) : 0;
    if (e > 0) {
        errno = e;
        return -1;
    }
    return NEXT(renameat)(from_dir, from, to_dir, to);
}

static int recv_fault(int fd) {
    if (!any_rule(OP_RECV))
        return 0;
    const char* kind = socket_kind(fd);
    if (!*kind)
        return 0;
    int e = fault_for(OP_RECV, kind);
    if (e == SHORT_IO)
        return 0;
    if (e == SLOW) {
        wait_briefly();
        return 0;
    }
    if (e == ENOBUFS) {
        // The kernel says ENOBUFS when it dropped messages for a full receive buffer
        // (netlink(7)): drop the one queued now, so that only a resync can see its change.
        // Nothing queued: nothing lost, the caller sees the queue empty.
        static char sink[65536];
        if (NEXT(recv)(fd, sink, sizeof sink, MSG_DONTWAIT) < 0)
            return errno;
    }
    return e;
}

// One datagram held back by "reorder", per fd (the daemon has a handful of sockets), with
// its sender and ancillary data (libudev checks a uevent's SCM_CREDENTIALS).
#define MAX_HELD 16
static struct held {
    int fd; // -1: free
    ssize_t len;
    struct sockaddr_storage from;
    socklen_t fromlen;
    char control[512];
    size_t controllen;
    char data[65536];
} held[MAX_HELD] = {[0 ... MAX_HELD - 1] = {.fd = -1}};

static struct held* held_for(int fd) {
    for (int i = 0; i < MAX_HELD; ++i)
        if (held[i].fd == fd)
            return &held[i];
    return NULL;
}

/// Copy a held datagram out as recvmsg() would with `flags`: MSG_PEEK keeps it held,
/// MSG_TRUNC returns its whole length.
static ssize_t give_held(struct held* h, struct msghdr* msg, int flags) {
    size_t off = 0;
    for (size_t i = 0; i < msg->msg_iovlen && off < (size_t)h->len; ++i) {
        size_t n = msg->msg_iov[i].iov_len;
        if (n > (size_t)h->len - off)
            n = (size_t)h->len - off;
        memcpy(msg->msg_iov[i].iov_base, h->data + off, n);
        off += n;
    }
    msg->msg_flags = off < (size_t)h->len ? MSG_TRUNC : 0;
    if (msg->msg_name) {
        socklen_t n = msg->msg_namelen < h->fromlen ? msg->msg_namelen : h->fromlen;
        memcpy(msg->msg_name, &h->from, n);
        msg->msg_namelen = h->fromlen;
    }
    if (msg->msg_control && msg->msg_controllen >= h->controllen) {
        memcpy(msg->msg_control, h->control, h->controllen);
        msg->msg_controllen = h->controllen;
    } else {
        msg->msg_controllen = 0;
    }
    if (!(flags & MSG_PEEK))
        h->fd = -1;
    return (flags & MSG_TRUNC) ? h->len : (ssize_t)off;
}

/// "reorder" on a recvmsg(): hold the first datagram, return the one behind it (or the first,
/// when none is queued).
static ssize_t reorder_recvmsg(int fd, struct msghdr* msg, int flags) {
    struct held* h = NULL;
    for (int i = 0; i < MAX_HELD && !h; ++i)
        if (held[i].fd == -1)
            h = &held[i];
    if (!h)
        return NEXT(recvmsg)(fd, msg, flags);
    struct iovec iov = {h->data, sizeof h->data};
    struct msghdr first = {.msg_name = &h->from, .msg_namelen = sizeof h->from,
                           .msg_iov = &iov, .msg_iovlen = 1,
                           .msg_control = h->control, .msg_controllen = sizeof h->control};
    ssize_t n = NEXT(recvmsg)(fd, &first, flags);
    if (n < 0)
        return -1;
    h->len = n;
    h->fromlen = first.msg_namelen;
    h->controllen = first.msg_controllen;
    h->fd = fd;
    ssize_t r = NEXT(recvmsg)(fd, msg, flags | MSG_DONTWAIT);
    if (r >= 0)
        return r; // the second first; the first waits for the next call
    return give_held(h, msg, flags); // nothing behind it: nothing to reorder
}

ssize_t recvmsg(int fd, struct msghdr* msg, int flags) {
    struct held* h = held_for(fd);
    if (h)
        return give_held(h, msg, flags);
    if (flags & MSG_PEEK) // a peek is not a receive: no fault
        return NEXT(recvmsg)(fd, msg, flags);
    int e = recv_fault(fd);
    if (e > 0) {
        errno = e;
        return -1;
    }
    if (e == TRUNCATE && msg->msg_iovlen > 0) {
        // A smaller buffer: the kernel truncates the datagram and drops the rest.
        struct iovec first = msg->msg_iov[0];
        size_t iovlen = msg->msg_iovlen;
        msg->msg_iov[0].iov_len = first.iov_len < 20 ? first.iov_len : 20;
        msg->msg_iovlen = 1;
        ssize_t r = NEXT(recvmsg)(fd, msg, flags);
        msg->msg_iov[0] = first;
        msg->msg_iovlen = iovlen;
        return r;
    }
    if (e == REORDER)
        return reorder_recvmsg(fd, msg, flags);
    return NEXT(recvmsg)(fd, msg, flags);
}

// recv() and recvfrom() keep their own paths to the next library (umockdev's preload wraps
// some of them, and its recvmsg() cannot take libudev's size peek, a NULL buffer); only a
// held datagram or a fault goes through recvmsg().
ssize_t recvfrom(int fd, void* buf, size_t len, int flags, struct sockaddr* from,
                 socklen_t* fromlen) {
    struct held* h = held_for(fd);
    if (h && (flags & MSG_PEEK)) {
        size_t n = len < (size_t)h->len ? len : (size_t)h->len;
        if (buf && n)
            memcpy(buf, h->data, n);
        return (flags & MSG_TRUNC) ? h->len : (ssize_t)n;
    }
    if (!h && (flags & MSG_PEEK))
        return NEXT(recvfrom)(fd, buf, len, flags, from, fromlen);
    if (h || any_rule(OP_RECV)) {
        const char* kind = socket_kind(fd);
        if (*kind || held_for(fd)) {
            struct iovec iov = {buf, len};
            struct msghdr msg = {.msg_name = from, .msg_namelen = from && fromlen ? *fromlen : 0,
                                 .msg_iov = &iov, .msg_iovlen = 1};
            ssize_t r = recvmsg(fd, &msg, flags);
            if (r >= 0 && from && fromlen)
                *fromlen = msg.msg_namelen;
            return r;
        }
    }
    return NEXT(recvfrom)(fd, buf, len, flags, from, fromlen);
}

ssize_t recv(int fd, void* buf, size_t len, int flags) {
    if (held_for(fd) || (any_rule(OP_RECV) && *socket_kind(fd)))
        return recvfrom(fd, buf, len, flags, NULL, NULL);
    return NEXT(recv)(fd, buf, len, flags);
}
