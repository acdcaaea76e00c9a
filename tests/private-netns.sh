#!/bin/sh
# SPDX-License-Identifier: MIT
# private-netns.sh COMMAND [ARG...]: run COMMAND (an integration test file) in a network
# namespace of its own, so that test runs side by side on one machine never meet:
# - the veths a test makes, and the DCB notifications fake_dcbnl.c and the tests multicast to
#   RTNLGRP_DCB, stay in the namespace (rtnetlink groups are per network namespace);
# - net.unix.max_dgram_qlen is per network namespace (it is read when a socket is made): it is
#   raised to 4096 here, for umockdev's uevent sender, which aborts the test when a listener's
#   queue is full (the default is 10, too few for a slow ASan daemon in an SR-IOV burst), and a
#   test may lower it without touching the machine's.
# Loopback is brought up for the tests that talk HTTP to node-exporter on 127.0.0.1.
# Unix sockets bound to paths (the private bus, umockdev's) work across namespaces.
# unshare(1) execs COMMAND in place: meson's timeout signal reaches the test itself.
exec unshare --net sh -c '
  ip link set lo up &&
  echo 4096 > /proc/sys/net/unix/max_dgram_qlen &&
  exec "$@"' private-netns "$@"
