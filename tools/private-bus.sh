#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Source this: start a private system-like dbus-daemon in $1 (a directory) and export
# DBUS_SYSTEM_BUS_ADDRESS; stop_private_bus stops it. private_bus_conf writes the
# configuration alone (tests/dbus-fuzz/rdmad_rig.py starts the daemon itself, as its child).

# dbus_address_value VALUE: VALUE as a value in a D-Bus address, every byte outside
# [-0-9A-Za-z_/.\*] written %xx (D-Bus specification, "Server Addresses"). What it prints is
# also plain XML character data (no &, <, >, quotes).
dbus_address_value() {
  local LC_ALL=C s=$1 out='' c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      [-0-9A-Za-z_/.*\\]) out+=$c ;;
      *) printf -v c '%%%02x' "'$c"; out+=$c ;;
    esac
  done
  printf '%s\n' "$out"
}

# private_bus_conf DIR: write DIR/bus.conf, a system-like bus listening on DIR/bus.socket;
# sets PRIVATE_BUS_ADDRESS to its address. PRIVATE_BUS_AUTH_TIMEOUT_MS, when set, is the time a
# client has to authenticate (dbus-daemon's auth_timeout, 30 s by default on the system bus:
# dbus 1.8.12 NEWS); rdmad under valgrind at 1,024 devices scans for longer than that before
# its loop answers the bus, which then drops it.
private_bus_conf() {
  local dir=$1 limit=''
  PRIVATE_BUS_ADDRESS="unix:path=$(dbus_address_value "$dir/bus.socket")"
  if [ -n "${PRIVATE_BUS_AUTH_TIMEOUT_MS:-}" ]; then
    limit="<limit name=\"auth_timeout\">$((PRIVATE_BUS_AUTH_TIMEOUT_MS))</limit>"
  fi
  cat > "$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>$PRIVATE_BUS_ADDRESS</listen>
  <auth>EXTERNAL</auth>
  $limit
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
  </policy>
</busconfig>
CONF
}

start_private_bus() {
  private_bus_conf "$1"
  PRIVATE_BUS_PID=$(env -u LD_PRELOAD dbus-daemon --config-file="$1/bus.conf" --fork --print-pid)
  export DBUS_SYSTEM_BUS_ADDRESS=$PRIVATE_BUS_ADDRESS
}
stop_private_bus() {
  [ -n "${PRIVATE_BUS_PID:-}" ] && kill "$PRIVATE_BUS_PID" 2>/dev/null || true
}
