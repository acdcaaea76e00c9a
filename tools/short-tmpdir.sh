#!/bin/sh
# SPDX-License-Identifier: MIT
# short-tmpdir.sh [COMMAND [ARG...]]: pick the directory tests and the demo make their
# sockets, bus addresses and runtime directories under, decided when they run (not when the
# build is configured), and either print it or run COMMAND with TMPDIR set to it.
#
# It is $TMPDIR when that is an existing directory of at most 40 characters made only of
# [A-Za-z0-9/._-], else /tmp:
# - AF_UNIX socket paths hold 108 bytes (sun_path, unix(7)), and mkdtemp directories, umockdev's
#   testbed and dbus-daemon's sockets nest below it;
# - a D-Bus address escapes every other byte (D-Bus specification, "Server Addresses"), and
#   LD_PRELOAD splits at spaces (ld.so(8)): such a directory would have to be quoted in places
#   that cannot quote.
# A TMPDIR that is set but does not name a directory is an error that names it: tests would
# otherwise fail later in mkdtemp with no name at all.
t=${TMPDIR:-}
if [ -n "$t" ] && [ ! -d "$t" ]; then
  echo "short-tmpdir.sh: TMPDIR=$t is not a directory; unset it or create it" >&2
  exit 1
fi
case $t in
  ''|*[!A-Za-z0-9/._-]*) t=/tmp ;;
esac
[ ${#t} -le 40 ] || t=/tmp
if [ $# -eq 0 ]; then
  printf '%s\n' "$t"
else
  TMPDIR=$t exec "$@"
fi
