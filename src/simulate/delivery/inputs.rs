//! The inputs of a prediction, gathered from what a study knows: the scenario's
//! `delivery:` block, the site's golden image and the user-data its catalogue renders (the
//! caller reads those, as [`SiteCatalogue`]), a dump's images, disks, deliveries and rebuilds,
//! and the rebuild model's storage figures. Each input says where it came from; what
//! nothing says is a default, named as one.

use std::collections::BTreeMap;
use std::path::Path;

use super::constants::DEFAULT_IMAGE_BYTES;
use super::model::{
    DeliveryInputs, Given, ImageFacts, ImageKind, Load, MachinePool, NetworkFacts, OnDisks, Roles,
    Storage,
};
use super::spec::{DEFAULT_TARGET_MINUTES, OnDisksSpec, OnDisksWord};
use crate::simulate::scenario::Pool;
use crate::simulate::study::Study;

/// What the site's catalogue says: the image its VMs boot from, the user-data it gives
/// them, the shapes it offers. The caller reads it from the site and the catalogue it
/// renders.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SiteCatalogue {
    /// `images[].name`.
    pub name: String,
    /// The image's kind, when the site's image definition carries one.
    pub kind: Option<ImageKind>,
    /// The cloud-init user-data the catalogue gives the machines, when rendered.
    pub user_data: Option<String>,
    /// The shapes the catalogue offers (`catalogue.shapes`); `None`: all of the scenario's.
    pub shapes: Option<Vec<String>>,
}

/// The machine pools of a shape with the roles the catalogue gives them
/// (`render/catalogue.rs`, `roles`): pools with required anti-affinity are the control
/// plane (etcd and control plane), the others workers; with no such pool the first pool
/// is the control plane; a one-pool shape carries all three roles.
pub fn machine_pools(pools: &[Pool]) -> Vec<MachinePool> {
    let any_cp = pools.iter().any(|p| p.anti_affinity);
    pools
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let cp = if any_cp { p.anti_affinity } else { i == 0 };
            MachinePool {
                name: p.name.clone(),
                count: p.count,
                roles: Roles {
                    etcd: cp,
                    control_plane: cp,
                    worker: !cp || pools.len() == 1,
                },
            }
        })
        .collect()
}

/// What a cloud-config does at boot: whether it installs packages, and whether it
/// installs or starts the guest agent. Text that is not a cloud-config map reads as
/// neither.
pub(crate) fn read_user_data(text: &str) -> (bool, bool) {
    let Ok((v, _)) = crate::files::yaml::parse::<serde_json::Value>(Path::new("<user-data>"), text)
    else {
        return (false, false);
    };
    let packages: Vec<String> = v["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| match p {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(a) => a.first().and_then(|x| x.as_str()).map(str::to_string),
            _ => None,
        })
        .collect();
    let installs = !packages.is_empty()
        || v["package_update"].as_bool() == Some(true)
        || v["package_upgrade"].as_bool() == Some(true);
    let agent = packages.iter().any(|p| p == "qemu-guest-agent");
    (installs, agent)
}

fn kind_of(study: &Study, site: Option<&SiteCatalogue>) -> Given<ImageKind> {
    if let Some(k) = study.scenario.delivery.image.kind {
        return Given::new(k, "scenario delivery.image.kind");
    }
    if let Some(k) = site.and_then(|s| s.kind) {
        return Given::new(k, "site image");
    }
    Given::new(
        ImageKind::Generic,
        "default: no image kind given (scenario delivery.image.kind); a generic cloud image assumed",
    )
}

/// The image facts: kind, what the user-data does at boot, size and where its backing
/// file is.
fn image_facts(study: &Study, site: Option<&SiteCatalogue>, disks: u32) -> ImageFacts {
    let spec = &study.scenario.delivery.image;
    let kind = kind_of(study, site);
    let live = study.delivery_live.as_ref();
    let live_image = live.and_then(|l| l.image(site.map(|s| s.name.as_str())));
    let (installs_packages, agent_in_user_data) =
        if let Some(ud) = site.and_then(|s| s.user_data.as_deref()) {
            let (i, a) = read_user_data(ud);
            (
                Given::new(i, "site catalogue user-data"),
                Given::new(a, "site catalogue user-data"),
            )
        } else {
            // No catalogue read: the user-data a kind of image goes with (a generic image
            // installs the guest agent with its packages; a prepared one installs nothing).
            let generic = kind.value == ImageKind::Generic;
            let from = if generic {
                "default: a generic image's user-data installs packages and the guest agent"
            } else {
                "default: a prepared image's user-data installs nothing"
            };
            (Given::new(generic, from), Given::new(generic, from))
        };
    let guest_agent = if kind.value == ImageKind::Prepared && !agent_in_user_data.value {
        Given::new(true, "a prepared image carries the guest agent")
    } else {
        agent_in_user_data
    };
    let size_bytes = if let Some(g) = spec.size_gib {
        Given::new(g * 1024f64.powi(3), "scenario delivery.image.size_gib")
    } else if let Some(b) = live_image.and_then(|i| i.size_bytes) {
        Given::new(b, "dump VirtualMachineImage status.size")
    } else {
        Given::new(
            DEFAULT_IMAGE_BYTES,
            "default: the reference design's ~3.5 GB image (harvester#9344)",
        )
    };
    let on_disks = match (
        spec.on_disks,
        live_image.and_then(|i| i.ready_disks.as_ref()),
    ) {
        (Some(OnDisksSpec::Word(OnDisksWord::All)), _) => Given::new(
            OnDisks {
                ready: disks,
                disks,
            },
            "scenario delivery.image.on_disks",
        ),
        (Some(OnDisksSpec::Word(OnDisksWord::One)), _) => Given::new(
            OnDisks { ready: 1, disks },
            "scenario delivery.image.on_disks",
        ),
        (Some(OnDisksSpec::Count(n)), _) => Given::new(
            OnDisks {
                ready: n.min(disks),
                disks,
            },
            "scenario delivery.image.on_disks",
        ),
        (None, Some(ready)) => {
            let all = &live.expect("a live image comes from the dump").disks;
            let n = ready.iter().filter(|d| all.contains(*d)).count();
            Given::new(
                OnDisks {
                    ready: u32::try_from(n).unwrap_or(u32::MAX),
                    disks,
                },
                "dump BackingImage status.diskFileStatusMap",
            )
        }
        (None, None) => Given::new(
            OnDisks { ready: 1, disks },
            if live.is_some() {
                "default: the dump has no backing image for the image; one copy assumed (Harvester downloads it to one disk, harvester#6197)"
            } else {
                "default: a fleet that has downloaded the image holds it on one disk (harvester#6197)"
            },
        ),
    };
    ImageFacts {
        name: site
            .map(|s| s.name.clone())
            .or_else(|| live_image.map(|i| i.id.clone())),
        kind,
        installs_packages,
        guest_agent,
        size_bytes,
        on_disks,
    }
}

/// The target of `shape`: the scenario's per-shape target, its `target_minutes`, or the
/// reference design's fifteen minutes.
pub(crate) fn target_of(study: &Study, shape: &str) -> Given<f64> {
    let d = &study.scenario.delivery;
    if let Some(t) = d.targets.get(shape) {
        Given::new(t * 60.0, format!("scenario delivery.targets.{shape}"))
    } else if let Some(t) = d.target_minutes {
        Given::new(t * 60.0, "scenario delivery.target_minutes")
    } else {
        Given::new(
            DEFAULT_TARGET_MINUTES * 60.0,
            "default: the reference design's fifteen minutes",
        )
    }
}

/// The inputs of delivering `concurrent` clusters of `shape` (`pools`) together on the
/// study's fleet, with its site's catalogue when the caller read it
/// (`Study::delivery_site`) and `replicas_without_room` what the placement found no room
/// for.
pub fn inputs_for(
    study: &Study,
    shape: &str,
    pools: &[Pool],
    concurrent: u32,
    replicas_without_room: Option<usize>,
) -> DeliveryInputs {
    let site = study.delivery_site.as_ref();
    let p = &study.scenario.platform;
    let topo = study.topology();
    let live = study.delivery_live.as_ref();
    let (disks, nodes) = if let Some(l) = live.filter(|l| !l.disks.is_empty()) {
        (u32::try_from(l.disks.len()).unwrap_or(u32::MAX), l.nodes)
    } else {
        let (d, n) = topo
            .hosts
            .iter()
            .enumerate()
            .filter(|(i, h)| {
                !h.disks.is_empty() && !topo.no_replicas.get(*i).copied().unwrap_or(false)
            })
            .fold((0usize, 0u32), |(d, n), (_, h)| (d + h.disks.len(), n + 1));
        (u32::try_from(d).unwrap_or(u32::MAX), n)
    };
    let net = &study.scenario.network;
    let rebuild = match live {
        Some(l) => Given::new(
            (f64::from(l.rebuilding) / f64::from(nodes.max(1))).min(f64::from(p.rebuild_limit)),
            format!(
                "dump: {} attached degraded volume(s) spread over {nodes} node(s)",
                l.rebuilding
            ),
        ),
        None => Given::new(0.0, "planned fleet: no rebuild in flight"),
    };
    let (in_flight, vms_in_flight) = match live {
        Some(l) => {
            let vms: u32 = l
                .in_flight
                .iter()
                .map(|s| {
                    study
                        .shapes
                        .get(s)
                        .map_or(0, |ps| ps.iter().map(|p| p.count).sum())
                })
                .sum();
            (
                Given::new(
                    u32::try_from(l.in_flight.len()).unwrap_or(u32::MAX),
                    "dump: ClusterRequests Admitted or Provisioning",
                ),
                vms,
            )
        }
        None => (Given::new(0, "planned fleet: none"), 0),
    };
    DeliveryInputs {
        shape: shape.to_string(),
        pools: machine_pools(pools),
        image: image_facts(study, site, disks),
        storage: Storage {
            stream_mbps: p.stream_mbps,
            disk_read_mbps: p.disk_read_mbps,
            node_link_mbps: f64::from(net.links) * net.speed_gbps * 125.0,
            replicas: p.replicas,
            nodes,
            rebuild_streams_per_node: rebuild,
        },
        load: Load {
            deliveries_in_flight: in_flight,
            vms_in_flight,
        },
        network: NetworkFacts {
            dhcp: None,
            free_addresses: None,
        },
        concurrent: concurrent.max(1),
        replicas_without_room,
        target_s: target_of(study, shape),
    }
}

/// The burst the review asks about: the scenario's `delivery.burst`, else the most
/// clusters the teams' requests start in one month (at least 1).
pub(crate) fn burst_of(study: &Study) -> Given<u32> {
    if let Some(b) = study.scenario.delivery.burst {
        return Given::new(b, "scenario delivery.burst");
    }
    let mut by_month: BTreeMap<&str, u32> = BTreeMap::new();
    for t in &study.scenario.teams {
        for r in &t.requests {
            *by_month.entry(r.from.as_str()).or_default() += r.count;
        }
    }
    match by_month
        .iter()
        .max_by_key(|(m, n)| (**n, std::cmp::Reverse(*m)))
    {
        Some((month, n)) => Given::new(
            (*n).max(1),
            format!("the teams' requests starting in {month}, arriving together"),
        ),
        None => Given::new(1, "default: no team requests in the scenario"),
    }
}
