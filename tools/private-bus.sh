#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Source this: start a private system-like dbus-daemon in $1 (a directory) and export
# DBUS_SYSTEM_BUS_ADDRESS; stop_private_bus stops it.
start_private_bus() {
  local dir=$1
  cat > "$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/bus.socket</listen>
  <auth>EXTERNAL</auth>
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
  PRIVATE_BUS_PID=$(env -u LD_PRELOAD dbus-daemon --config-file="$dir/bus.conf" --fork --print-pid)
  export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/bus.socket"
}
stop_private_bus() {
  [ -n "${PRIVATE_BUS_PID:-}" ] && kill "$PRIVATE_BUS_PID" 2>/dev/null || true
}
