//! A cabled rack in network namespaces: "switch" namespaces and "host" namespaces joined
//! by veth pairs, Debian's lldpd in each, and Debian's sshd in each host.
//!
//! - A switch runs lldpd with its system name, `ifname` port ids, a port description per
//!   port, and per port the VLANs and the frame size it carries, sent as the real 802.1
//!   VLAN-name and 802.3 maximum-frame-size TLVs (lldpd's `custom-tlv`: this kernel has no
//!   8021q module and no VLAN-aware bridge, and lldpd never advertises a frame size of its
//!   own). The host's lldpd decodes them as it decodes any switch's.
//! - A host runs lldpd and sshd in a mount namespace of its own with a private `/run` (so
//!   `lldpcli` finds that host's lldpd at its default socket) and a private
//!   `/etc/machine-id` (so each host is its own node). sshd listens on a veth address the
//!   test gives the host in 198.18.0.0/15 (the benchmarking range).
//!
//! - A switch may send a chassis id of its own (`configure system chassisid`), and a port
//!   may have LLDP switched off (`lldp status disabled`) while its link stays up.
//! - A host NIC may report a slower link than the veth's 10 Gb/s (its `speed` attribute in
//!   sysfs overlaid, in the host's own mount namespace, as the probe reads it).
//! - A cable may run through a hub (a Linux bridge forwarding LLDP's group address, as an
//!   unmanaged switch between a NIC and its switch does), with a rogue host sending LLDP
//!   under a name of its choosing on it.
//!
//! Everything started is killed and every namespace deleted when the rack is dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::sshd::{UserKey, keygen};

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Can this process make namespaces and run lldpd? (root, iproute2, lldpd installed)
pub fn available() -> Result<(), String> {
    for b in ["/usr/sbin/lldpd", "/usr/sbin/lldpcli", "/usr/sbin/sshd"] {
        if !Path::new(b).exists() {
            return Err(format!(
                "{b} is missing: .ci/run installs lldpd and openssh-server"
            ));
        }
    }
    let probe = format!("rpcprobe{}", std::process::id());
    let ok = Command::new("ip")
        .args(["netns", "add", &probe])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return Err("cannot create a network namespace (the tests need root)".into());
    }
    ip(&["netns", "del", &probe]);
    Ok(())
}

/// One port of a switch: the VLANs and frame size it advertises, and whether it sends
/// LLDP at all.
#[derive(Clone)]
pub struct PortSpec {
    pub vlans: Vec<u16>,
    pub mfs: u16,
    pub lldp: bool,
}

impl PortSpec {
    pub fn new(vlans: &[u16], mfs: u16) -> PortSpec {
        PortSpec {
            vlans: vlans.to_vec(),
            mfs,
            lldp: true,
        }
    }
}

pub struct Rack {
    tag: String,
    namespaces: Vec<String>,
    pub dir: tempfile::TempDir,
    pub key: UserKey,
    /// Per host: (name, ssh address).
    pub hosts: Vec<(String, String)>,
    known_hosts: String,
    net: u8,
    switch_ports: Vec<SwitchPorts>,
    /// Switch name -> the chassis id it sends.
    chassis: Vec<(String, String)>,
    /// (host, NIC, Mb/s): links that report a lower speed.
    speeds: Vec<(String, String, u32)>,
    /// Per rogue: (namespace name, system name), and how many extra neighbours its host
    /// hears.
    rogues: Vec<(String, String, String)>,
    children: Vec<std::process::Child>,
}

/// A switch's name and its ports: (port, what it carries, the host and NIC at the other end).
type SwitchPorts = (String, Vec<(String, PortSpec, String)>);

impl Rack {
    pub fn new() -> Rack {
        let pid = std::process::id();
        Rack {
            tag: format!("rpc{}", pid % 100_000),
            namespaces: Vec::new(),
            dir: tempfile::tempdir().unwrap(),
            key: UserKey::new(),
            hosts: Vec::new(),
            known_hosts: String::new(),
            net: u8::try_from(pid % 200).unwrap() + 20,
            switch_ports: Vec::new(),
            chassis: Vec::new(),
            speeds: Vec::new(),
            rogues: Vec::new(),
            children: Vec::new(),
        }
    }

    fn ns(&self, name: &str) -> String {
        format!("{}-{name}", self.tag)
    }

    fn add_ns(&mut self, name: &str) -> String {
        let ns = self.ns(name);
        let _ = Command::new("ip")
            .args(["netns", "del", &ns])
            .stderr(Stdio::null())
            .status();
        ip(&["netns", "add", &ns]);
        ip(&["-n", &ns, "link", "set", "lo", "up"]);
        self.namespaces.push(ns.clone());
        ns
    }

    pub fn switch(&mut self, name: &str) {
        self.add_ns(name);
        self.switch_ports.push((name.to_string(), Vec::new()));
    }

    pub fn host(&mut self, name: &str) {
        let ns = self.add_ns(name);
        let i = self.hosts.len() + 1;
        let root_if = format!("{}h{i}", self.tag);
        ip(&[
            "link", "add", &root_if, "type", "veth", "peer", "name", "ctl", "netns", &ns,
        ]);
        let base = 4 * i;
        let a = format!("198.18.{}.{}", self.net, base + 1);
        let b = format!("198.18.{}.{}", self.net, base + 2);
        ip(&["addr", "add", &format!("{a}/30"), "dev", &root_if]);
        ip(&["link", "set", &root_if, "up"]);
        ip(&["-n", &ns, "addr", "add", &format!("{b}/30"), "dev", "ctl"]);
        ip(&["-n", &ns, "link", "set", "ctl", "up"]);
        self.hosts.push((name.to_string(), b));
    }

    /// `switch` sends `id` as its chassis id.
    pub fn chassis(&mut self, switch: &str, id: &str) {
        self.chassis.push((switch.to_string(), id.to_string()));
    }

    /// `host`'s `nic` reports a link of `mbps`.
    pub fn speed(&mut self, host: &str, nic: &str, mbps: u32) {
        self.speeds.push((host.to_string(), nic.to_string(), mbps));
    }

    /// A cable from `host`'s `nic` through a hub to the next port of `switch`, with a rogue
    /// host on the hub sending LLDP as `rogue_name`.
    pub fn cable_through_hub(
        &mut self,
        host: &str,
        nic: &str,
        switch: &str,
        spec: &PortSpec,
        rogue_name: &str,
    ) {
        let k = self.rogues.len();
        let hub_name = format!("hub{k}");
        let rogue = format!("rogue{k}");
        let hub = self.add_ns(&hub_name);
        self.add_ns(&rogue);
        ip(&["-n", &hub, "link", "add", "br0", "type", "bridge"]);
        // LLDP's group address (01:80:c2:00:00:0e) is bit 14: forwarded, as a hub would.
        ip(&[
            "-n",
            &hub,
            "link",
            "set",
            "br0",
            "type",
            "bridge",
            "group_fwd_mask",
            "0x4000",
        ]);
        ip(&["-n", &hub, "link", "set", "br0", "up"]);
        // The host's NIC to the hub.
        self.cable_ns(host, nic, &hub_name, "h0");
        // The rogue's NIC to the hub.
        self.cable_ns(&rogue, "eth0", &hub_name, "h1");
        for p in ["h0", "h1"] {
            ip(&["-n", &hub, "link", "set", p, "master", "br0"]);
        }
        // The hub to the switch: the switch port's far end is the hub, its description
        // still the host's NIC (that is where the cable the engineer traces goes).
        let tmp = format!("{}x{k}", self.tag);
        ip(&[
            "link", "add", &tmp, "mtu", "9000", "type", "veth", "peer", "name", "h2", "mtu",
            "9000", "netns", &hub,
        ]);
        let port = self.next_port(switch);
        let sns = self.ns(switch);
        ip(&["link", "set", &tmp, "netns", &sns]);
        ip(&["-n", &sns, "link", "set", &tmp, "name", &port]);
        ip(&["-n", &sns, "link", "set", &port, "up"]);
        ip(&["-n", &hub, "link", "set", "h2", "master", "br0"]);
        ip(&["-n", &hub, "link", "set", "h2", "up"]);
        self.rogues
            .push((rogue, rogue_name.to_string(), host.to_string()));
        self.switch_ports
            .iter_mut()
            .find(|(s, _)| s == switch)
            .expect("switch declared")
            .1
            .push((port, spec.clone(), format!("{host} {nic}")));
    }

    /// A veth from namespace `a`'s `a_if` to namespace `b`'s `b_if`, both up.
    fn cable_ns(&mut self, a: &str, a_if: &str, b: &str, b_if: &str) {
        let (ans, bns) = (self.ns(a), self.ns(b));
        ip(&[
            "-n", &ans, "link", "add", a_if, "mtu", "9000", "type", "veth", "peer", "name", b_if,
            "mtu", "9000", "netns", &bns,
        ]);
        ip(&["-n", &ans, "link", "set", a_if, "up"]);
        ip(&["-n", &bns, "link", "set", b_if, "up"]);
    }

    fn next_port(&self, switch: &str) -> String {
        let k = self
            .switch_ports
            .iter()
            .find(|(s, _)| s == switch)
            .map_or(0, |(_, p)| p.len())
            + 1;
        format!("swp{k}")
    }

    /// A cable from `host`'s `nic` to the next port of `switch`, that port carrying `spec`.
    pub fn cable(&mut self, host: &str, nic: &str, switch: &str, spec: &PortSpec) {
        let hns = self.ns(host);
        let sns = self.ns(switch);
        let port = self.next_port(switch);
        let tmp = format!(
            "{}t{}",
            self.tag,
            self.switch_ports
                .iter()
                .map(|(_, p)| p.len())
                .sum::<usize>()
        );
        ip(&[
            "link", "add", &tmp, "mtu", "9000", "type", "veth", "peer", "name", nic, "mtu", "9000",
            "netns", &hns,
        ]);
        ip(&["link", "set", &tmp, "netns", &sns]);
        ip(&["-n", &sns, "link", "set", &tmp, "name", &port]);
        ip(&["-n", &sns, "link", "set", &port, "up"]);
        ip(&["-n", &hns, "link", "set", nic, "up"]);
        let entry = self
            .switch_ports
            .iter_mut()
            .find(|(s, _)| s == switch)
            .expect("switch declared");
        entry.1.push((port, spec.clone(), format!("{host} {nic}")));
    }

    fn spawn_in(&mut self, ns: &str, script: &str, log: &Path) {
        let log = std::fs::File::create(log).unwrap();
        let child = Command::new("ip")
            .args([
                "netns",
                "exec",
                ns,
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                script,
            ])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("ip netns exec");
        self.children.push(child);
    }

    /// Start every lldpd and sshd, and wait until each host's lldpd has heard all of its
    /// switches.
    pub fn start(&mut self) {
        let d = self.dir.path().to_path_buf();
        let mut spawns: Vec<(String, String, PathBuf)> = Vec::new();
        for (sw, ports) in &self.switch_ports {
            let mut conf = format!(
                "configure system hostname {sw}\nconfigure lldp portidsubtype ifname\nconfigure lldp tx-interval 1\n"
            );
            if let Some((_, id)) = self.chassis.iter().find(|(s, _)| s == sw) {
                conf.push_str(&format!("configure system chassisid {id}\n"));
            }
            for (port, spec, descr) in ports {
                if !spec.lldp {
                    conf.push_str(&format!("configure ports {port} lldp status disabled\n"));
                }
                conf.push_str(&format!(
                    "configure ports {port} lldp portdescription \"{descr}\"\n"
                ));
                for v in &spec.vlans {
                    let name = format!("v{v}");
                    let mut info = vec![
                        format!("{:02x}", v >> 8),
                        format!("{:02x}", v & 0xff),
                        format!("{:02x}", name.len()),
                    ];
                    info.extend(name.bytes().map(|b| format!("{b:02x}")));
                    conf.push_str(&format!(
                        "configure ports {port} lldp custom-tlv add oui 00,80,c2 subtype 3 oui-info {}\n",
                        info.join(",")
                    ));
                }
                conf.push_str(&format!(
                    "configure ports {port} lldp custom-tlv add oui 00,12,0f subtype 4 oui-info {:02x},{:02x}\n",
                    spec.mfs >> 8,
                    spec.mfs & 0xff
                ));
            }
            let sd = d.join(format!("switch-{sw}"));
            std::fs::create_dir_all(sd.join("run/lldpd")).unwrap();
            std::fs::write(sd.join("lldpd.conf"), conf).unwrap();
            let script = format!(
                "mount --bind {r} /run && exec /usr/sbin/lldpd -d -I 'swp*' -O {c}",
                r = sd.join("run").display(),
                c = sd.join("lldpd.conf").display()
            );
            let ns = self.ns(sw);
            spawns.push((ns, script, sd.join("lldpd.log")));
        }
        for (rogue, name, _) in &self.rogues {
            let rd = d.join(format!("rogue-{rogue}"));
            std::fs::create_dir_all(rd.join("run/lldpd")).unwrap();
            std::fs::write(
                rd.join("lldpd.conf"),
                format!(
                    "configure system hostname {name}\nconfigure lldp portidsubtype ifname\nconfigure lldp tx-interval 1\n"
                ),
            )
            .unwrap();
            // Heard after the switch, so lldpd lists it second.
            let script = format!(
                "mount --bind {r} /run && sleep 3 && exec /usr/sbin/lldpd -d -I 'eth*' -O {c}",
                r = rd.join("run").display(),
                c = rd.join("lldpd.conf").display()
            );
            spawns.push((self.ns(rogue), script, rd.join("lldpd.log")));
        }
        let mut known = String::new();
        for (i, (host, addr)) in self.hosts.iter().enumerate() {
            let hd = d.join(format!("host-{host}"));
            std::fs::create_dir_all(hd.join("run/lldpd")).unwrap();
            std::fs::create_dir_all(hd.join("run/sshd")).unwrap();
            std::fs::write(
                hd.join("machine-id"),
                format!("{:032x}\n", 0xabc0_0000_u64 + i as u64),
            )
            .unwrap();
            keygen(&hd.join("host_ed25519"));
            std::fs::write(hd.join("authorized_keys"), self.key.public()).unwrap();
            std::fs::write(
                hd.join("sshd_config"),
                format!(
                    "Port 22\nListenAddress {addr}\nHostKey {h}/host_ed25519\nAuthorizedKeysFile {h}/authorized_keys\n\
                     PidFile {h}/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                     PermitRootLogin prohibit-password\nLogLevel ERROR\n",
                    h = hd.display()
                ),
            )
            .unwrap();
            std::fs::write(
                hd.join("lldpd.conf"),
                format!("configure system hostname {host}\n"),
            )
            .unwrap();
            let dmi = Path::new("/sys/class/dmi/id/product_serial");
            let dmi_bind = if dmi.exists() {
                std::fs::write(hd.join("serial"), format!("RACK-{host}\n")).unwrap();
                format!(" && mount --bind {}/serial {}", hd.display(), dmi.display())
            } else {
                String::new()
            };
            let mut speed_binds = String::new();
            for (_, nic, mbps) in self.speeds.iter().filter(|(h, _, _)| h == host) {
                let f = hd.join(format!("speed-{nic}"));
                std::fs::write(&f, format!("{mbps}\n")).unwrap();
                speed_binds.push_str(&format!(
                    " && mount --bind {} /sys/class/net/{nic}/speed",
                    f.display()
                ));
            }
            let script = format!(
                "mount --bind {h}/run /run && mount --bind {h}/machine-id /etc/machine-id{dmi_bind}{speed_binds} && \
                 (/usr/sbin/lldpd -d -I 'eth*' -O {h}/lldpd.conf > {h}/lldpd.log 2>&1 &) && \
                 exec /usr/sbin/sshd -D -e -f {h}/sshd_config",
                h = hd.display()
            );
            spawns.push((self.ns(host), script, hd.join("sshd.log")));
            let pubkey = std::fs::read_to_string(hd.join("host_ed25519.pub")).unwrap();
            let mut parts = pubkey.split_whitespace();
            known.push_str(&format!(
                "{addr} {} {}\n",
                parts.next().unwrap(),
                parts.next().unwrap()
            ));
        }
        self.known_hosts = known;
        for (ns, script, log) in spawns {
            self.spawn_in(&ns, &script, &log);
        }
        // Wait (bounded) for sshd to listen and for every cable's switch to be heard.
        let deadline = Instant::now() + Duration::from_secs(30);
        for (host, addr) in &self.hosts {
            let hd = d.join(format!("host-{host}"));
            let want = self
                .switch_ports
                .iter()
                .flat_map(|(_, p)| p)
                .filter(|(_, spec, descr)| spec.lldp && descr.starts_with(&format!("{host} ")))
                .count()
                + self.rogues.iter().filter(|(_, _, h)| h == host).count();
            loop {
                let listening = std::net::TcpStream::connect_timeout(
                    &format!("{addr}:22").parse().unwrap(),
                    Duration::from_millis(300),
                )
                .is_ok();
                let heard = Command::new("ip")
                    .args([
                        "netns",
                        "exec",
                        &self.ns(host),
                        "unshare",
                        "--mount",
                        "sh",
                        "-c",
                    ])
                    .arg(format!(
                        "mount --bind {}/run /run && /usr/sbin/lldpcli -f json0 show neighbors",
                        hd.display()
                    ))
                    .output()
                    .map_or(0, |o| {
                        String::from_utf8_lossy(&o.stdout)
                            .matches("\"via\"")
                            .count()
                    });
                if listening && heard >= want {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "host {host}: sshd {listening}, {heard} of {want} neighbours heard; logs in {}",
                    hd.display()
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }

    pub fn known_hosts(&self) -> &str {
        &self.known_hosts
    }

    pub fn targets(&self) -> Vec<String> {
        self.hosts
            .iter()
            .map(|(_, a)| format!("root@{a}:22"))
            .collect()
    }
}

impl Drop for Rack {
    fn drop(&mut self) {
        for ns in &self.namespaces {
            if let Ok(o) = Command::new("ip").args(["netns", "pids", ns]).output() {
                for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                    let _ = Command::new("kill").args(["-9", pid]).status();
                }
            }
        }
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        for ns in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}
