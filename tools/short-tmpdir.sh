#!/bin/sh
# SPDX-License-Identifier: MIT
# short-tmpdir.sh [COMMAND [ARG...]]: pick the directory tests and the demo make their
# sockets, bus addresses and runtime directories under, decided when they run (not when the
# build is configured), and either print it or run COMMAND with TMPDIR set to it.
#
# It is $TMPDIR when that is an absolute path of at most 40 characters made only of
# [A-Za-z0-9/._-], else /tmp (and a line on stderr says why):
# - a relative one would name a directory below wherever a test runs, the build directory
#   (meson test runs tests there), and tests change directory;
# - AF_UNIX socket paths hold 108 bytes (sun_path, unix(7)), and mkdtemp directories, umockdev's
#   testbed and dbus-daemon's sockets nest below it;
# - a D-Bus address escapes every other byte (D-Bus specification, "Server Addresses"), and
#   LD_PRELOAD splits at spaces (ld.so(8)): such a directory would have to be quoted in places
#   that cannot quote.
# A TMPDIR that is set but does not name a directory, or one where no directory can be made
# (read-only, /proc), is an error that names it: tests would otherwise fail later in mkdtemp,
# and Python's tempfile would go to /tmp on its own while the C++ tests do not.
t=${TMPDIR:-}
why=
case $t in
  '') t=/tmp ;;
  /*) ;;
  *) why="is relative" ;;
esac
# Only an absolute one is looked at: a relative one would name a directory under wherever the
# test runs (the build directory), and falls back to /tmp below whether or not that exists.
if [ -z "$why" ] && [ ! -d "$t" ]; then
  echo "short-tmpdir.sh: TMPDIR=$t is not a directory; unset it or create it" >&2
  exit 1
fi
if [ -z "$why" ]; then
  case $t in
    *[!A-Za-z0-9/._-]*) why="has a character outside [A-Za-z0-9/._-]" ;;
    *) [ ${#t} -le 40 ] || why="is longer than 40 characters" ;;
  esac
fi
if [ -n "$why" ]; then
  echo "short-tmpdir.sh: TMPDIR=$t $why; using /tmp" >&2
  t=/tmp
fi
# Whether a directory can be made there, the way the tests make theirs.
if ! probe=$(mktemp -d "$t/short-tmpdir.XXXXXX" 2>&1); then
  echo "short-tmpdir.sh: cannot make a directory in TMPDIR=$t (${probe#mktemp: }); set TMPDIR to one where tests can" >&2
  exit 1
fi
rmdir "$probe"
if [ $# -eq 0 ]; then
  printf '%s\n' "$t"
else
  TMPDIR=$t exec "$@"
fi
