// SPDX-License-Identifier: MIT
//
// LD_PRELOAD shim for the integration suite: rdma_cm's configfs as the kernel makes it, in the
// umockdev testbed, where /sys/kernel/config is a plain directory. Loaded into rdmad ahead of
// umockdev's preload (which maps /sys to the testbed); rdmad's own code is unchanged.
//
// mkdir("/sys/kernel/config/rdma_cm/<dev>") is answered as make_cma_dev() answers it
// (drivers/infiniband/core/cma_configfs.c): ENODEV when the testbed has no RDMA device <dev>,
// EEXIST when the group is there, else the group appears with ports/<n>/default_roce_mode and
// default_roce_tos for each port, holding what cma_add_one() gives a device (rdma_cm_model.h).
// Every other mkdir goes on to umockdev unchanged. `<configfs>/rdma_cm` itself is the test's to
// make (the rdma_cm module loaded, configfs mounted).
//
// FAKE_CONFIGFS_BEFORE_4_11=1  a kernel from 4.5 to 4.10: port groups without default_roce_tos,
//                              every port starting on "IB/RoCE v1"
#define _GNU_SOURCE
#include "rdma_cm_model.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#define RDMA_CM_DIR "/sys/kernel/config/rdma_cm/"

int mkdir(const char* path, mode_t mode) {
    int (*real)(const char*, mode_t) = dlsym(RTLD_NEXT, "mkdir");
    const size_t prefix = strlen(RDMA_CM_DIR);
    if (strncmp(path, RDMA_CM_DIR, prefix) != 0)
        return real(path, mode);
    char name[256];
    const char* rest = path + prefix;
    const size_t len = strcspn(rest, "/");
    if (len == 0 || len >= sizeof name || strspn(rest + len, "/") != strlen(rest + len))
        return real(path, mode); // not a group of rdma_cm itself (ports/1 and below)
    memcpy(name, rest, len);
    name[len] = 0;
    // make_cma_dev() looks the device up before configfs makes the directory.
    char device[512];
    struct stat st;
    snprintf(device, sizeof device, "/sys/class/infiniband/%s", name);
    if (stat(device, &st) != 0) {
        errno = ENODEV;
        return -1;
    }
    if (real(path, mode) != 0)
        return -1; // EEXIST, or whatever umockdev's directory answers
    const char* old = getenv("FAKE_CONFIGFS_BEFORE_4_11");
    const int e = rdma_cm_model_fill_group("", name, old && strcmp(old, "1") == 0);
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}
