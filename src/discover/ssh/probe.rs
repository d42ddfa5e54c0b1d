//! What rackplan runs on a host, and the parsers for what comes back.
//!
//! One read-only shell script runs every probe in one round trip; each section is framed
//! by a marker line, so a missing command or a permission error only empties its own
//! section (and becomes a note), never the whole inventory. The parsers are pure
//! functions, tested on outputs captured from real machines and on hand-written cases
//! (bonds, VLANs, NVMe namespaces, virtual NICs, USB sticks).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::inventory::model::normalize_mac;
use crate::inventory::{Cpu, Disk, LinkState, Media, Nic, Protocol};

const MARK: &str = "@@rackplan:";

/// The probe script (POSIX sh; nothing is written on the host).
pub(crate) fn script() -> String {
    let sections = [
        ("lscpu", "lscpu -J"),
        (
            "lsblk",
            "lsblk -J -b -o NAME,KNAME,PATH,SIZE,TYPE,ROTA,TRAN,MODEL,SERIAL,WWN,RM,HOTPLUG",
        ),
        ("iplink", "ip -j -d link"),
        (
            "sysnet",
            "for i in /sys/class/net/*; do n=${i##*/}; echo \"$n $(cat $i/speed 2>/dev/null || echo -) $(cat $i/carrier 2>/dev/null || echo -) $(cat $i/address 2>/dev/null) $([ -e $i/device ] && echo 1 || echo 0)\"; done",
        ),
        ("meminfo", "cat /proc/meminfo"),
        (
            "byid",
            "for l in /dev/disk/by-id/*; do [ -e \"$l\" ] && echo \"${l##*/} $(readlink -f \"$l\")\"; done",
        ),
        (
            "dmi",
            "for f in product_serial sys_vendor product_name product_uuid; do echo \"$f=$(cat /sys/class/dmi/id/$f 2>/dev/null)\"; done",
        ),
        (
            "dmidecode",
            "if command -v dmidecode >/dev/null 2>&1 || [ -x /usr/sbin/dmidecode ]; then sudo -n dmidecode -t memory 2>/dev/null || dmidecode -t memory 2>/dev/null || echo 'rackplan: dmidecode denied'; else echo 'rackplan: dmidecode missing'; fi",
        ),
        ("nvme", "nvme list -o json"),
        ("machineid", "cat /etc/machine-id"),
        (
            "lldpifs",
            "PATH=$PATH:/usr/sbin; lldpcli -f json show interfaces 2>/dev/null || sudo -n lldpcli -f json show interfaces 2>/dev/null",
        ),
        // Last: the section a flood of LLDP speakers inflates (a cut there keeps the rest).
        (
            "lldp",
            "PATH=$PATH:/usr/sbin; if command -v lldpcli >/dev/null 2>&1; then lldpcli -f json show neighbors details 2>/dev/null || sudo -n lldpcli -f json show neighbors details 2>/dev/null || echo 'rackplan: lldpcli failed'; else echo 'rackplan: lldpcli missing'; fi",
        ),
    ];
    let mut s = String::from("LC_ALL=C; export LC_ALL\n");
    for (name, cmd) in sections {
        s.push_str(&format!("echo '{MARK}{name}'\n{cmd} 2>/dev/null\n"));
    }
    s.push_str(&format!("echo '{MARK}end'\n"));
    s
}

/// Split the script's output into sections.
pub(crate) fn sections(out: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut buf = String::new();
    for line in out.lines() {
        if let Some(name) = line.strip_prefix(MARK) {
            if let Some(c) = current.take() {
                map.insert(c, std::mem::take(&mut buf));
            }
            if name != "end" {
                current = Some(name.to_string());
            }
        } else if current.is_some() {
            buf.push_str(line);
            buf.push('\n');
        }
    }
    map
}

/// The section an output stops in, when it stops before the closing marker (a cut or a
/// host that died mid-answer); `sections` leaves that section out.
pub(crate) fn unfinished(out: &str) -> Option<&str> {
    let last = out.lines().rev().find_map(|l| l.strip_prefix(MARK))?;
    (last != "end").then_some(last)
}

/// `lscpu -J`: model, sockets, physical cores, online threads.
pub(crate) fn lscpu(text: &str) -> Option<Cpu> {
    let v: Value = serde_json::from_str(text).ok()?;
    let mut f: BTreeMap<String, String> = BTreeMap::new();
    fn walk(items: &Value, f: &mut BTreeMap<String, String>) {
        for it in items.as_array().into_iter().flatten() {
            if let (Some(k), Some(d)) = (it["field"].as_str(), it["data"].as_str()) {
                f.entry(k.trim_end_matches(':').to_string())
                    .or_insert_with(|| d.to_string());
            }
            walk(&it["children"], f);
        }
    }
    walk(&v["lscpu"], &mut f);
    let num = |k: &str| f.get(k).and_then(|s| s.trim().parse::<u32>().ok());
    let threads = num("CPU(s)");
    let sockets = num("Socket(s)");
    let per_socket = num("Core(s) per socket");
    let cores = match (per_socket, sockets) {
        (Some(c), Some(s)) => Some(c * s),
        _ => None,
    };
    (threads.is_some() || cores.is_some()).then(|| Cpu {
        model: f.get("Model name").map(|s| s.trim().to_string()),
        sockets,
        cores,
        threads,
    })
}

/// MemTotal from /proc/meminfo, GiB (the kernel's view: a little under the DIMMs).
pub(crate) fn meminfo_gib(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0 / 1024.0)
}

/// Installed memory from `dmidecode -t memory`, GiB (sum of the DIMM sizes).
pub(crate) fn dmidecode_gib(text: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut seen = false;
    for line in text.lines() {
        let t = line.trim();
        let Some(size) = t.strip_prefix("Size:") else {
            continue;
        };
        let mut parts = size.split_whitespace();
        let (Some(n), Some(unit)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<f64>() else { continue };
        seen = true;
        total += match unit {
            "TB" => n * 1024.0,
            "GB" => n,
            "MB" => n / 1024.0,
            _ => 0.0,
        };
    }
    (seen && total > 0.0).then_some(total)
}

/// `/dev/disk/by-id` entries: kernel name -> the most stable link. Vendor/model/serial
/// names first (`nvme-Model_Serial`, `ata-`, `scsi-`), then `wwn-`, then EUI forms;
/// partitions are left out.
pub(crate) fn by_id(text: &str) -> BTreeMap<String, String> {
    let rank = |name: &str| {
        if name.starts_with("nvme-eui.") || name.starts_with("nvme-nvme.") {
            4
        } else if name.starts_with("nvme-") || name.starts_with("ata-") {
            0
        } else if name.starts_with("scsi-") {
            1
        } else if name.starts_with("wwn-") {
            2
        } else {
            3
        }
    };
    let mut best: BTreeMap<String, (u8, String)> = BTreeMap::new();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (Some(name), Some(target)) = (it.next(), it.next()) else {
            continue;
        };
        if name.contains("-part") {
            continue;
        }
        let kname = target.rsplit('/').next().unwrap_or(target).to_string();
        let r = rank(name);
        let candidate = (r, format!("/dev/disk/by-id/{name}"));
        match best.get(&kname) {
            Some(b) if (b.0, &b.1) <= (candidate.0, &candidate.1) => {}
            _ => {
                best.insert(kname, candidate);
            }
        }
    }
    best.into_iter().map(|(k, (_, p))| (k, p)).collect()
}

/// `lsblk -J -b`: whole disks (no partitions, loop, RAM or zram devices, no CD drives).
pub(crate) fn lsblk(text: &str, by_id: &BTreeMap<String, String>) -> Vec<Disk> {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in v["blockdevices"].as_array().into_iter().flatten() {
        if d["type"].as_str() != Some("disk") {
            continue;
        }
        let kname = d["kname"]
            .as_str()
            .or(d["name"].as_str())
            .unwrap_or("")
            .to_string();
        if kname.starts_with("zram") || kname.starts_with("ram") || kname.starts_with("loop") {
            continue;
        }
        let size = d["size"]
            .as_u64()
            .or_else(|| d["size"].as_str().and_then(|s| s.parse().ok()))
            .unwrap_or(0);
        if size == 0 {
            continue;
        }
        let tran = d["tran"].as_str().unwrap_or("");
        let removable = d["rm"].as_bool() == Some(true) || d["hotplug"].as_bool() == Some(true);
        let protocol = match tran {
            "nvme" => Some(Protocol::Nvme),
            "sata" => Some(Protocol::Sata),
            "sas" => Some(Protocol::Sas),
            "usb" => Some(Protocol::Usb),
            "" if kname.starts_with("nvme") => Some(Protocol::Nvme),
            "" => None,
            _ => Some(Protocol::Other),
        };
        let rota = d["rota"]
            .as_bool()
            .or_else(|| d["rota"].as_str().map(|s| s == "1"));
        let media = match (protocol, rota) {
            (Some(Protocol::Nvme), _) | (_, Some(false)) => Some(Media::Ssd),
            (_, Some(true)) if !removable && !tran.is_empty() => Some(Media::Hdd),
            _ => None,
        };
        let str_of = |k: &str| {
            d[k].as_str()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        out.push(Disk {
            id: kname.clone(),
            path: by_id.get(&kname).cloned(),
            capacity_bytes: Some(size),
            media,
            protocol,
            model: str_of("model"),
            serial: str_of("serial"),
            derived: None,
        });
    }
    out
}

/// One line of the sysfs probe: name, speed (Mb/s or -), carrier, address, physical.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SysNet {
    pub(crate) speed: Option<u32>,
    pub(crate) carrier: Option<bool>,
    pub(crate) physical: bool,
}

pub(crate) fn sysnet(text: &str) -> BTreeMap<String, SysNet> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 5 {
                return None;
            }
            Some((
                f[0].to_string(),
                SysNet {
                    speed: f[1]
                        .parse::<i64>()
                        .ok()
                        .filter(|s| *s > 0)
                        .map(|s| s as u32),
                    carrier: match f[2] {
                        "1" => Some(true),
                        "0" => Some(false),
                        _ => None,
                    },
                    physical: f[4] == "1",
                },
            ))
        })
        .collect()
}

/// Physical Ethernet ports from `ip -j -d link` and the sysfs probe. Bond members report
/// their permanent MAC (`permaddr`), not the bond's; bonds, VLANs, bridges, veths and
/// other virtual links are not ports.
pub(crate) fn nics(iplink: &str, sys: &BTreeMap<String, SysNet>) -> Vec<Nic> {
    let Ok(v) = serde_json::from_str::<Value>(iplink) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for l in v.as_array().into_iter().flatten() {
        let Some(name) = l["ifname"].as_str() else {
            continue;
        };
        if l["link_type"].as_str() != Some("ether") {
            continue;
        }
        let kind = l["linkinfo"]["info_kind"].as_str();
        if kind.is_some() {
            continue; // bond, vlan, bridge, veth, ifb, tun ...
        }
        let s = sys.get(name);
        if s.is_some_and(|s| !s.physical) {
            continue;
        }
        let mac_raw = l["permaddr"]
            .as_str()
            .or(l["address"].as_str())
            .unwrap_or("");
        let Some(mac) = normalize_mac(mac_raw) else {
            continue;
        };
        let link = match (s.and_then(|s| s.carrier), l["operstate"].as_str()) {
            (Some(true), _) | (None, Some("UP")) => LinkState::Up,
            (Some(false), _) | (None, Some("DOWN")) => LinkState::Down,
            _ => LinkState::Unknown,
        };
        out.push(Nic {
            name: Some(name.to_string()),
            mac,
            speed_mbps: s.and_then(|s| s.speed),
            link,
            adapter: l["parentdev"].as_str().map(str::to_string),
            port: None,
            lldp: None,
        });
    }
    out
}

/// Every Ethernet link of `ip -j -d link` (virtual ones too) by name, as a NIC without
/// speed: where a switch's LLDP frames arrive on a link `nics` leaves out, that link is
/// cabled after all.
pub(crate) fn ether_links(iplink: &str) -> BTreeMap<String, Nic> {
    let Ok(v) = serde_json::from_str::<Value>(iplink) else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for l in v.as_array().into_iter().flatten() {
        let (Some(name), Some(mac)) = (
            l["ifname"].as_str(),
            l["address"].as_str().and_then(normalize_mac),
        ) else {
            continue;
        };
        if l["link_type"].as_str() != Some("ether") {
            continue;
        }
        let link = match l["operstate"].as_str() {
            Some("UP") => LinkState::Up,
            Some("DOWN") => LinkState::Down,
            _ => LinkState::Unknown,
        };
        out.insert(
            name.to_string(),
            Nic {
                name: Some(name.to_string()),
                mac,
                speed_mbps: None,
                link,
                adapter: None,
                port: None,
                lldp: None,
            },
        );
    }
    out
}

/// `key=value` lines of the DMI probe; empty values and placeholders dropped.
pub(crate) fn dmi(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(_, v)| {
            !v.is_empty()
                && !v.eq_ignore_ascii_case("not specified")
                && !v.eq_ignore_ascii_case("to be filled by o.e.m.")
                && !v.eq_ignore_ascii_case("default string")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/ssh")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn captured_machine() {
        // A KVM guest with one virtio disk, one virtio NIC, ifb devices and a zram swap.
        let cpu = lscpu(&captured("this-machine/lscpu.json")).unwrap();
        assert_eq!(cpu.threads, Some(2));
        assert!(cpu.model.is_some());
        let disks = lsblk(&captured("this-machine/lsblk.json"), &BTreeMap::new());
        assert_eq!(disks.len(), 1, "zram is not a disk");
        assert_eq!(
            (disks[0].id.as_str(), disks[0].capacity_bytes),
            ("vda", Some(274_877_906_944))
        );
        let sys = sysnet(&captured("this-machine/sysnet.txt"));
        let n = nics(&captured("this-machine/iplink.json"), &sys);
        assert_eq!(n.len(), 1, "ifb devices and lo are not ports: {n:?}");
        assert_eq!(
            (n[0].name.as_deref(), n[0].mac.as_str()),
            (Some("eth0"), "02:fc:00:00:00:01")
        );
        assert_eq!(n[0].speed_mbps, None, "virtio reports -1: unknown");
        assert_eq!(n[0].link, LinkState::Up);
        let gib = meminfo_gib(&captured("this-machine/meminfo.txt")).unwrap();
        assert!((gib - 23.54).abs() < 0.01, "{gib}");
    }

    const BOND_LINKS: &str = r#"[
      {"ifname":"lo","link_type":"loopback","address":"00:00:00:00:00:00","operstate":"UNKNOWN"},
      {"ifname":"ens1f0","link_type":"ether","address":"b8:ce:f6:00:00:01","permaddr":"B8:CE:F6:00:00:02","master":"bond0","operstate":"UP","linkinfo":{"info_slave_kind":"bond"},"parentdev":"0000:3b:00.1"},
      {"ifname":"ens1f1","link_type":"ether","address":"b8:ce:f6:00:00:01","master":"bond0","operstate":"UP","linkinfo":{"info_slave_kind":"bond"},"parentdev":"0000:3b:00.0"},
      {"ifname":"bond0","link_type":"ether","address":"b8:ce:f6:00:00:01","operstate":"UP","linkinfo":{"info_kind":"bond","info_data":{"mode":"802.3ad"}}},
      {"ifname":"bond0.100","link":"bond0","link_type":"ether","address":"b8:ce:f6:00:00:01","operstate":"UP","linkinfo":{"info_kind":"vlan","info_data":{"protocol":"802.1Q","id":100}}},
      {"ifname":"mgmt-br","link_type":"ether","address":"b8:ce:f6:00:00:01","linkinfo":{"info_kind":"bridge"}},
      {"ifname":"veth1a2b","link_type":"ether","address":"7a:11:22:33:44:55","linkinfo":{"info_kind":"veth"}},
      {"ifname":"eno1","link_type":"ether","address":"b4:96:91:00:00:09","operstate":"DOWN"}
    ]"#;

    #[test]
    fn bonds_vlans_bridges_and_virtual_links() {
        let sys = sysnet(
            "ens1f0 25000 1 b8:ce:f6:00:00:01 1\nens1f1 25000 1 b8:ce:f6:00:00:01 1\nbond0 50000 1 b8:ce:f6:00:00:01 0\neno1 -1 0 b4:96:91:00:00:09 1\n",
        );
        let n = nics(BOND_LINKS, &sys);
        let names: Vec<&str> = n.iter().map(|x| x.name.as_deref().unwrap()).collect();
        assert_eq!(names, ["ens1f0", "ens1f1", "eno1"]);
        assert_eq!(
            n[0].mac, "b8:ce:f6:00:00:02",
            "a bond member's own MAC (permaddr), not the bond's"
        );
        assert_eq!(n[1].mac, "b8:ce:f6:00:00:01");
        assert_eq!((n[0].speed_mbps, n[0].link), (Some(25_000), LinkState::Up));
        assert_eq!((n[2].speed_mbps, n[2].link), (None, LinkState::Down));
        assert_eq!(n[0].adapter.as_deref(), Some("0000:3b:00.1"));
    }

    #[test]
    fn nvme_namespaces_usb_sticks_and_by_id_choice() {
        let ids = by_id(
            "nvme-eui.0025388b01234567 /dev/nvme0n1\n\
             nvme-Samsung_SSD_980_PRO_2TB_S6B0NL0T123456_1 /dev/nvme0n1\n\
             nvme-Samsung_SSD_980_PRO_2TB_S6B0NL0T123456 /dev/nvme0n1\n\
             nvme-Samsung_SSD_980_PRO_2TB_S6B0NL0T123456-part1 /dev/nvme0n1p1\n\
             nvme-eui.0025388b0aaaaaaa /dev/nvme1n2\n\
             wwn-0x5002538e40a1b2c3 /dev/sdb\n\
             ata-Samsung_SSD_870_EVO_1TB_S6PUNX0T111111 /dev/sdb\n\
             usb-SanDisk_Ultra_4C530001-0:0 /dev/sda\n",
        );
        assert_eq!(
            ids["nvme0n1"],
            "/dev/disk/by-id/nvme-Samsung_SSD_980_PRO_2TB_S6B0NL0T123456"
        );
        assert_eq!(
            ids["nvme1n2"], "/dev/disk/by-id/nvme-eui.0025388b0aaaaaaa",
            "only an EUI link: take it"
        );
        assert_eq!(
            ids["sdb"],
            "/dev/disk/by-id/ata-Samsung_SSD_870_EVO_1TB_S6PUNX0T111111"
        );
        let blk = r#"{"blockdevices":[
          {"name":"sda","kname":"sda","size":30752636928,"type":"disk","rota":true,"tran":"usb","model":"Ultra","serial":"4C530001","rm":true,"hotplug":true},
          {"name":"sdb","kname":"sdb","size":1000204886016,"type":"disk","rota":false,"tran":"sata","model":"Samsung SSD 870 EVO 1TB","serial":"S6PUNX0T111111","rm":false,"hotplug":false},
          {"name":"sr0","kname":"sr0","size":1073741312,"type":"rom","rota":true,"tran":"sata"},
          {"name":"nvme0n1","kname":"nvme0n1","size":"2000398934016","type":"disk","rota":false,"tran":"nvme","model":"Samsung SSD 980 PRO 2TB","serial":"S6B0NL0T123456","children":[{"name":"nvme0n1p1","type":"part","size":536870912}]},
          {"name":"nvme1n2","kname":"nvme1n2","size":1000000000000,"type":"disk","rota":false,"tran":null,"model":"SAMSUNG MZQL21T9","serial":"S64GNE0R000001"},
          {"name":"loop0","kname":"loop0","size":65536,"type":"loop"}
        ]}"#;
        let d = lsblk(blk, &ids);
        let names: Vec<&str> = d.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(names, ["sda", "sdb", "nvme0n1", "nvme1n2"]);
        assert_eq!(d[0].protocol, Some(Protocol::Usb));
        assert_eq!(
            d[0].media, None,
            "a USB stick's rotational flag means nothing"
        );
        assert_eq!(
            (d[1].protocol, d[1].media),
            (Some(Protocol::Sata), Some(Media::Ssd))
        );
        assert_eq!(
            d[2].capacity_bytes,
            Some(2_000_398_934_016),
            "size given as a string"
        );
        assert_eq!(
            d[3].protocol,
            Some(Protocol::Nvme),
            "a second namespace without tran is still NVMe"
        );
        assert_eq!(
            d[3].path.as_deref(),
            Some("/dev/disk/by-id/nvme-eui.0025388b0aaaaaaa")
        );
    }

    #[test]
    fn dmidecode_and_dmi() {
        let text = "Memory Device\n\tSize: 32 GB\n\tLocator: A1\nMemory Device\n\tSize: No Module Installed\nMemory Device\n\tSize: 32768 MB\n";
        assert_eq!(dmidecode_gib(text), Some(64.0));
        assert_eq!(dmidecode_gib("Permission denied"), None);
        let d = dmi(
            "product_serial=CNIVC0014M0388\nsys_vendor=Dell Inc.\nproduct_name=To Be Filled By O.E.M.\nproduct_uuid=\n",
        );
        assert_eq!(
            d.get("product_serial").map(String::as_str),
            Some("CNIVC0014M0388")
        );
        assert!(!d.contains_key("product_name") && !d.contains_key("product_uuid"));
    }

    #[test]
    fn sections_survive_missing_commands_and_garbage() {
        let out = "@@rackplan:lscpu\n@@rackplan:lsblk\nnot json at all\n@@rackplan:meminfo\nMemTotal: 1048576 kB\n@@rackplan:end\n";
        let s = sections(out);
        assert!(lscpu(&s["lscpu"]).is_none());
        assert!(lsblk(&s["lsblk"], &BTreeMap::new()).is_empty());
        assert_eq!(meminfo_gib(&s["meminfo"]), Some(1.0));
        assert!(sections("random text\nwithout markers\n").is_empty());
        assert_eq!(unfinished(out), None);
        let cut = "@@rackplan:meminfo\nMemTotal: 1 kB\n@@rackplan:lldp\n{\"lldp\": {\"interf";
        assert_eq!(unfinished(cut), Some("lldp"));
        assert!(!sections(cut).contains_key("lldp"));
        assert_eq!(unfinished("no markers"), None);
    }
}
