// SPDX-License-Identifier: MIT
//
// The RDMA page of Cockpit: a thin client of rdmad's D-Bus API (org.rdmad1 on the system bus,
// dbus/*.xml, man org.rdmad1(5)). It reads nothing else: no sysfs, no netlink, no commands.
//
// One cockpit.dbus() client reads everything once with Manager.Describe() (one JSON string;
// the bridge's watch of the same objects took 4 to 8 s at 1,024 devices, bench/README.md) and
// then follows the signals only: InterfacesAdded/Removed of the ObjectManager and
// PropertiesChanged below /org/rdmad1. The page never polls. A PropertiesChanged of one port
// rewrites the cells of that port's row only.
// When rdmad's bus name gets a new owner (rdmad restarted), the page drops the client, reads
// everything again with a new one and says so. Opened while rdmad is not running (the bridge
// closes the client with "not-found"), it waits for NameOwnerChanged of org.rdmad1 and then
// connects.

"use strict";

window.rdmadTimes = { script: performance.now() };

const BUS_NAME = "org.rdmad1";
const ROOT = "/org/rdmad1";
const IFACE = {
    manager: "org.rdmad1.Manager",
    device: "org.rdmad1.Device",
    port: "org.rdmad1.Port",
    link: "org.rdmad1.Link",
};

// ---- small DOM helpers --------------------------------------------------------------------

// el("td", {class: "x", dataset: {field: "State"}}, "text", child...): a new element.
function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false)
            continue;
        if (k === "class")
            e.className = v;
        else if (k === "dataset")
            Object.assign(e.dataset, v);
        else if (k === "text")
            e.textContent = v;
        else if (k.startsWith("on"))
            e.addEventListener(k.slice(2), v);
        else
            e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) {
        if (c === undefined || c === null || c === false)
            continue;
        e.append(c instanceof Node ? c : String(c));
    }
    return e;
}

// A function that runs `fn` once, 30 ms after the first of any number of calls.
function coalesce(fn) {
    let timer = null;
    return () => {
        if (timer === null)
            timer = window.setTimeout(() => {
                timer = null;
                fn();
            }, 30);
    };
}

function $(id) {
    return document.getElementById(id);
}

// Sets an element's text only when it differs (no layout work for unchanged cells).
function setText(e, text) {
    if (e.textContent !== text)
        e.textContent = text;
}

function byName(a, b) {
    return a.localeCompare(b, undefined, { numeric: true });
}

// "ay" values travel base64-encoded in Cockpit's dbus-json3 protocol.
function bytes(v) {
    if (v === undefined || v === null)
        return [];
    if (typeof v === "string")
        return Array.from(cockpit.base64_decode(v));
    return Array.from(v);
}

// A D-Bus error as "name: message" (never swallowed); a closed channel by its problem.
function errorText(err) {
    if (!err)
        return "unknown error";
    if (err.name && err.name !== "Error")
        return err.name + ": " + (err.message || "");
    if (err.problem)
        return err.problem + ": " + cockpit.message(err);
    return err.message || String(err);
}

function timeNow() {
    return new Date().toLocaleTimeString();
}

// ---- theme: follow Cockpit's shell (localStorage "shell:style") and the OS preference -----

const darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

function applyTheme(style) {
    let s = style;
    if (!s) {
        try {
            s = window.localStorage.getItem("shell:style");
        } catch (e) {
            s = null;
        }
    }
    s = s || "auto";
    const dark = s === "dark" || (s === "auto" && darkQuery && darkQuery.matches);
    document.documentElement.classList.toggle("pf-theme-dark", dark);
    document.documentElement.classList.toggle("pf-v5-theme-dark", dark);
}

applyTheme();
window.addEventListener("storage", ev => {
    if (ev.key === "shell:style")
        applyTheme();
});
window.addEventListener("cockpit-style", ev => applyTheme(ev.detail && ev.detail.style));
if (darkQuery && darkQuery.addEventListener)
    darkQuery.addEventListener("change", () => applyTheme());

// ---- banners ------------------------------------------------------------------------------

// Shows (or replaces) the banner `key`: kind "info", "success", "warning" or "danger".
function banner(key, kind, text, dismissable) {
    let b = document.querySelector(`#banners [data-key="${key}"]`);
    if (!b) {
        b = el("div", { dataset: { key } });
        $("banners").append(b);
    }
    b.className = "rd-alert rd-alert-" + kind;
    b.replaceChildren(el("span", { class: "rd-alert-text", text }));
    if (dismissable)
        b.append(el("button", { class: "rd-link", type: "button", text: "Dismiss", onclick: () => b.remove() }));
}

function clearBanner(key) {
    const b = document.querySelector(`#banners [data-key="${key}"]`);
    if (b)
        b.remove();
}

// ---- administrative access ------------------------------------------------------------------

const permission = cockpit.permission({ admin: true });
let adminReason = "Checking administrative access…";

function updateAdmin() {
    if (permission.allowed === true)
        adminReason = "";
    else if (permission.allowed === false)
        adminReason = "Changes need administrative access (polkit action org.rdmad1.configure): " +
            "turn on administrative access in Cockpit's top bar.";
    const note = $("admin-note");
    note.hidden = !adminReason;
    note.textContent = adminReason;
    refreshControls();
}
permission.addEventListener("changed", updateAdmin);

// Enables or disables every control that changes something, with its reason as a tooltip.
function refreshControls() {
    for (const b of document.querySelectorAll("[data-admin]")) {
        const own = b.dataset.reason || "";
        const reason = adminReason || own;
        b.disabled = !!reason || b.dataset.busy === "1";
        if (reason)
            b.title = reason;
        else
            b.removeAttribute("title");
    }
}

// ---- the model ------------------------------------------------------------------------------

let client = null; // the cockpit.dbus client of this generation
// The objects: path -> {path, valid, data} where data holds the D-Bus properties as the
// bridge's dbus-json3 gives them (structs as arrays, "ay" as base64 or, from Describe(), as an
// array of numbers). Plain objects, not cockpit.js proxies: with 1,024 devices, creating a
// proxy per object costs seconds.
let devices = {};
let ports = {};
let links = {};
let manager = { valid: false, data: {} };
let loaded = false;
let knownOwner = null; // the unique name that owned org.rdmad1 when this client read it
let ownerSeen = false; // this page has seen rdmad running at least once
let restarts = 0;

function devicePathOfPort(path) {
    const i = path.lastIndexOf("/port/");
    return i < 0 ? "" : path.substring(0, i);
}

function deviceData(path) {
    const p = devices[path];
    return p && p.valid ? p.data : null;
}

function portData(path) {
    const p = ports[path];
    return p && p.valid ? p.data : null;
}

function linkName(path) {
    if (!path || path === "/")
        return "";
    const p = links[path];
    return p && p.valid ? p.data.Name : path;
}

function deviceName(path) {
    const d = deviceData(path);
    return d ? d.Name : "";
}

// Every object of a store.
function each(store) {
    return Object.values(store);
}

// A "notify" message of the bridge: {path: {interface: changed properties, or null when the
// interface went away}}. Only the objects named change; nothing is read again.
function onNotify(msg) {
    for (const path in msg) {
        const ifaces = msg[path];
        for (const iface in ifaces) {
            const props = ifaces[iface];
            if (iface === IFACE.manager) {
                if (props) {
                    manager.valid = true;
                    Object.assign(manager.data, props);
                } else {
                    manager = { valid: false, data: {} };
                }
                if (loaded)
                    renderManager();
                continue;
            }
            const store = iface === IFACE.device ? devices : iface === IFACE.port ? ports : iface === IFACE.link ? links : null;
            if (!store)
                continue;
            if (props === null) {
                const o = store[path];
                if (!o)
                    continue;
                delete store[path];
                if (loaded) {
                    if (store === ports)
                        portRemoved(o);
                    else
                        scheduleFull();
                }
                continue;
            }
            let o = store[path];
            if (!o)
                o = store[path] = { path, valid: true, data: {} };
            Object.assign(o.data, props);
            if (loaded) {
                if (store === ports)
                    portChanged(o);
                else if (store === devices)
                    deviceChanged(o);
                else
                    linkChanged(o);
            }
        }
    }
}

// Devices sorted by name, each with its ports sorted by number.
function sortedDevices() {
    const devs = each(devices).sort((a, b) => byName(a.data.Name || "", b.data.Name || ""));
    const portsOf = {};
    for (const p of each(ports)) {
        const d = devicePathOfPort(p.path);
        (portsOf[d] = portsOf[d] || []).push(p);
    }
    for (const k in portsOf)
        portsOf[k].sort((a, b) => (a.data.Number || 0) - (b.data.Number || 0));
    return devs.map(d => ({ dev: d, ports: portsOf[d.path] || [] }));
}

// ---- connecting and following rdmad ---------------------------------------------------------

function connect(reason) {
    if (client) {
        const old = client;
        client = null;
        old.close();
    }
    loaded = false;
    const c = cockpit.dbus(BUS_NAME, { bus: "system", superuser: "try" });
    client = c;
    knownOwner = null;
    c.addEventListener("owner", (ev, owner) => {
        if (c !== client)
            return;
        onOwner(owner);
    });
    c.addEventListener("close", (ev, opts) => {
        if (c !== client)
            return;
        // The bridge closes a client of a name without an owner with "not-found": rdmad is
        // not running. Wait for it to start instead of giving up.
        if (opts && opts.problem === "not-found") {
            onOwner(null);
            awaitRdmad();
            return;
        }
        banner("connection", "danger", "The connection to the system bus closed: " +
            errorText(opts) + ". Reload the page.");
    });
    devices = {};
    ports = {};
    links = {};
    manager = { valid: false, data: {} };
    // Signals first, then Describe(): rdmad's messages reach the bridge in the order it sent
    // them, so a signal that arrives before the reply was sent before it, and the reply
    // already holds its change; one that arrives after is newer than the reply.
    let described = false;
    const onSignal = msg => {
        if (c === client && described)
            onNotify(msg);
    };
    c.subscribe({ path_namespace: ROOT, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged" },
        (path, iface, signal, args) => onSignal({ [path]: { [args[0]]: unvariant(args[1]) } }));
    c.subscribe({ path: ROOT, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded" },
        (path, iface, signal, args) => {
            const added = {};
            for (const name in args[1])
                added[name] = unvariant(args[1][name]);
            onSignal({ [args[0]]: added });
        });
    c.subscribe({ path: ROOT, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved" },
        (path, iface, signal, args) => {
            const removed = {};
            for (const name of args[1])
                removed[name] = null;
            onSignal({ [args[0]]: removed });
        });

    // A failed read (rdmad busy past the bridge's timeout, an error reply) is tried again,
    // 1 s later, then 2, 4 ... up to 30 s apart, until it succeeds or rdmad is replaced.
    let retryDelay = 1000;
    const read = () => c.call(ROOT, IFACE.manager, "Describe", [], { type: "" }).then(reply => {
        if (c !== client)
            return;
        window.rdmadTimes.notify = performance.now();
        applyDescribe(JSON.parse(reply[0]));
        described = true;
        loaded = true;
        clearBanner("load");
        renderAll();
        if (reason) {
            const counts = `${each(devices).length} devices, ${each(ports).length} ports, ` +
                `${each(links).length} netdevs`;
            banner("restart", "info", `${reason} The page read everything again at ${timeNow()} (${counts}).`, true);
        }
    }).catch(err => {
        if (c !== client)
            return;
        loaded = true;
        renderAll();
        // A missing name is told by the "close" event (rdmad not running), not as an error.
        if (knownOwner === "" || (err && (err.problem === "not-found" || err.name === "org.freedesktop.DBus.Error.ServiceUnknown")))
            return;
        banner("load", "danger", `Cannot read rdmad's objects: ${errorText(err)}. Trying again in ${retryDelay / 1000} s.`);
        window.setTimeout(() => {
            if (c === client && !described)
                read();
        }, retryDelay);
        retryDelay = Math.min(retryDelay * 2, 30000);
    });
    read();
}

// {name: {t: signature, v: value}} of a signal (dbus-json3) as {name: value}.
function unvariant(props) {
    const out = {};
    for (const name in props)
        out[name] = props[name].v;
    return out;
}

// Describe() names the fields of structs; the bridge gives structs as arrays in D-Bus order
// (dbus/*.xml). The fields of each struct property, in that order:
const STRUCT_FIELDS = {
    Problems: ["Code", "Severity", "Text"],                                      // a(sss)
    ProblemDetails: ["Code", "Severity", "Text", "Evidence", "Remedy", "Port"],  // a(sssassu)
    GIDs: ["Index", "GID", "Type", "Netdev"],                                    // a(usss)
    RecommendedGID: ["Index", "GID", "Type", "Netdev", "IP"],                    // (ussss)
    DSCPPriority: ["DSCP", "Priority"],                                          // a(yy)
    DesiredDSCPPriority: ["DSCP", "Priority"],                                   // a(yy)
    DesiredOrigin: ["Key", "Origin"],                                            // a(ss)
};

// One object of Describe() as the bridge would give its properties.
function fromDescribe(obj) {
    const data = {};
    for (const name in obj) {
        if (name === "Path")
            continue;
        const fields = STRUCT_FIELDS[name];
        const v = obj[name];
        if (!fields)
            data[name] = v;
        else if (Array.isArray(v))
            data[name] = v.map(x => fields.map(f => x[f]));
        else
            data[name] = fields.map(f => v[f]);
    }
    return data;
}

// The stores from one Describe() reply (org.rdmad1.Manager(5)): devices with their ports
// nested, netdevs, and the Manager's own properties at the top.
function applyDescribe(doc) {
    devices = {};
    ports = {};
    links = {};
    for (const d of doc.Devices || []) {
        const data = fromDescribe(d);
        data.Ports = (d.Ports || []).map(p => p.Path);
        devices[d.Path] = { path: d.Path, valid: true, data };
        for (const p of d.Ports || [])
            ports[p.Path] = { path: p.Path, valid: true, data: fromDescribe(p) };
    }
    for (const l of doc.Links || [])
        links[l.Path] = { path: l.Path, valid: true, data: fromDescribe(l) };
    const m = {};
    for (const name of ["Version", "State", "DesiredStateSource", "Problems"])
        if (name in doc)
            m[name] = doc[name];
    manager = { valid: true, data: fromDescribe(m) };
}

// The owner of org.rdmad1: a unique name, or null while rdmad is not on the bus. The first
// event of a client tells who owned the name when it read; any other owner after that is a
// restarted (or newly started) rdmad, whose objects the page reads again with a new client.
function onOwner(owner) {
    if (owner === null || owner === undefined) {
        if (ownerSeen)
            banner("owner", "warning", `rdmad left the system bus at ${timeNow()}: the values shown are the last ones it published.`);
        else
            banner("owner", "warning", "rdmad is not running (org.rdmad1 has no owner on the system bus).");
        if (knownOwner === null)
            knownOwner = "";
        setDaemonState("not running");
        document.body.classList.add("rd-stale");
        return;
    }
    clearBanner("owner");
    document.body.classList.remove("rd-stale");
    if (knownOwner === null) {
        knownOwner = owner;
        ownerSeen = true;
        return;
    }
    if (owner !== knownOwner) {
        const was = knownOwner;
        ownerSeen = true;
        restarts++;
        connect(was === "" ? `rdmad started (${owner}).` : `rdmad restarted (was ${was}, now ${owner}).`);
    }
}

// While rdmad is not running and the client of org.rdmad1 is closed, a client of the bus
// itself watches NameOwnerChanged of org.rdmad1 (the bus sends it when rdmad takes the name;
// no polling). GetNameOwner after subscribing catches an rdmad that started in between.
let ownerWatch = null;

function awaitRdmad() {
    if (ownerWatch)
        return;
    const bus = cockpit.dbus("org.freedesktop.DBus", { bus: "system" });
    ownerWatch = bus;
    let subscription = null;
    const appeared = owner => {
        if (ownerWatch !== bus || !owner)
            return;
        ownerWatch = null;
        subscription.remove();
        bus.close();
        clearBanner("owner");
        document.body.classList.remove("rd-stale");
        ownerSeen = true;
        restarts++;
        connect(`rdmad started (${owner}).`);
    };
    subscription = bus.subscribe({
        path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
        member: "NameOwnerChanged", arg0: BUS_NAME,
    }, (path, iface, signal, args) => {
        if (args[0] === BUS_NAME)
            appeared(args[2]);
    });
    bus.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", [BUS_NAME])
        .then(reply => appeared(reply[0]))
        .catch(() => {}); // NameHasOwner: still absent, the signal will tell
    bus.addEventListener("close", (ev, opts) => {
        if (ownerWatch !== bus)
            return;
        ownerWatch = null;
        banner("connection", "danger", "The connection to the system bus closed: " +
            errorText(opts) + ". Reload the page.");
    });
}

// ---- overview: one row per port -------------------------------------------------------------

const PORT_COLUMNS = ["Device", "Port", "Transport", "State", "PhysicalState", "Rate", "LinkLayer",
    "Netdev", "Provider", "InSync"];

const portRows = new Map(); // port path -> <tr>
// renderAll() once for a burst of additions and removals (rows are sorted by name).
const scheduleFull = coalesce(() => renderAll());

function stateClass(state) {
    if (state === "ACTIVE" || state === "up" || state === "yes" || state === "LinkUp")
        return "rd-ok";
    if (state === "DOWN" || state === "down" || state === "Disabled" || state === "lowerlayerdown")
        return "rd-bad";
    if (state === "" || state === "unknown" || state === undefined)
        return "rd-muted";
    return "rd-warn";
}

// ---- the desired state of a port: actual against desired, per setting ----------------------

// "3,4" for PFC priorities, "26:3,48:6" for a DSCP map (rdmactl set-pfc and set-dscp take
// these forms).
function prioText(list) {
    return list.join(",");
}

function numeric(list) {
    return list.slice().sort((a, b) => a - b);
}

function dscpText(map) {
    return (map || []).map(([dscp, prio]) => `${dscp}:${prio}`).join(",");
}

// Whether the actual port type satisfies the desired one, as rdmad compares them
// (daemon/reconcile/plan.cpp port_type_satisfied(): "auto" takes "auto (eth)"; "eth" takes
// "auto (eth)"); without a port type switch (PortType "", ConnectX-4 and later) the link layer
// tells the type.
function portTypeSatisfied(want, p) {
    if (!p.PortType) {
        const type = { Ethernet: "eth", InfiniBand: "ib" }[p.LinkLayer];
        return want === "auto" || want === type;
    }
    if (want === p.PortType)
        return true;
    if (want === "auto")
        return p.PortType.startsWith("auto");
    return p.PortType === `auto (${want})`;
}

// Whether the DSCP map `now` holds every entry of `want`, and no other priority for a DSCP of
// `want` (the APP table may map one DSCP to several priorities; rdmad deletes the others). DSCP
// entries not in `want` are someone else's unless the desired state is `exclusive`, which the
// bus does not show: those are not drift here (InSync still tells).
function dscpSatisfied(want, now) {
    const have = new Set(now.map(([d, q]) => `${d}:${q}`));
    return want.every(([d, q]) => have.has(`${d}:${q}`) &&
        !now.some(([d2, q2]) => d2 === d && q2 !== q));
}

function originOf(d, key) {
    for (const [k, origin] of (d && d.DesiredOrigin) || [])
        if (k === key)
            return origin;
    return "";
}

// The settings of a port with the desired state that can ask them (org.rdmad1.Port, dbus/*.xml):
// label, the actual and desired values as text, whether they differ (drift), the
// rdmad.conf(5) key whose origin Device.DesiredOrigin names, and the D-Bus properties. A
// setting shows when the port has it (port type on mlx4 or when asked; DCB on Ethernet ports;
// RDMA-CM on RoCE ports) or when the desired state asks it.
function portSettings(p, d) {
    const out = [];
    const add = (label, key, field, desiredField, now, want, asked, drift) =>
        out.push({ label, key, field, desiredField, now, want: asked ? want : "", drift: asked && drift, origin: asked ? originOf(d, key) : "" });
    // ConnectX-4+: a type the firmware holds for its next boot is pending.
    const pendingType = p.PendingPortType ? ` (${p.PendingPortType} after a firmware reset or reboot)` : "";
    if (p.PortType || p.DesiredPortType)
        add("Port type", "port_type", "PortType", "DesiredPortType", (p.PortType || "") + pendingType, p.DesiredPortType,
            !!p.DesiredPortType, !!pendingType || !portTypeSatisfied(p.DesiredPortType, p));
    const ethernet = p.LinkLayer === "Ethernet";
    const pfc = bytes(p.PFCNoDrop), wantPfc = bytes(p.DesiredPFCNoDrop);
    if (ethernet || wantPfc.length)
        add("PFC no-drop", "pfc_no_drop", "PFCNoDrop", "DesiredPFCNoDrop", prioText(pfc), prioText(wantPfc),
            wantPfc.length > 0, prioText(numeric(pfc)) !== prioText(numeric(wantPfc)));
    if (ethernet || p.DesiredTrust)
        add("Trust", "trust", "Trust", "DesiredTrust", p.Trust || "", p.DesiredTrust,
            !!p.DesiredTrust, p.Trust !== p.DesiredTrust);
    const dscp = p.DSCPPriority || [], wantDscp = p.DesiredDSCPPriority || [];
    if (ethernet || wantDscp.length)
        add("DSCP → priority", "dscp_priority", "DSCPPriority", "DesiredDSCPPriority", dscpText(dscp), dscpText(wantDscp),
            wantDscp.length > 0, !dscpSatisfied(wantDscp, dscp));
    const roce = p.Transport === "RoCE";
    if (roce || p.DesiredRDMACMRoCEMode)
        add("RDMA-CM RoCE mode", "rdma_cm_roce_mode", "RDMACMRoCEMode", "DesiredRDMACMRoCEMode", p.RDMACMRoCEMode || "",
            p.DesiredRDMACMRoCEMode, !!p.DesiredRDMACMRoCEMode, p.RDMACMRoCEMode !== p.DesiredRDMACMRoCEMode);
    const tos = p.RDMACMToS >= 0 ? String(p.RDMACMToS) : "", wantTos = p.DesiredRDMACMToS >= 0 ? String(p.DesiredRDMACMToS) : "";
    if (roce || wantTos)
        add("RDMA-CM ToS", "rdma_cm_tos", "RDMACMToS", "DesiredRDMACMToS", tos, wantTos, !!wantTos, tos !== wantTos);
    return out;
}

// How a desired value reads in the overview's "wants ..." list.
const WANTS_TEXT = {
    PortType: v => "type " + v,
    PFCNoDrop: v => "PFC " + v,
    Trust: v => "trust " + v,
    DSCPPriority: v => "DSCP " + v,
    RDMACMRoCEMode: v => "RDMA-CM " + v,
    RDMACMToS: v => "ToS " + v,
};

// SR-IOV of a PF (org.rdmad1.Device): "<SRIOVNumVFs> of <SRIOVTotalVFs>", with
// "(desired N)" while DesiredSRIOVNumVFs asks another count; "" on a device that is no PF and
// is asked nothing.
function sriovText(d) {
    const now = d.SRIOVNumVFs || 0, total = d.SRIOVTotalVFs || 0;
    const want = typeof d.DesiredSRIOVNumVFs === "number" ? d.DesiredSRIOVNumVFs : -1;
    if (total <= 0 && want < 0)
        return "";
    return `${now} of ${total}` + (want >= 0 && want !== now ? ` (desired ${want})` : "");
}

// "yes", or "no (wants ...)" naming the desired values of the settings that differ (the VF
// count of the port's device `d` among them).
function inSyncText(p, d) {
    if (p.InSync)
        return "yes";
    const want = portSettings(p, null).filter(s => s.drift).map(s => WANTS_TEXT[s.field](s.want));
    if (d && typeof d.DesiredSRIOVNumVFs === "number" && d.DesiredSRIOVNumVFs >= 0 &&
        d.DesiredSRIOVNumVFs !== (d.SRIOVNumVFs || 0))
        want.push("SR-IOV VFs " + d.DesiredSRIOVNumVFs);
    return "no" + (want.length ? " (wants " + want.join(", ") + ")" : "");
}

function rateText(p) {
    if (p.Rate)
        return p.Rate;
    return p.RateGbps >= 0 ? p.RateGbps + " Gb/s" : "unknown";
}

function providerText(d) {
    if (!d)
        return "";
    if (!d.Provider)
        return "none";
    return d.Provider + (d.ProviderInstalled ? "" : " (not installed)");
}

// The text of every cell of a port's row.
function portCells(p, d) {
    return {
        Device: d ? d.Name : "",
        Port: String(p.Number),
        Transport: p.Transport,
        State: p.State,
        PhysicalState: p.PhysicalState,
        Rate: rateText(p),
        LinkLayer: p.LinkLayer,
        Netdev: linkName(p.Link) || "—",
        Provider: providerText(d),
        InSync: inSyncText(p, d),
    };
}

function problemCount(d) {
    let errors = 0, warnings = 0;
    for (const pr of (d && d.Problems) || []) {
        if (pr[1] === "error")
            errors++;
        else if (pr[1] === "warning")
            warnings++;
    }
    return { errors, warnings };
}

let portRowTemplate = null;

// A new, empty row: a clone of one template (much cheaper than building 12 elements per row).
function newPortRow(path) {
    if (!portRowTemplate) {
        portRowTemplate = el("tr");
        for (const f of PORT_COLUMNS) {
            const td = el("td", { dataset: { field: f } });
            if (f === "Device")
                td.append(el("a", { class: "rd-devlink" }), el("span", { class: "rd-badge rd-hidden" }));
            portRowTemplate.append(td);
        }
    }
    const tr = portRowTemplate.cloneNode(true);
    tr.dataset.path = path;
    return tr;
}

// Writes a port's values into its row, touching only cells whose text changed.
function fillPortRow(tr, portPath) {
    const p = portData(portPath);
    if (!p)
        return;
    const devPath = devicePathOfPort(portPath);
    const d = deviceData(devPath);
    const cells = portCells(p, d);
    const tds = tr.children;
    for (let i = 0; i < PORT_COLUMNS.length; i++) {
        const f = PORT_COLUMNS[i];
        const td = tds[i];
        if (f === "Device") {
            const a = td.firstChild;
            setText(a, cells.Device);
            const href = "#/device/" + encodeURIComponent(cells.Device);
            if (a.getAttribute("href") !== href)
                a.setAttribute("href", href);
            const n = problemCount(d);
            const badge = td.lastChild;
            const text = n.errors ? `${n.errors} error${n.errors > 1 ? "s" : ""}` : n.warnings ? `${n.warnings} warning${n.warnings > 1 ? "s" : ""}` : "";
            setText(badge, text);
            badge.className = "rd-badge " + (n.errors ? "rd-badge-danger" : n.warnings ? "rd-badge-warning" : "rd-hidden");
            continue;
        }
        setText(td, cells[f]);
        if (f === "State" || f === "PhysicalState") {
            const cls = stateClass(cells[f]);
            if (td.className !== cls)
                td.className = cls;
        } else if (f === "InSync") {
            const cls = p.InSync ? "rd-ok" : "rd-warn";
            if (td.className !== cls)
                td.className = cls;
        }
    }
    tr.dataset.search = Object.values(cells).join(" ").toLowerCase();
    applyFilterTo(tr);
}

function renderOverview() {
    const body = $("ports-body");
    const frag = document.createDocumentFragment();
    portRows.clear();
    let nports = 0;
    const all = sortedDevices();
    for (const { dev, ports: ps } of all) {
        for (const p of ps) {
            const tr = newPortRow(p.path);
            portRows.set(p.path, tr);
            fillPortRow(tr, p.path);
            frag.append(tr);
            nports++;
        }
    }
    body.replaceChildren(frag);
    $("ports-empty").hidden = nports > 0 || !loaded;
    setText($("summary"), loaded ? `${all.length} devices, ${nports} ports` : "");
}

function portChanged(proxy) {
    const tr = portRows.get(proxy.path);
    if (!tr) {
        scheduleFull(); // a new port: rows are sorted, rebuild once for the burst
        return;
    }
    fillPortRow(tr, proxy.path);
    if (currentDevice && devicePathOfPort(proxy.path) === currentDevice)
        scheduleDevice();
}

function portRemoved(proxy) {
    const tr = portRows.get(proxy.path);
    if (tr) {
        tr.remove();
        portRows.delete(proxy.path);
    }
    if (currentDevice && devicePathOfPort(proxy.path) === currentDevice)
        scheduleDevice();
}

function deviceChanged(proxy) {
    let found = false;
    const d = proxy.data;
    for (const portPath of d.Ports || []) {
        const tr = portRows.get(portPath);
        if (tr) {
            fillPortRow(tr, portPath);
            found = true;
        }
    }
    if (!found && (d.Ports || []).length)
        scheduleFull(); // a new device
    if (currentDevice === proxy.path)
        scheduleDevice();
}

function linkChanged(proxy) {
    const tr = linkRows.get(proxy.path);
    if (tr)
        fillLinkRow(tr, proxy.path);
    else
        scheduleLinks();
    // A renamed netdev: the ports that name it.
    for (const [portPath, row] of portRows) {
        const p = portData(portPath);
        if (p && p.Link === proxy.path)
            fillPortRow(row, portPath);
    }
}

// ---- filter -----------------------------------------------------------------------------------

let filterText = "";

function applyFilterTo(tr) {
    const hide = !!filterText && !tr.dataset.search.includes(filterText);
    if (tr.hidden !== hide)
        tr.hidden = hide;
}

$("filter").addEventListener("input", ev => {
    filterText = ev.target.value.trim().toLowerCase();
    for (const tr of portRows.values())
        applyFilterTo(tr);
});

// ---- netdevs -----------------------------------------------------------------------------------

const LINK_COLUMNS = ["Name", "Index", "OperState", "Driver", "PCIAddress", "RdmaCapable", "RdmaDevice", "Hint"];
const linkRows = new Map();
const scheduleLinks = coalesce(() => renderLinks());

function fillLinkRow(tr, path) {
    const p = links[path];
    if (!p || !p.valid)
        return;
    const l = p.data;
    const tds = tr.children;
    for (let i = 0; i < LINK_COLUMNS.length; i++) {
        const f = LINK_COLUMNS[i];
        const td = tds[i];
        if (f === "RdmaDevice") {
            const name = deviceName(l.RdmaDevice);
            const a = td.firstChild;
            setText(a, name);
            if (name)
                a.setAttribute("href", "#/device/" + encodeURIComponent(name));
            else
                a.removeAttribute("href");
            continue;
        }
        const v = l[f] === undefined ? "" : String(l[f]);
        setText(td, v);
        if (f === "RdmaCapable" || f === "OperState") {
            const cls = v === "module-not-loaded" ? "rd-warn" : v === "no" ? "rd-muted" : stateClass(v);
            if (td.className !== cls)
                td.className = cls;
        }
    }
}

function renderLinks() {
    const frag = document.createDocumentFragment();
    linkRows.clear();
    const all = each(links).sort((a, b) => byName(a.data.Name || "", b.data.Name || ""));
    const template = el("tr");
    for (const f of LINK_COLUMNS)
        template.append(el("td", { dataset: { field: f } }, f === "RdmaDevice" ? el("a") : null));
    for (const p of all) {
        const tr = template.cloneNode(true);
        tr.dataset.path = p.path;
        linkRows.set(p.path, tr);
        fillLinkRow(tr, p.path);
        frag.append(tr);
    }
    $("links-body").replaceChildren(frag);
    $("links-empty").hidden = all.length > 0 || !loaded;
}

// ---- rdmad's own state ---------------------------------------------------------------------------

function setDaemonState(state) {
    const s = $("daemon-state");
    s.dataset.state = state;
    setText(s, "rdmad: " + state);
}

function dlRows(dl, rows) {
    const frag = document.createDocumentFragment();
    for (const [label, value, field] of rows) {
        frag.append(el("dt", { text: label }));
        const dd = el("dd", { dataset: { field: field || label } });
        if (value instanceof Node)
            dd.append(value);
        else
            dd.textContent = value === undefined || value === null || value === "" ? "—" : String(value);
        frag.append(dd);
    }
    dl.replaceChildren(frag);
}

function problemList(ul, problems, empty) {
    const frag = document.createDocumentFragment();
    for (const [code, severity, text] of problems || []) {
        frag.append(el("li", { class: "rd-problem", dataset: { code, severity } },
            el("span", { class: "rd-badge rd-badge-" + severityClass(severity), text: severity }),
            el("code", { text: code }),
            el("span", { class: "rd-problem-text", text })));
    }
    if (!(problems || []).length)
        frag.append(el("li", { class: "rd-muted", text: empty }));
    ul.replaceChildren(frag);
}

function severityClass(severity) {
    return severity === "error" ? "danger" : severity === "warning" ? "warning" : "info";
}

function renderManager() {
    const m = manager && manager.valid ? manager.data : null;
    if (!m) {
        if (loaded)
            setDaemonState(knownOwner ? "unknown" : "not running");
        dlRows($("manager-props"), []);
        problemList($("manager-problems"), [], "—");
        return;
    }
    setDaemonState(m.State || "unknown");
    const sources = el("ul", { class: "rd-plain" });
    for (const s of m.DesiredStateSource || [])
        sources.append(el("li", { text: s }));
    dlRows($("manager-props"), [
        ["Version", m.Version],
        ["State", m.State],
        ["Degraded", m.State === "degraded" ? "yes" : "no", "Degraded"],
        ["Desired state from", (m.DesiredStateSource || []).length ? sources : "nothing (no rule asked)", "DesiredStateSource"],
        ["Restarts followed", String(restarts), "Restarts"],
    ]);
    problemList($("manager-problems"), m.Problems, "None.");
}

// ---- device details -------------------------------------------------------------------------------

let currentDevice = null; // the device path shown in the details view
const scheduleDevice = coalesce(() => renderDevice(false));
function deviceLink(path) {
    const name = deviceName(path);
    if (!path || path === "/" || !name)
        return "";
    return el("a", { href: "#/device/" + encodeURIComponent(name), text: name });
}

function gidTable(gids) {
    if (!gids || !gids.length)
        return el("p", { class: "rd-muted", text: "No GID table entries." });
    const tbody = el("tbody");
    const frag = document.createDocumentFragment();
    for (const [index, gid, type, netdev] of gids)
        frag.append(el("tr", {}, el("td", { text: String(index) }), el("td", { class: "rd-mono", text: gid }),
            el("td", { text: type || "—" }), el("td", { text: netdev || "—" })));
    tbody.append(frag);
    return el("table", { class: "rd-table rd-compact rd-gids" },
        el("thead", {}, el("tr", {}, el("th", { text: "Index" }), el("th", { text: "GID" }),
            el("th", { text: "Type" }), el("th", { text: "Netdev" }))), tbody);
}

function problemDetails(details) {
    const wrap = el("div", { class: "rd-problem-details" });
    if (!details || !details.length) {
        wrap.append(el("p", { class: "rd-muted", text: "No problems found." }));
        return wrap;
    }
    for (const [code, severity, text, evidence, remedy, port] of details) {
        const item = el("div", { class: "rd-problem-detail", dataset: { code, severity } },
            el("div", { class: "rd-problem-head" },
                el("span", { class: "rd-badge rd-badge-" + severityClass(severity), text: severity }),
                el("code", { text: code }),
                port ? el("span", { class: "rd-muted", text: "port " + port }) : null),
            el("p", { text }));
        if (evidence && evidence.length) {
            const ul = el("ul", { class: "rd-evidence" });
            for (const e of evidence)
                ul.append(el("li", { class: "rd-mono", text: e }));
            item.append(el("div", { class: "rd-muted", text: "Evidence" }), ul);
        }
        if (remedy)
            item.append(el("div", { class: "rd-remedy" }, el("span", { class: "rd-muted", text: "Remedy " }),
                el("code", { class: "rd-mono", dataset: { field: "remedy" }, text: remedy })));
        wrap.append(item);
    }
    return wrap;
}

// The port properties shown, in order: [D-Bus property, label, how to show it (optional)].
const PORT_FIELDS = [
    ["Number", "Number"], ["State", "State"], ["PhysicalState", "Physical state"],
    ["LinkLayer", "Link layer"], ["Transport", "Transport"],
    ["RoCEVersions", "RoCE versions", p => (p.RoCEVersions || []).join(", ")],
    ["Rate", "Rate", rateText], ["RateGbps", "Rate (Gb/s)", p => (p.RateGbps >= 0 ? p.RateGbps : "unknown")],
    ["LID", "LID"], ["SMLID", "SM LID"], ["Link", "Netdev", p => linkName(p.Link)],
    ["NetdevMTU", "Netdev MTU", p => p.NetdevMTU || ""], ["ActiveMTU", "Active MTU", p => p.ActiveMTU || ""],
    ["InSync", "In sync", p => (p.InSync ? "yes" : "no")],
];

// The port's settings (portSettings()): now, desired and where the desired value came from, a
// row that differs marked as drift like the overview's In sync cell. The port type, PFC, trust,
// DSCP and RDMA-CM values are here, not in PORT_FIELDS.
function settingsTable(p, d) {
    const rows = portSettings(p, d);
    if (!rows.length)
        return el("p", { class: "rd-muted rd-settings-none", text: "No setting of this port can be asked." });
    const tbody = el("tbody");
    for (const r of rows)
        tbody.append(el("tr", { class: r.drift ? "rd-drift" : null, dataset: { setting: r.key, drift: r.drift ? "1" : "0" } },
            el("td", { text: r.label }),
            el("td", { class: "rd-mono", dataset: { field: r.field }, text: r.now || "—" }),
            el("td", { class: "rd-mono", dataset: { field: r.desiredField }, text: r.want || "—" }),
            el("td", { dataset: { field: "origin" }, text: r.origin || (r.want ? "" : "nothing asked") })));
    return el("table", { class: "rd-table rd-compact rd-settings" },
        el("thead", {}, el("tr", {}, el("th", { text: "Setting" }), el("th", { text: "Now" }),
            el("th", { text: "Desired" }), el("th", { text: "Desired by" }))), tbody);
}

// The device properties shown (the same shape).
const DEVICE_FIELDS = [
    ["Name", "Name"], ["NodeType", "Node type"], ["NodeGUID", "Node GUID"],
    ["SysImageGUID", "System image GUID"], ["FirmwareVersion", "Firmware version"],
    ["HCAType", "HCA type"], ["BoardID", "Board ID"], ["NodeDescription", "Node description"],
    ["PCIAddress", "PCI address"], ["KernelDriver", "Kernel driver"], ["Provider", "Provider"],
    ["ProviderInstalled", "Provider installed", d => (d.Provider ? (d.ProviderInstalled ? "yes" : "no") : "")],
    ["ProviderPackage", "Provider package"], ["VerbsDevice", "Verbs device"],
    ["PhysicalFunction", "Physical function", d => deviceLink(d.PhysicalFunction) || "—"],
    ["SRIOVNumVFs", "SR-IOV VFs", sriovText],
    ["Ports", "Ports", d => (d.Ports || []).length],
    ["Links", "Netdevs", d => {
        const list = el("span");
        for (const l of d.Links || [])
            list.append(el("span", { class: "rd-chip", text: linkName(l) }));
        return (d.Links || []).length ? list : "";
    }],
];

// A <dl> of `data` as `fields` say.
function fieldList(data, fields, attrs) {
    const dl = el("dl", { class: "rd-dl", ...attrs });
    dlRows(dl, fields.map(([field, label, show]) => [label, show ? show(data) : data[field], field]));
    return dl;
}


// A call to rdmad from a control: the button is busy meanwhile; the outcome goes into `out`.
function callRdmad(button, out, path, iface, method, args, okText) {
    button.dataset.busy = "1";
    refreshControls();
    out.className = "rd-result rd-muted";
    out.textContent = "Asking rdmad…";
    // A native promise around Cockpit's deferred: standard rejection handling.
    return new Promise((resolve, reject) => client.call(path, iface, method, args).then(resolve, reject))
            .then(reply => {
                out.className = "rd-result rd-alert rd-alert-success";
                out.textContent = okText;
                return reply;
            })
            .catch(err => {
                out.className = "rd-result rd-alert rd-alert-danger";
                out.textContent = errorText(err);
                out.dataset.error = err.name || err.problem || "";
                throw err;
            })
            .finally(() => {
                button.dataset.busy = "0";
                refreshControls();
            });
}

// "26:3,48:6" (rdmactl set-dscp's form; spaces allowed) as [[26, 3], [48, 6]] for
// SetDSCPPriority's a(yy), or the reason it is not one. rdmad checks the ranges (DSCP 0-63,
// priority 0-7) and duplicates; here only what a(yy) cannot carry is refused.
function parseDscpMap(text) {
    const map = [];
    for (const part of text.split(/[\s,]+/).filter(x => x)) {
        const m = /^(\d+):(\d+)$/.exec(part);
        if (!m || Number(m[1]) > 255 || Number(m[2]) > 255)
            return `"${part}" is not DSCP:priority (e.g. 26:3).`;
        map.push([Number(m[1]), Number(m[2])]);
    }
    return map;
}

function keepCheckbox(id) {
    return el("label", { class: "rd-check" }, el("input", { type: "checkbox", id, dataset: { field: "persist" } }),
        " Keep after restart");
}

// The controls of one port: port type and PFC no-drop priorities, built once per view.
function portControls(portPath, p) {
    const box = el("div", { class: "rd-controls", dataset: { port: portPath } });
    const n = p.Number;

    // Port type (mlx4 VPI only: PortType is "" elsewhere).
    const select = el("select", { "aria-label": "Port type", dataset: { field: "port-type" } },
        el("option", { value: "ib", text: "InfiniBand (ib)" }),
        el("option", { value: "eth", text: "Ethernet (eth)" }),
        el("option", { value: "auto", text: "Automatic (auto)" }));
    const current = (p.DesiredPortType || p.PortType || "").replace(/^auto.*/, "auto");
    if (current)
        select.value = current;
    const typeOut = el("div", { class: "rd-result" });
    const typeBtn = el("button", { class: "rd-btn rd-btn-primary", type: "button", text: "Set port type", dataset: { admin: "", action: "set-port-type" } });
    const typeReason = p.PortType ? "" : "This adapter has no port type switch in sysfs (ConnectX-4 and later set it in firmware).";
    typeBtn.dataset.reason = typeReason;
    select.dataset.admin = "";
    select.dataset.reason = typeReason;
    const typeKeep = keepCheckbox(`keep-type-${n}`);
    typeBtn.addEventListener("click", () => {
        const persist = typeKeep.querySelector("input").checked;
        callRdmad(typeBtn, typeOut, portPath, IFACE.port, "SetPortType", [select.value, persist],
            `Asked port type ${select.value}${persist ? ", kept after restart" : " until rdmad stops"}.`).catch(() => {});
    });
    box.append(el("fieldset", { class: "rd-fieldset" }, el("legend", { text: "Port type" }),
        el("div", { class: "rd-inline" }, select, typeKeep, typeBtn),
        typeReason ? el("p", { class: "rd-muted rd-reason", text: typeReason }) : null, typeOut));

    // PFC no-drop priorities (per netdev, Ethernet ports).
    const pfcReason = p.LinkLayer === "Ethernet" ? "" : "PFC applies to Ethernet ports; this port's link layer is " + (p.LinkLayer || "unknown") + ".";
    const want = new Set(bytes(p.DesiredPFCNoDrop).length ? bytes(p.DesiredPFCNoDrop) : bytes(p.PFCNoDrop));
    const prios = el("div", { class: "rd-inline rd-prios" });
    for (let i = 0; i < 8; i++) {
        const cb = el("input", { type: "checkbox", value: String(i), dataset: { admin: "", reason: pfcReason, prio: String(i) } });
        cb.checked = want.has(i);
        prios.append(el("label", { class: "rd-check" }, cb, " " + i));
    }
    const pfcOut = el("div", { class: "rd-result" });
    const pfcKeep = keepCheckbox(`keep-pfc-${n}`);
    const pfcBtn = el("button", { class: "rd-btn rd-btn-primary", type: "button", text: "Set PFC no-drop", dataset: { admin: "", reason: pfcReason, action: "set-pfc" } });
    pfcBtn.addEventListener("click", () => {
        const chosen = [...prios.querySelectorAll("input:checked")].map(c => Number(c.value));
        const persist = pfcKeep.querySelector("input").checked;
        callRdmad(pfcBtn, pfcOut, portPath, IFACE.port, "SetPFCNoDrop",
            [cockpit.base64_encode(new Uint8Array(chosen)), persist],
            `Asked PFC no-drop on ${chosen.join(", ") || "no priority"}${persist ? ", kept after restart" : " until rdmad stops"}.`).catch(() => {});
    });
    box.append(el("fieldset", { class: "rd-fieldset" }, el("legend", { text: "PFC no-drop priorities" }),
        prios, el("div", { class: "rd-inline" }, pfcKeep, pfcBtn),
        pfcReason ? el("p", { class: "rd-muted rd-reason", text: pfcReason }) : null, pfcOut));

    // Trust and the DSCP map (per netdev, Ethernet ports: the DCB APP table).
    const dcbReason = pfcReason.replace("PFC applies", "Trust and the DSCP map apply");
    const trustSelect = el("select", { "aria-label": "Trust", dataset: { field: "trust", admin: "", reason: dcbReason } },
        el("option", { value: "dscp", text: "DSCP (dscp)" }),
        el("option", { value: "pcp", text: "VLAN priority (pcp)" }));
    trustSelect.value = p.DesiredTrust || p.Trust || "dscp";
    const trustOut = el("div", { class: "rd-result" });
    const trustKeep = keepCheckbox(`keep-trust-${n}`);
    const trustBtn = el("button", { class: "rd-btn rd-btn-primary", type: "button", text: "Set trust", dataset: { admin: "", reason: dcbReason, action: "set-trust" } });
    trustBtn.addEventListener("click", () => {
        const persist = trustKeep.querySelector("input").checked;
        callRdmad(trustBtn, trustOut, portPath, IFACE.port, "SetTrust", [trustSelect.value, persist],
            `Asked trust ${trustSelect.value}${persist ? ", kept after restart" : " until rdmad stops"}.`).catch(() => {});
    });
    box.append(el("fieldset", { class: "rd-fieldset" }, el("legend", { text: "Trust" }),
        el("div", { class: "rd-inline" }, trustSelect, trustKeep, trustBtn),
        dcbReason ? el("p", { class: "rd-muted rd-reason", text: dcbReason }) : null, trustOut));

    const dscpWant = (p.DesiredDSCPPriority || []).length ? p.DesiredDSCPPriority : p.DSCPPriority || [];
    const dscpInput = el("input", { type: "text", "aria-label": "DSCP to priority map", placeholder: "26:3,48:6", dataset: { field: "dscp", admin: "", reason: dcbReason } });
    dscpInput.value = dscpText(dscpWant);
    const exclusive = el("label", { class: "rd-check" }, el("input", { type: "checkbox", dataset: { field: "exclusive" } }),
        " Delete other DSCP entries");
    const dscpOut = el("div", { class: "rd-result" });
    const dscpKeep = keepCheckbox(`keep-dscp-${n}`);
    const dscpBtn = el("button", { class: "rd-btn rd-btn-primary", type: "button", text: "Set DSCP map", dataset: { admin: "", reason: dcbReason, action: "set-dscp" } });
    dscpBtn.addEventListener("click", () => {
        const map = parseDscpMap(dscpInput.value);
        if (typeof map === "string") {
            dscpOut.className = "rd-result rd-alert rd-alert-danger";
            dscpOut.textContent = map;
            return;
        }
        const excl = exclusive.querySelector("input").checked;
        const persist = dscpKeep.querySelector("input").checked;
        callRdmad(dscpBtn, dscpOut, portPath, IFACE.port, "SetDSCPPriority", [map, excl, persist],
            `Asked DSCP ${dscpText(map)}${excl ? " only" : ""}${persist ? ", kept after restart" : " until rdmad stops"}.`).catch(() => {});
    });
    box.append(el("fieldset", { class: "rd-fieldset" }, el("legend", { text: "DSCP → priority" }),
        el("div", { class: "rd-inline" }, dscpInput, exclusive), el("div", { class: "rd-inline" }, dscpKeep, dscpBtn),
        dcbReason ? el("p", { class: "rd-muted rd-reason", text: dcbReason }) : null, dscpOut));

    // The RDMA-CM defaults (RoCE ports: configfs rdma_cm).
    const cmReason = p.Transport === "RoCE" ? "" : "The RDMA-CM defaults apply to RoCE ports; this port's transport is " + (p.Transport || "unknown") + ".";
    const modeSelect = el("select", { "aria-label": "RDMA-CM RoCE mode", dataset: { field: "roce-mode", admin: "", reason: cmReason } },
        el("option", { value: "", text: "(leave as it is)" }),
        el("option", { value: "RoCE v2", text: "RoCE v2" }),
        el("option", { value: "IB/RoCE v1", text: "IB/RoCE v1" }));
    modeSelect.value = p.DesiredRDMACMRoCEMode || "";
    const tosInput = el("input", { type: "number", min: "0", max: "255", "aria-label": "RDMA-CM ToS", placeholder: "ToS (leave)", dataset: { field: "tos", admin: "", reason: cmReason } });
    tosInput.value = p.DesiredRDMACMToS >= 0 ? String(p.DesiredRDMACMToS) : "";
    const cmOut = el("div", { class: "rd-result" });
    const cmKeep = keepCheckbox(`keep-rdma-cm-${n}`);
    const cmBtn = el("button", { class: "rd-btn rd-btn-primary", type: "button", text: "Set RDMA-CM defaults", dataset: { admin: "", reason: cmReason, action: "set-rdma-cm" } });
    cmBtn.addEventListener("click", () => {
        const text = tosInput.value.trim();
        // -1 leaves the ToS as it is (SetRDMACM); rdmad answers a value outside 0-255.
        const tos = text === "" ? -1 : Number(text);
        if (!Number.isInteger(tos)) {
            cmOut.className = "rd-result rd-alert rd-alert-danger";
            cmOut.textContent = `ToS ${JSON.stringify(text)} is not a whole number.`;
            return;
        }
        const persist = cmKeep.querySelector("input").checked;
        const asked = [modeSelect.value, tos >= 0 ? "ToS " + tos : ""].filter(x => x).join(", ") || "nothing";
        callRdmad(cmBtn, cmOut, portPath, IFACE.port, "SetRDMACM", [modeSelect.value, tos, persist],
            `Asked RDMA-CM ${asked}${persist ? ", kept after restart" : " until rdmad stops"}.`).catch(() => {});
    });
    box.append(el("fieldset", { class: "rd-fieldset" }, el("legend", { text: "RDMA-CM defaults" }),
        el("div", { class: "rd-inline" }, modeSelect, tosInput), el("div", { class: "rd-inline" }, cmKeep, cmBtn),
        cmReason ? el("p", { class: "rd-muted rd-reason", text: cmReason }) : null, cmOut));

    // Revert: forget what this page (or anyone) asked of the device.
    const revOut = el("div", { class: "rd-result" });
    const revBtn = el("button", { class: "rd-btn rd-btn-secondary", type: "button", text: "Forget requests", dataset: { admin: "", action: "revert" } });
    revBtn.addEventListener("click", () => {
        callRdmad(revBtn, revOut, portPath, IFACE.port, "Revert", [""],
            "Dropped the requests made over D-Bus: the configuration files apply again.").catch(() => {});
    });
    box.append(el("div", { class: "rd-inline" }, revBtn, el("span", { class: "rd-muted", text: "drops the port type, PFC, trust, DSCP and RDMA-CM requests of this device (run-time and kept ones)" })), revOut);
    return box;
}

let deviceControls = new Map(); // port path -> controls element, kept while the device is shown

function renderDevice(fresh) {
    const body = $("device-body");
    const d = deviceData(currentDevice);
    if (!d) {
        body.replaceChildren(el("p", { class: "rd-muted", text: loaded ? "No such device (it may have been removed)." : "Loading…" }));
        deviceControls = new Map();
        return;
    }
    if (fresh)
        deviceControls = new Map();
    const frag = document.createDocumentFragment();
    const n = problemCount(d);
    frag.append(el("h2", { class: "rd-device-title", text: d.Name },
        n.errors || n.warnings ? el("span", { class: "rd-badge rd-badge-" + (n.errors ? "danger" : "warning"), text: `${n.errors} errors, ${n.warnings} warnings` }) : null));

    const props = fieldList(d, DEVICE_FIELDS, { id: "device-props" });
    props.append(el("dt", { text: "Object path" }), el("dd", { dataset: { field: "Path" }, text: currentDevice }));
    frag.append(el("div", { class: "rd-card" }, el("h3", { text: "Properties" }), props));
    frag.append(el("div", { class: "rd-card" }, el("h3", { text: "Problems" }), problemDetails(d.ProblemDetails)));

    const ps = (d.Ports || []).map(path => ({ path, p: portData(path) })).filter(x => x.p)
            .sort((a, b) => a.p.Number - b.p.Number);
    for (const { path, p } of ps) {
        let controls = deviceControls.get(path);
        if (!controls) {
            controls = portControls(path, p);
            deviceControls.set(path, controls);
        }
        frag.append(el("div", { class: "rd-card rd-port-card", dataset: { port: String(p.Number) } },
            el("h3", { text: `Port ${p.Number}` }),
            el("div", { class: "rd-columns" }, fieldList(p, PORT_FIELDS), controls),
            el("h4", { text: "Desired state" }), settingsTable(p, d),
            el("h4", { text: "GIDs" }), gidTable(p.GIDs)));
    }
    body.replaceChildren(frag);
    refreshControls();
}

// ---- Reconcile (preview, then apply) and Reload -------------------------------------------------

function objectLabel(path) {
    const dev = devicePathOfPort(path);
    if (dev) {
        const p = portData(path);
        return `${deviceName(dev) || dev} port ${p ? p.Number : path.substring(path.lastIndexOf("/") + 1)}`;
    }
    if (devices[path])
        return deviceName(path) || path;
    if (links[path])
        return linkName(path);
    return path;
}

function changesTable(changes) {
    if (!changes.length)
        return el("p", { class: "rd-empty-changes", text: "Nothing differs: the hardware is as desired." });
    const tbody = el("tbody");
    for (const [path, setting, from, to] of changes)
        tbody.append(el("tr", {}, el("td", { text: objectLabel(path) }), el("td", { text: setting }),
            el("td", { class: "rd-mono", text: from }), el("td", { class: "rd-mono", text: to })));
    return el("table", { class: "rd-table rd-compact", id: "changes-table" },
        el("thead", {}, el("tr", {}, el("th", { text: "Object" }), el("th", { text: "Setting" }),
            el("th", { text: "Now" }), el("th", { text: "Desired" }))), tbody);
}

function openModal(title, body, buttons) {
    $("modal-title").textContent = title;
    $("modal-body").replaceChildren(body);
    $("modal-footer").replaceChildren(...buttons);
    $("modal").hidden = false;
}

function closeModal() {
    $("modal").hidden = true;
}

$("reconcile-preview").addEventListener("click", () => {
    const btn = $("reconcile-preview");
    const out = $("reconcile-result");
    callRdmad(btn, out, ROOT, IFACE.manager, "Reconcile", [true], "Preview ready.").then(reply => {
        const changes = reply[0] || [];
        out.textContent = "";
        out.className = "rd-result";
        const apply = el("button", { class: "rd-btn rd-btn-primary", type: "button", id: "reconcile-apply", dataset: { admin: "" }, text: "Apply these changes" });
        const cancel = el("button", { class: "rd-btn rd-btn-link", type: "button", text: "Cancel", onclick: closeModal });
        const result = el("div", { class: "rd-result" });
        if (!changes.length)
            apply.dataset.reason = "Nothing to apply.";
        apply.addEventListener("click", () => {
            callRdmad(apply, result, ROOT, IFACE.manager, "Reconcile", [false], "Applied.").then(r2 => {
                closeModal();
                out.className = "rd-result";
                out.replaceChildren(el("div", { class: "rd-alert rd-alert-success", text: `Reconciled at ${timeNow()}: ${(r2[0] || []).length} differences found and applied.` }),
                    changesTable(r2[0] || []));
            }).catch(() => {});
        });
        openModal("Reconcile: what would change", el("div", {}, el("p", { class: "rd-muted", text: "rdmad compared the desired state with the hardware (dry run); nothing was changed yet." }),
            changesTable(changes), result), [apply, cancel]);
        refreshControls();
    }).catch(() => {});
});

$("reload").addEventListener("click", () => {
    callRdmad($("reload"), $("reconcile-result"), ROOT, IFACE.manager, "Reload", [],
        `Reloaded the configuration at ${timeNow()}.`).catch(() => {});
});

// Manager.InstallProviders: the packages PackageKit installs now; each device's problems and
// ProviderInstalled follow the install.
$("install-providers").addEventListener("click", () => {
    callRdmad($("install-providers"), $("reconcile-result"), ROOT, IFACE.manager, "InstallProviders", [],
        "").then(reply => {
        const packages = reply[0] || [];
        const out = $("reconcile-result");
        out.className = "rd-result";
        out.replaceChildren(el("div", { class: "rd-alert rd-alert-success",
            text: packages.length ? `PackageKit is installing ${packages.join(", ")} (${timeNow()}); the devices' problems show how it ends.`
                : "No verbs provider is missing: nothing to install." }));
    }).catch(() => {});
});

document.addEventListener("keydown", ev => {
    if (ev.key === "Escape" && !$("modal").hidden)
        closeModal();
});

// ---- navigation ---------------------------------------------------------------------------------

function route() {
    const path = cockpit.location.path;
    let view = "overview";
    let dev = null;
    if (path[0] === "device" && path[1]) {
        view = "device";
        const name = path[1];
        dev = each(devices).find(p => p.data.Name === name);
    } else if (path[0] === "netdevs" || path[0] === "daemon") {
        view = path[0];
    }
    for (const s of document.querySelectorAll(".rd-view"))
        s.hidden = s.dataset.view !== view;
    for (const a of document.querySelectorAll("#tabs a"))
        a.classList.toggle("rd-active", a.dataset.view === view || (view === "device" && a.dataset.view === "overview"));
    const newDevice = dev ? dev.path : view === "device" ? "/missing" : null;
    const fresh = newDevice !== currentDevice;
    currentDevice = newDevice;
    if (view === "device")
        renderDevice(fresh);
}

// Links use "#/..." hashes; inside Cockpit's shell, cockpit.location keeps the URL in sync.
document.addEventListener("click", ev => {
    const a = ev.target.closest && ev.target.closest("a[href^='#/']");
    if (!a)
        return;
    ev.preventDefault();
    const parts = a.getAttribute("href").substring(2).split("/").filter(x => x).map(decodeURIComponent);
    cockpit.location.go(parts);
});
cockpit.addEventListener("locationchanged", route);

// Everything from the cache: the overview and the view shown first, the other tables next.
function renderAll() {
    const t0 = performance.now();
    renderOverview();
    renderManager();
    route();
    window.rdmadRender = { read: t0, at: performance.now(), took: performance.now() - t0, generation: restarts };
    window.setTimeout(() => {
        renderLinks();
        document.body.dataset.loaded = String(restarts);
    }, 0);
}

updateAdmin();
connect(null);
