// SPDX-License-Identifier: MIT
//
// LD_PRELOAD shim for the integration suite: `sriov_numvfs` of a PCI function as the kernel
// answers a write to it, in the umockdev testbed, where it is a plain file. Loaded into rdmad
// ahead of umockdev's preload (which maps /sys to the testbed); rdmad's own code is unchanged.
//
// A write to a path ending in "/sriov_numvfs" is answered as drivers/pci/iov.c
// sriov_numvfs_store() answers it: a value that is no u16 is EINVAL, more than the sibling
// `sriov_totalvfs` is ERANGE, the count the file holds already is accepted and changes nothing,
// a non-zero count while the file holds another non-zero count is EBUSY ("Disable before
// enabling"), anything else replaces the file's value. Each write is appended to
// $FAKE_SRIOV_LOG as "<PCI address> <value written> <errno, 0 when accepted>\n", so the test
// sees every value in order (inotify would show only the file's last value). The VFs
// themselves are the test's to add, as the kernel's driver would.
//
// FAKE_SRIOV_ERRNO=<n>: every non-zero count that passes those checks is refused with errno n,
// as when the driver's sriov_configure() fails (mlx5_sriov_enable() passes on what
// pci_enable_sriov() or the firmware answered, e.g. ENOMEM).
//
// The file is opened without O_TRUNC here (the shim truncates when it accepts a value), so a
// refused write leaves the old value, as the kernel's attribute does.
#define _GNU_SOURCE
// open() and open64() are both wrapped: without this, <fcntl.h> makes `open` a name for open64
// (the build's -D_FILE_OFFSET_BITS=64) and the two definitions clash.
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FD 4096
#define SUFFIX "/sriov_numvfs"

// The path of each fd opened for writing on an sriov_numvfs file, else NULL.
static char* paths[MAX_FD];

static int is_numvfs(const char* path) {
    const size_t n = strlen(path), s = strlen(SUFFIX);
    return n > s && strcmp(path + n - s, SUFFIX) == 0;
}

/// A file's decimal value through the next open() (umockdev's, mapping /sys), -1 if none.
static long read_value(const char* path) {
    int (*real_open)(const char*, int, ...) = dlsym(RTLD_NEXT, "open");
    const int fd = real_open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[32] = {0};
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    char* end = NULL;
    const long v = strtol(buf, &end, 10);
    return end == buf ? -1 : v;
}

static int opened(const char* path, int flags, mode_t mode, const char* symbol) {
    int (*real)(const char*, int, ...) = dlsym(RTLD_NEXT, symbol);
    const int writing = (flags & O_ACCMODE) != O_RDONLY && is_numvfs(path);
    const int fd = real(path, writing ? flags & ~O_TRUNC : flags, mode);
    if (writing && fd >= 0 && fd < MAX_FD) {
        free(paths[fd]);
        paths[fd] = strdup(path);
    }
    return fd;
}

int open(const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    const mode_t mode = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    return opened(path, flags, mode, "open");
}

int open64(const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    const mode_t mode = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    return opened(path, flags, mode, "open64");
}

int close(int fd) {
    int (*real)(int) = dlsym(RTLD_NEXT, "close");
    if (fd >= 0 && fd < MAX_FD && paths[fd]) {
        free(paths[fd]);
        paths[fd] = NULL;
    }
    return real(fd);
}

static void log_write(const char* path, const char* value, int error) {
    const char* log = getenv("FAKE_SRIOV_LOG");
    if (!log)
        return;
    // The PCI address: the directory's name.
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    char* slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    slash = strrchr(dir, '/');
    FILE* f = fopen(log, "ae");
    if (!f)
        return;
    fprintf(f, "%s %s %d\n", slash ? slash + 1 : dir, value, error);
    fclose(f);
}

ssize_t write(int fd, const void* data, size_t size) {
    ssize_t (*real)(int, const void*, size_t) = dlsym(RTLD_NEXT, "write");
    if (fd < 0 || fd >= MAX_FD || !paths[fd])
        return real(fd, data, size);
    const char* path = paths[fd];
    char text[32];
    const size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = 0;
    text[strcspn(text, "\n")] = 0;
    // kstrtou16(buf, 0, ...): a u16, a trailing newline allowed.
    char* end = NULL;
    const long want = strtol(text, &end, 10);
    int error = 0;
    char total_path[600];
    snprintf(total_path, sizeof total_path, "%.*s/sriov_totalvfs",
             (int)(strlen(path) - strlen(SUFFIX)), path);
    const long total = read_value(total_path), now = read_value(path);
    if (end == text || *end || want < 0 || want > 65535)
        error = EINVAL;
    else if (want > total)
        error = ERANGE;
    else if (want != now && want != 0 && now > 0)
        error = EBUSY;
    else if (want != now && want != 0 && getenv("FAKE_SRIOV_ERRNO"))
        error = atoi(getenv("FAKE_SRIOV_ERRNO"));
    log_write(path, text, error);
    if (error) {
        errno = error;
        return -1;
    }
    if (want == now)
        return (ssize_t)size;
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        return -1;
    return (ssize_t)size;
}
