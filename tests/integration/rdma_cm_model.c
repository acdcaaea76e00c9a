// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "rdma_cm_model.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/// A path from `fmt`, or "" when it does not fit (then nothing is found or made).
__attribute__((format(printf, 3, 4))) static void path_of(char* out, size_t size,
                                                          const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(out, size, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size)
        out[0] = 0;
}

static int make_dir(const char* path) {
    return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : errno;
}

/// The whole of `text` into `path`, created or truncated: what the kernel would show.
static int put_file(const char* path, const char* text) {
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno;
    const size_t n = strlen(text);
    const int e = write(fd, text, n) == (ssize_t)n ? 0 : (errno ? errno : EIO);
    close(fd);
    return e;
}

/// The first line of `path`, without its newline; "" when unreadable.
static void first_line(const char* path, char* out, size_t size) {
    out[0] = 0;
    FILE* f = fopen(path, "re");
    if (!f)
        return;
    if (!fgets(out, (int)size, f))
        out[0] = 0;
    fclose(f);
    out[strcspn(out, "\n")] = 0;
}

/// cma_add_one() since 4.13: "RoCE v2" where the port supports it, else "IB/RoCE v1".
static const char* default_mode(const char* port_dir) {
    char path[PATH_MAX], line[64];
    path_of(path, sizeof path, "%s/link_layer", port_dir);
    first_line(path, line, sizeof line);
    if (strcmp(line, "Ethernet") != 0)
        return "IB/RoCE v1"; // roce_gid_type_mask_support(): IB_GID_TYPE_IB only
    path_of(path, sizeof path, "%s/gid_attrs/types", port_dir);
    DIR* types = opendir(path);
    if (!types)
        return "RoCE v2";
    int typed = 0, v2 = 0;
    for (struct dirent* e; (e = readdir(types));) {
        if (e->d_name[0] == '.')
            continue;
        char file[PATH_MAX];
        path_of(file, sizeof file, "%s/%s", path, e->d_name);
        first_line(file, line, sizeof line);
        if (line[0]) // an empty entry reads EINVAL on a kernel; nothing here
            typed = 1;
        if (strcmp(line, "RoCE v2") == 0)
            v2 = 1;
    }
    closedir(types);
    return v2 || !typed ? "RoCE v2" : "IB/RoCE v1";
}

int rdma_cm_model_fill_group(const char* sysroot, const char* device, int before_4_11) {
    char ports[PATH_MAX], group[PATH_MAX];
    path_of(ports, sizeof ports, "%s/sys/class/infiniband/%s/ports", sysroot, device);
    DIR* dir = opendir(ports);
    if (!dir)
        return ENODEV; // make_cma_dev(): no cma_device of that name
    path_of(group, sizeof group, "%s/sys/kernel/config/rdma_cm/%s", sysroot, device);
    int e = make_dir(group);
    char path[PATH_MAX];
    if (!e) {
        path_of(path, sizeof path, "%s/ports", group);
        e = make_dir(path);
    }
    for (struct dirent* p; !e && (p = readdir(dir));) {
        char* end;
        const unsigned long n = strtoul(p->d_name, &end, 10);
        if (*end || n == 0)
            continue; // ".", ".."
        char port_dir[PATH_MAX];
        path_of(port_dir, sizeof port_dir, "%s/%lu", ports, n);
        path_of(path, sizeof path, "%s/ports/%lu", group, n);
        e = make_dir(path);
        if (!e) {
            char file[PATH_MAX], text[32];
            path_of(file, sizeof file, "%s/default_roce_mode", path);
            snprintf(text, sizeof text, "%s\n",
                     before_4_11 ? "IB/RoCE v1" : default_mode(port_dir));
            e = put_file(file, text);
        }
        if (!e && !before_4_11) {
            char file[PATH_MAX];
            path_of(file, sizeof file, "%s/default_roce_tos", path);
            e = put_file(file, "0\n");
        }
    }
    closedir(dir);
    return e;
}
