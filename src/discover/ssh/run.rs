//! Discovery over SSH for a list of hosts: each probed on its own with a deadline and a
//! global cap in flight, its output parsed into a node record.

use super::{exec, probe};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde::Serialize;
use tokio::sync::Semaphore;

use super::exec::{KeyCheck, Target};
use std::collections::BTreeMap;

use crate::inventory::{LinkState, Nic, Node, Sources};

#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) known_hosts: PathBuf,
    pub(crate) accept_new: bool,
    pub(crate) timeout: Duration,
    pub(crate) concurrency: usize,
    pub(crate) retries: u32,
}

/// A host argument that is not `user@host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum HostSpecError {
    #[error("`{0}`: missing ]")]
    MissingBracket(String),
    #[error("`{0}`: bad port")]
    BadPort(String),
    #[error("`{0}` is not user@host[:port]")]
    NotUserHost(String),
}

/// One host to probe; `node` is the inventory id when the host came from the lock.
#[derive(Debug, Clone)]
pub(crate) struct HostSpec {
    pub(crate) user: String,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) node: Option<String>,
}

impl HostSpec {
    /// `user@host:port`, `host:port`, `host`; IPv6 as `[::1]:22`.
    pub(crate) fn parse(s: &str, default_user: &str) -> Result<HostSpec, HostSpecError> {
        let (user, rest) = match s.split_once('@') {
            Some((u, r)) => (u.to_string(), r),
            None => (default_user.to_string(), s),
        };
        let (host, port) = if let Some(r) = rest.strip_prefix('[') {
            let (h, p) = r
                .split_once(']')
                .ok_or_else(|| HostSpecError::MissingBracket(s.to_string()))?;
            (
                h.to_string(),
                p.strip_prefix(':')
                    .map(str::parse)
                    .transpose()
                    .map_err(|_| HostSpecError::BadPort(s.to_string()))?,
            )
        } else {
            match rest.rsplit_once(':') {
                Some((h, p)) => (
                    h.to_string(),
                    Some(
                        p.parse()
                            .map_err(|_| HostSpecError::BadPort(s.to_string()))?,
                    ),
                ),
                None => (rest.to_string(), None),
            }
        };
        if host.is_empty() || user.is_empty() {
            return Err(HostSpecError::NotUserHost(s.to_string()));
        }
        Ok(HostSpec {
            user,
            host,
            port: port.unwrap_or(22),
            node: None,
        })
    }

    /// One host per planned node of the lock: its management address, port 22.
    pub(crate) fn from_lock(lock: &crate::plan::Lock, user: &str) -> Vec<HostSpec> {
        lock.nodes
            .iter()
            .map(|a| HostSpec {
                user: user.to_string(),
                host: a.management_ip.to_string(),
                port: 22,
                node: Some(a.id.clone()),
            })
            .collect()
    }

    pub(crate) fn address(&self) -> String {
        format!("{}@{}:{}", self.user, self.host, self.port)
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct HostOutcome {
    pub(crate) address: String,
    pub(crate) ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    pub(crate) host_key: String,
    pub(crate) seconds: f64,
    pub(crate) notes: Vec<String>,
    #[serde(skip)]
    pub(crate) node: Option<Node>,
    #[serde(skip)]
    pub(crate) spec_node: Option<String>,
}

/// Most bytes read of one host's answer. Past it the answer is cut: a cut in the LLDP
/// section (the last, and the one a flood of LLDP speakers inflates) drops that section
/// with a note; a cut anywhere else fails the host.
const MAX_ANSWER: usize = 8 << 20;

/// Turn a probe's output into a node record (OS view only); `lldp_cut` when the answer was
/// cut inside its LLDP section.
pub(crate) fn node_from_probe(
    out: &str,
    lldp_cut: bool,
    address: &str,
    now: &str,
) -> (Node, Vec<String>) {
    let s = probe::sections(out);
    let get = |k: &str| s.get(k).map_or("", String::as_str);
    let mut notes = Vec::new();
    let dmi = probe::dmi(get("dmi"));
    let cpu = probe::lscpu(get("lscpu"));
    if cpu.is_none() {
        notes.push("lscpu gave nothing: CPU unknown".to_string());
    }
    let memory = if let Some(g) = probe::dmidecode_gib(get("dmidecode")) {
        Some(g)
    } else {
        let m = probe::meminfo_gib(get("meminfo"));
        if m.is_some() {
            let why = if get("dmidecode").contains("rackplan: dmidecode missing") {
                "dmidecode is not installed on the host"
            } else if get("dmidecode").contains("rackplan: dmidecode denied") {
                "dmidecode needs root (log in as root, or allow `sudo -n dmidecode`)"
            } else {
                "dmidecode reported no memory devices"
            };
            notes.push(format!(
                "{why}: memory is the kernel's MemTotal, a little under the DIMMs"
            ));
        } else {
            notes.push("no memory information".into());
        }
        m
    };
    let by_id = probe::by_id(get("byid"));
    if by_id.is_empty() {
        notes.push("no /dev/disk/by-id links: install disk paths stay unknown".into());
    }
    let disks = probe::lsblk(get("lsblk"), &by_id);
    if disks.is_empty() {
        notes.push("lsblk gave no disk".into());
    }
    let sysnet = probe::sysnet(get("sysnet"));
    let mut nics = probe::nics(get("iplink"), &sysnet);
    let lldp_at = lldp_neighbours(
        (!lldp_cut).then(|| get("lldp")),
        get("lldpifs"),
        get("iplink"),
        &sysnet,
        &mut nics,
        now,
        &mut notes,
    );
    if nics.is_empty() {
        notes.push("no physical Ethernet port found (ip -j -d link)".into());
    }
    let serial = dmi.get("product_serial").cloned();
    let machine = get("machineid").trim().to_string();
    let id = serial
        .clone()
        .or_else(|| {
            (!machine.is_empty()
                && machine.len() <= 64
                && machine.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| format!("machine-{machine}"))
        })
        .unwrap_or_else(|| address.to_string());
    let node = Node {
        id,
        serial,
        manufacturer: dmi.get("sys_vendor").cloned(),
        model: dmi.get("product_name").cloned(),
        bmc: None,
        cpu,
        memory_gib: memory,
        disks,
        nics,
        gpus: Vec::new(),
        bios: None,
        firmware: None,
        sources: Sources {
            redfish: None,
            ssh: Some(now.to_string()),
            lldp: lldp_at,
        },
        stale: None,
        annotations: Default::default(),
    };
    (node, notes)
}

/// The host's LLDP neighbours (lldpd's `lldpcli`), put on its NICs by interface name; a
/// link `probe::nics` left out as virtual joins them when a neighbour talks on it, or when
/// it is up and the host's lldpd runs LLDP on it (`served`: a cabled port whose switch
/// sends no LLDP). The time they were read, when lldpd answered.
fn lldp_neighbours(
    out: Option<&str>,
    served: &str,
    iplink: &str,
    sysnet: &BTreeMap<String, probe::SysNet>,
    nics: &mut Vec<Nic>,
    now: &str,
    notes: &mut Vec<String>,
) -> Option<String> {
    let Some(out) = out else {
        notes.push(format!(
            "the host's answer passed {} MiB inside its LLDP section (lldpcli's JSON): that section was dropped and no LLDP neighbours read; the rest of the inventory is complete (so many neighbours is a flood of LLDP speakers or a loop: look at the switch ports)",
            MAX_ANSWER >> 20
        ));
        return None;
    };
    if out.contains("rackplan: lldpcli missing") {
        notes.push(
            "lldpcli is not installed on the host: no LLDP neighbours read (install lldpd, or read them from the BMC)".into(),
        );
        return None;
    }
    if out.trim().is_empty() || out.contains("rackplan: lldpcli failed") {
        notes.push(
            "lldpcli gave no answer (lldpd not running, or its socket needs root: log in as root or allow `sudo -n lldpcli`): no LLDP neighbours read".into(),
        );
        return None;
    }
    let view = match crate::discover::lldp::from_lldpcli(out, now) {
        Ok(v) => v,
        Err(e) => {
            notes.push(format!("lldpcli: {e}; no LLDP neighbours read"));
            return None;
        }
    };
    notes.extend(view.notes);
    let mut links = probe::ether_links(iplink);
    let mut join = |iface: &str, lldp: Option<crate::inventory::Lldp>, nics: &mut Vec<Nic>| {
        if let Some(nic) = nics.iter_mut().find(|x| x.name.as_deref() == Some(iface)) {
            nic.lldp = lldp.or(nic.lldp.take());
        } else if let Some(mut nic) = links.remove(iface) {
            nic.speed_mbps = sysnet.get(iface).and_then(|s| s.speed);
            if let Some(c) = sysnet.get(iface).and_then(|s| s.carrier) {
                nic.link = if c { LinkState::Up } else { LinkState::Down };
            }
            if lldp.is_some() || nic.link == LinkState::Up {
                nic.lldp = lldp;
                nics.push(nic);
            }
        }
    };
    for (iface, n) in view.neighbours {
        join(&iface, Some(n), nics);
    }
    for iface in crate::discover::lldp::served_interfaces(served) {
        join(&iface, None, nics);
    }
    Some(now.to_string())
}

async fn one(h: &HostSpec, key: Arc<exec::Auth>, opts: &Options, now: &str) -> HostOutcome {
    let started = Instant::now();
    let target = Target {
        user: h.user.clone(),
        host: h.host.clone(),
        port: h.port,
    };
    let script = probe::script();
    let mut last = String::new();
    let mut check = KeyCheck::NotReached;
    let mut result = None;
    for attempt in 0..=opts.retries {
        let r = tokio::time::timeout(
            opts.timeout,
            exec::run(
                &target,
                key.clone(),
                opts.known_hosts.clone(),
                opts.accept_new,
                opts.timeout,
                &script,
                MAX_ANSWER,
            ),
        )
        .await;
        match r {
            Ok(Ok((out, c))) => {
                check = c;
                result = Some(out);
                break;
            }
            Ok(Err(e)) => {
                last = e.to_string();
                if e.is_final() {
                    break;
                }
            }
            Err(_) => {
                let address = format!("{}:{}", target.host, target.port);
                last = crate::reach::timed_out(
                    &crate::reach::Peer {
                        what: "the host",
                        address: &address,
                        set_in: "the host list (--hosts, ssh.yaml or the lock's addresses)",
                    },
                    Some(opts.timeout),
                    Some("--timeout"),
                );
            }
        }
        if attempt < opts.retries {
            tokio::time::sleep(Duration::from_millis(300 * u64::from(attempt + 1))).await;
        }
    }
    let mut out = HostOutcome {
        address: h.address(),
        ok: false,
        error: None,
        host_key: format!("{check:?}").to_lowercase(),
        seconds: 0.0,
        notes: Vec::new(),
        node: None,
        spec_node: h.node.clone(),
    };
    match result {
        Some(answer) if answer.cut && probe::unfinished(&answer.text) != Some("lldp") => {
            out.error = Some(format!(
                "the host's answer passed {} MiB in its `{}` section; nothing of it was kept (is this a Linux shell printing what the probe asked?)",
                MAX_ANSWER >> 20,
                probe::unfinished(&answer.text).unwrap_or("first")
            ));
        }
        Some(answer) => {
            let (node, notes) = node_from_probe(&answer.text, answer.cut, &h.host, now);
            out.notes = notes;
            if node.cpu.is_none() && node.disks.is_empty() && node.nics.is_empty() {
                out.error = Some("the probe's output made no sense (no CPU, disk or port found); is this a Linux shell?".into());
            } else {
                out.ok = true;
                out.node = Some(node);
            }
        }
        None => out.error = Some(last),
    }
    out.seconds = started.elapsed().as_secs_f64();
    out
}

/// Probe every host, at most `opts.concurrency` at once.
pub(crate) async fn discover(
    hosts: &[HostSpec],
    key: Arc<exec::Auth>,
    opts: &Options,
    now: &str,
    progress: &(dyn Fn(&HostOutcome) + Sync),
) -> Vec<HostOutcome> {
    let gate = Semaphore::new(opts.concurrency.max(1));
    join_all(hosts.iter().map(|h| {
        let key = key.clone();
        let gate = &gate;
        async move {
            let _p = gate.acquire().await.expect("never closed");
            tracing::debug!(host = %h.host, port = h.port, user = %h.user, "probe starts");
            let o = one(h, key, opts, now).await;
            match &o.error {
                None => tracing::info!(host = %o.address, seconds = o.seconds, "probed"),
                Some(err) => tracing::warn!(host = %o.address, "probe failed: {err}"),
            }
            progress(&o);
            o
        }
    }))
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_specs_parse() {
        let h = HostSpec::parse("root@10.0.0.5:2222", "x").unwrap();
        assert_eq!(
            (h.user.as_str(), h.host.as_str(), h.port),
            ("root", "10.0.0.5", 2222)
        );
        let h = HostSpec::parse("10.0.0.5", "rancher").unwrap();
        assert_eq!((h.user.as_str(), h.port), ("rancher", 22));
        let h = HostSpec::parse("a@[::1]:22", "x").unwrap();
        assert_eq!(h.host, "::1");
        assert_eq!(
            HostSpec::parse("a@h:notaport", "x").unwrap_err(),
            HostSpecError::BadPort("a@h:notaport".into())
        );
        assert_eq!(
            HostSpec::parse("a@[::1", "x").unwrap_err().to_string(),
            "`a@[::1`: missing ]"
        );
        assert!(matches!(
            HostSpec::parse("@h", "x"),
            Err(HostSpecError::NotUserHost(_))
        ));
    }
}
