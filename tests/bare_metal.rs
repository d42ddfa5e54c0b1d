//! Servers without an operating system: disk paths from the BMC alone, render refusing
//! what the installer cannot use, and discovery saying what it distrusts.

use serde_json::{Value, json};

use crate::redfish_mockups::run_discovery;
use crate::support::Site;
use crate::support::replay::{BmcSpec, Fleet};
use crate::support::sushy::{mockup, mockup_names, write_bmcs};

/// What each capture's drives must yield: (capture, disk id, expected). `Ok(path)` is the
/// name udev gives the drive, written here by hand from the capture's own fields:
/// - NVMe (`Protocol` NVMe, or Dell's `PCIe` with `MediaType` SSD): `nvme-` + Model with each
///   blank as `_` + `_` + SerialNumber (trailing padding dropped).
/// - a drive in a RAID volume: the volume's NAA name as `scsi-3<lowercase>`.
///
/// `Err(words)` is a drive that cannot be named without guessing; the doubt must say why.
type Row = (
    &'static str,
    &'static str,
    Result<&'static str, &'static str>,
);

const TABLE: &[Row] = &[
    // Dell R750 iDRAC 6.00: Storage/CPU.1, PCIe + SSD; Model "Dell Ent NVMe CM6 RI 1.92TB".
    (
        "dell-poweredge-r750-idrac9-6.00",
        "Disk.Bay.0:Enclosure.Internal.0-1",
        Ok("/dev/disk/by-id/nvme-Dell_Ent_NVMe_CM6_RI_1.92TB_61X0A002TCD8"),
    ),
    (
        "dell-poweredge-r750-idrac9-6.00",
        "Disk.Bay.1:Enclosure.Internal.0-1",
        Ok("/dev/disk/by-id/nvme-Dell_Ent_NVMe_CM6_RI_1.92TB_61M0A08ZTCD8"),
    ),
    (
        "dell-poweredge-r750-idrac9-6.00",
        "Disk.Bay.2:Enclosure.Internal.0-1",
        Ok("/dev/disk/by-id/nvme-Dell_Ent_NVMe_CM6_RI_1.92TB_61P0A06CTCD8"),
    ),
    // Dell R750 iDRAC 7.10: Model "Dell Ent NVMe v2 AGN RI U.2 1.92TB".
    (
        "dell-poweredge-r750-idrac9-7.10-bluefield3",
        "Disk.Bay.6:Enclosure.Internal.0-1",
        Ok("/dev/disk/by-id/nvme-Dell_Ent_NVMe_v2_AGN_RI_U.2_1.92TB_S6CSNE0RB00699"),
    ),
    (
        "dell-poweredge-r750-idrac9-7.10-bluefield3",
        "Disk.Bay.7:Enclosure.Internal.0-1",
        Ok("/dev/disk/by-id/nvme-Dell_Ent_NVMe_v2_AGN_RI_U.2_1.92TB_S6CSNE0RB00701"),
    ),
    // Lenovo SR670 V2: the front NVMe bays on VROC (no RAID types) are named...
    (
        "lenovo-thinksystem-sr670v2-xcc",
        "Drive.Bay_0",
        Ok("/dev/disk/by-id/nvme-Micron_7450_MTFDKBZ7T6TFR_233242BE0C46"),
    ),
    (
        "lenovo-thinksystem-sr670v2-xcc",
        "Drive.Bay_1",
        Ok("/dev/disk/by-id/nvme-Micron_7450_MTFDKBZ7T6TFR_233242BE0C5A"),
    ),
    // ...the M.2 pair sits on a RAID1 kit in no volume: pass-through or hidden is unknown.
    (
        "lenovo-thinksystem-sr670v2-xcc",
        "Drive.M.2_Bay_0",
        Err("RAID controller"),
    ),
    (
        "lenovo-thinksystem-sr670v2-xcc",
        "Drive.M.2_Bay_1",
        Err("RAID controller"),
    ),
    // HPE XL675d: SATA drive 0 is the only member of RAID0 volume 1, whose identifier
    // 600508B1... has the NAA-6 form but is labelled UUID: a candidate, not a name.
    (
        "hpe-proliant-xl675d-gen10plus-ilo5-2.70",
        "0",
        Err("labelled UUID"),
    ),
    // Gigabyte: model and (padded) serial, but no Protocol.
    ("gigabyte-h262-z63-ami", "1", Err("no Protocol")),
    // DMTF tower: no SerialNumber anywhere; some drives are RAID members.
    ("dmtf-public-tower", "Disk-2-0", Err("no SerialNumber")),
    (
        "dmtf-public-tower",
        "Disk-1-1",
        Err("members of RAID volume"),
    ),
    ("dmtf-public-tower", "M.2-1", Err("members of RAID volume")),
    ("dmtf-public-tower", "Disk-1-0", Err("NAA name")),
    // DMTF rackmount1 and the DGX list their disks only under SimpleStorage.
    ("dmtf-public-rackmount1", "SATA Bay 1", Err("SimpleStorage")),
    (
        "nvidia-dgx-h100-ami",
        "NVMe_Device0_NSID1",
        Err("SimpleStorage"),
    ),
];

/// BIOS settings per capture: (capture, setting, state, attribute it is read from).
const BIOS: &[(&str, &str, &str, Option<&str>)] = &[
    (
        "dell-poweredge-r750-idrac9-6.00",
        "virtualization",
        "on",
        Some("ProcVirtualization"),
    ),
    (
        "dell-poweredge-r750-idrac9-6.00",
        "sriov",
        "on",
        Some("SriovGlobalEnable"),
    ),
    (
        "dell-poweredge-r750-idrac9-6.00",
        "boot_mode",
        "uefi",
        Some("BootMode"),
    ),
    (
        "dell-poweredge-r750-idrac9-6.00",
        "secure_boot",
        "off",
        Some("SecureBoot"),
    ),
    (
        "dell-poweredge-r750-idrac9-6.00",
        "smt",
        "on",
        Some("LogicalProc"),
    ),
    (
        "dell-poweredge-r750-idrac9-7.10-bluefield3",
        "iommu",
        "on",
        Some("ProcVirtualization"),
    ),
    // HPE Gen10 Plus (AMD): no attribute for AMD-V in the registry; SR-IOV off on the XL675d.
    (
        "hpe-proliant-dl325-gen10plus-ilo5-2.46",
        "virtualization",
        "unknown",
        None,
    ),
    (
        "hpe-proliant-dl325-gen10plus-ilo5-2.46",
        "iommu",
        "on",
        Some("ProcAmdIoVt"),
    ),
    (
        "hpe-proliant-xl675d-gen10plus-ilo5-2.70",
        "sriov",
        "off",
        Some("Sriov"),
    ),
    (
        "hpe-proliant-xl675d-gen10plus-ilo5-2.70",
        "smt",
        "on",
        Some("ProcSMT"),
    ),
    (
        "lenovo-thinksystem-sr670v2-xcc",
        "virtualization",
        "on",
        Some("Processors_IntelVirtualizationTechnology"),
    ),
    (
        "lenovo-thinksystem-sr670v2-xcc",
        "iommu",
        "on",
        Some("DevicesandIOPorts_IntelVTforDirectedIOVTd"),
    ),
    (
        "lenovo-thinksystem-sr670v2-xcc",
        "boot_mode",
        "uefi",
        Some("BootModes_SystemBootMode"),
    ),
    // Gigabyte/AMI: opaque codes, found through the registry's display names.
    (
        "gigabyte-h262-z63-ami",
        "virtualization",
        "on",
        Some("Rome0565"),
    ),
    ("gigabyte-h262-z63-ami", "iommu", "on", Some("Rome0162")),
    ("gigabyte-h262-z63-ami", "sriov", "on", Some("PCIS007")),
    ("gigabyte-h262-z63-ami", "boot_mode", "uefi", Some("FBO001")),
    ("gigabyte-h262-z63-ami", "smt", "on", Some("Rome0059")),
    (
        "nvidia-dgx-h100-ami",
        "virtualization",
        "on",
        Some("ProcessorVmxEnable"),
    ),
    ("nvidia-dgx-h100-ami", "iommu", "on", Some("VTdSupport")),
    ("nvidia-dgx-h100-ami", "boot_mode", "unknown", None),
    (
        "nvidia-dgx-h100-ami",
        "smt",
        "on",
        Some("ProcessorHyperThreadingDisable"),
    ),
    // Intel: integers and no registry: unknown, with the attribute and its raw value kept.
    (
        "intel-s2600bpb",
        "virtualization",
        "unknown",
        Some("ProcessorVmxEnable"),
    ),
    ("intel-s2600bpb", "iommu", "unknown", Some("VTdSupport")),
    ("intel-s2600bpb", "boot_mode", "unknown", Some("BootMode")),
    (
        "dmtf-public-rackmount1",
        "boot_mode",
        "uefi",
        Some("BootMode"),
    ),
    (
        "dmtf-public-rackmount1",
        "smt",
        "on",
        Some("ProcHyperthreading"),
    ),
    ("dmtf-public-tower", "boot_mode", "uefi", Some("BootMode")),
];

fn node_of<'a>(v: &'a Value, url: &str) -> Option<&'a Value> {
    let b = v["bmcs"].as_array()?.iter().find(|b| b["url"] == url)?;
    let id = b["nodes"].get(0)?;
    v["nodes"].as_array()?.iter().find(|n| n["id"] == *id)
}

#[test]
fn every_capture_yields_the_by_id_names_udev_gives_or_says_why_not() {
    let names = mockup_names();
    assert_eq!(names.len(), 11);
    let fleet = Fleet::start(names.iter().map(|n| BmcSpec::new(&mockup(n))).collect());
    let dir = tempfile::tempdir().unwrap();
    let mut yaml = String::from("bmcs:\n");
    for b in &fleet.bmcs {
        yaml.push_str(&format!("  - address: \"{}\"\n", b.url()));
    }
    std::fs::write(dir.path().join("bmcs.yaml"), yaml).unwrap();
    let (code, v, stderr) = run_discovery(dir.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    let mut seen = 0;
    for (name, b) in names.iter().zip(&fleet.bmcs) {
        let node = node_of(&v, &b.url()).unwrap_or_else(|| panic!("{name}"));
        let disks = node["disks"].as_array().unwrap();
        for d in disks {
            let id = d["id"].as_str().unwrap();
            let derived = &d["derived"];
            assert!(derived.is_object(), "{name} {id}: every BMC disk says");
            // Exactly one of: a path, or a doubt that says how to settle it.
            assert_ne!(derived["path"].is_string(), derived["doubt"].is_string());
            let row = TABLE.iter().find(|(m, i, _)| m == name && *i == id);
            let Some((_, _, want)) = row else {
                // Rows not in the table are of captures whose every disk is doubtful.
                assert!(
                    derived["doubt"].is_string(),
                    "{name} {id}: not in the table but named {derived}"
                );
                continue;
            };
            seen += 1;
            match want {
                Ok(path) => {
                    assert_eq!(derived["path"], *path, "{name} {id}");
                    // The per-namespace link of systemd 254+ is listed beside it.
                    if path.contains("nvme-") {
                        assert_eq!(derived["also"][0], format!("{path}_1"), "{name} {id}");
                    }
                    assert!(
                        derived["from"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|f| f == "Drive.SerialNumber"),
                        "{derived}"
                    );
                }
                Err(words) => {
                    let doubt = derived["doubt"].as_str().unwrap_or("");
                    assert!(doubt.contains(words), "{name} {id}: {doubt}");
                    assert!(doubt.contains("discover ssh"), "{doubt}");
                }
            }
        }
    }
    assert_eq!(seen, TABLE.len(), "every row of the table was checked");
    // BIOS settings, normalised as the facts sheet lists them per vendor.
    for (name, b) in names.iter().zip(&fleet.bmcs) {
        let node = node_of(&v, &b.url()).unwrap();
        let want = BIOS.iter().filter(|(m, ..)| m == name).collect::<Vec<_>>();
        if want.is_empty() {
            assert!(node["bios"].is_null(), "{name}: {}", node["bios"]);
        }
        for (_, setting, state, attribute) in want {
            let got = &node["bios"][setting];
            assert_eq!(got["state"], *state, "{name} {setting}: {got}");
            assert_eq!(got["attribute"].as_str(), *attribute, "{name} {setting}");
        }
    }
    // HPE: the candidate from the volume's NAA-6-shaped identifier is shown, never used.
    let hpe = fleet.bmcs[names
        .iter()
        .position(|n| n.starts_with("hpe-proliant-xl675d"))
        .unwrap()]
    .url();
    let d = &node_of(&v, &hpe).unwrap()["disks"][0]["derived"];
    assert_eq!(
        d["candidate"],
        "/dev/disk/by-id/scsi-3600508b1001c9f462df9151c6f566a7a"
    );
    assert!(d["path"].is_null());
}

/// A BMC that pads a drive's model inside, or whose model holds characters udev writes two
/// ways, gets the ambiguity finding from `check`; discovery warns about script characters.
#[test]
fn reformatted_models_are_doubts_and_script_characters_are_warned_at_discovery() {
    let dell = mockup("dell-poweredge-r750-idrac9-6.00");
    let mut spec = BmcSpec::new(&dell);
    let drive = "/redfish/v1/Systems/System.Embedded.1/Storage/CPU.1/Drives/Disk.Bay.0:Enclosure.Internal.0-1";
    spec.patches.push((
        drive.into(),
        "/Model".into(),
        json!("Dell Ent  NVMe CM6 RI 1.92TB"),
    ));
    spec.patches.push((
        "/redfish/v1/Systems/System.Embedded.1".into(),
        "/Model".into(),
        json!("PowerEdge R750\n$(reboot)"),
    ));
    let fleet = Fleet::start(vec![spec]);
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), &[fleet.bmcs[0].url()]);
    let (code, v, _) = run_discovery(dir.path(), &[]);
    assert_eq!(code, 0);
    let warned = v["bmcs"][0]["distrusted"].as_array().unwrap();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0]
            .as_str()
            .unwrap()
            .contains("model holds a control or script character")
    );
    let disks = v["nodes"][0]["disks"].as_array().unwrap();
    let bay0 = disks
        .iter()
        .find(|d| d["id"] == "Disk.Bay.0:Enclosure.Internal.0-1")
        .unwrap();
    assert!(bay0["derived"]["path"].is_null());
    assert!(
        bay0["derived"]["doubt"]
            .as_str()
            .unwrap()
            .contains("padding inside it"),
        "{bay0}"
    );
    // The table says it too, beside the table.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["discover", "redfish", "--site"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("warning: CNIVC0014M0388: model holds"),
        "{text}"
    );
    assert!(text.contains("disk paths: 2 of 3 disk(s)"), "{text}");
}

fn findings(site: &Site) -> Vec<Value> {
    let r = site.run(&["--output", "json", "check", "--site", "{site}"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|_| panic!("{}", r.stderr));
    v["findings"].as_array().unwrap().clone()
}

fn codes(f: &[Value], node: &str) -> Vec<String> {
    f.iter()
        .filter(|x| x["node"] == node && x["severity"] == "error")
        .map(|x| x["code"].as_str().unwrap().to_string())
        .collect()
}

/// The newcomer, following the old hint: a Redfish id as install_device is refused
/// (render wrote `install.device: SATA Bay 2`), a made-up by-id path is "not in the
/// inventory" (it was "no disk fits the OS disk spec"), and an annotated install disk on a
/// compute node keeps its data disks (they were silently dropped).
#[test]
fn annotations_must_name_a_disk_of_the_node_by_its_device_path() {
    let site = Site::example();
    let id = crate::support::id_of(&site, "hv-c01");
    let inv = site.inventory();
    let node = inv.nodes.iter().find(|n| n.id == id).unwrap();
    let boot = node
        .disks
        .iter()
        .min_by_key(|d| d.capacity_bytes)
        .unwrap()
        .clone();
    let boot_id = boot.id.clone();
    site.edit_inventory(|inv| {
        let n = inv.nodes.iter_mut().find(|n| n.id == id).unwrap();
        n.annotations.install_device = Some(boot_id.clone());
    });
    let f = findings(&site);
    assert_eq!(codes(&f, &id), ["disk-annotation-invalid"], "{f:#?}");
    let hit = f
        .iter()
        .find(|x| x["code"] == "disk-annotation-invalid")
        .unwrap();
    assert!(
        hit["fix"]
            .as_str()
            .unwrap()
            .contains(boot.path.as_deref().unwrap()),
        "{hit}"
    );
    let out = site.tmp.path().join("out");
    let r = site.run(&[
        "render",
        "--site",
        "{site}",
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(!out.join("nodes/hv-c01/config.yaml").exists());

    site.edit_inventory(|inv| {
        let n = inv.nodes.iter_mut().find(|n| n.id == id).unwrap();
        n.annotations.install_device = Some("/dev/disk/by-id/nvme-Made_Up_123".into());
    });
    let f = findings(&site);
    assert_eq!(codes(&f, &id), ["disk-annotation-unknown"], "{f:#?}");
    let hit = f
        .iter()
        .find(|x| x["code"] == "disk-annotation-unknown")
        .unwrap();
    assert!(
        hit["what"]
            .as_str()
            .unwrap()
            .contains("not in this node's inventory")
    );

    // The boot disk by its path: accepted, and the data disk is still rendered.
    site.edit_inventory(|inv| {
        let n = inv.nodes.iter_mut().find(|n| n.id == id).unwrap();
        n.annotations.install_device = boot.path.clone();
    });
    assert_eq!(codes(&findings(&site), &id), Vec::<String>::new());
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let cfg = std::fs::read_to_string(site.out().join("nodes/hv-c01/config.yaml")).unwrap();
    assert!(
        cfg.contains(&format!("device: {}", boot.path.unwrap())),
        "{cfg}"
    );
    assert!(cfg.contains("data_disk: /dev/disk/by-id/"), "{cfg}");

    // A compute node whose data disks are not all there says so, annotation or not.
    site.edit_inventory(|inv| {
        let n = inv.nodes.iter_mut().find(|n| n.id == id).unwrap();
        n.disks
            .retain(|d| d.id == boot_id || d.capacity_bytes > boot.capacity_bytes);
        let keep = n.disks.len() - 1;
        n.disks.truncate(keep);
    });
    assert!(codes(&findings(&site), &id).contains(&"data-disks-missing".to_string()));
}

/// Paths derived from Redfish are used while the OS view is unknown; a derived data disk is
/// never rendered together with `skipchecks: true`.
#[test]
fn derived_paths_render_but_never_with_skipchecks_on_the_data_disk() {
    let site = Site::example();
    let id = crate::support::id_of(&site, "hv-c02");
    site.edit_inventory(|inv| {
        let n = inv.nodes.iter_mut().find(|n| n.id == id).unwrap();
        for d in &mut n.disks {
            let p = d.path.take().unwrap();
            d.derived = Some(rackplan::inventory::DerivedPath {
                path: Some(p),
                from: vec!["Drive.Model".into(), "Drive.SerialNumber".into()],
                ..Default::default()
            });
        }
    });
    assert_eq!(codes(&findings(&site), &id), Vec::<String>::new());
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let cfg = std::fs::read_to_string(site.out().join("nodes/hv-c02/config.yaml")).unwrap();
    assert!(cfg.contains("data_disk: /dev/disk/by-id/"), "{cfg}");
    site.replace(
        "site.yaml",
        "  pxe_base_url: http://10.10.0.5/harvester/v1.6.1\n",
        "  pxe_base_url: http://10.10.0.5/harvester/v1.6.1\n  skip_preflight_checks: true\n",
    );
    let f = findings(&site);
    assert_eq!(codes(&f, &id), ["derived-data-disk-skipchecks"], "{f:#?}");
    // Confirmed by a person: accepted.
    site.edit_inventory(|inv| {
        let n = inv.nodes.iter_mut().find(|n| n.id == id).unwrap();
        let data = n
            .disks
            .iter()
            .filter(|d| d.protocol == Some(rackplan::inventory::Protocol::Nvme))
            .find_map(|d| d.derived.as_ref()?.path.clone());
        n.annotations.data_disk = data;
    });
    assert_eq!(codes(&findings(&site), &id), Vec::<String>::new());
}

/// A network site.yaml defines that a role's profile gives no ports is an error with the
/// fix, and no VlanConfig without NICs is ever written.
#[test]
fn a_network_without_ports_is_refused_with_the_fix() {
    let site = Site::example();
    let profiles = site.tmp.path().join("profiles/compute.yaml");
    let text = std::fs::read_to_string(&profiles).unwrap();
    let start = text.find("  - network: storage").unwrap();
    let end = text[start + 1..]
        .find("  - network:")
        .map_or(text.len(), |i| start + 1 + i);
    std::fs::write(&profiles, format!("{}{}", &text[..start], &text[end..])).unwrap();
    let f = findings(&site);
    let hit: Vec<&Value> = f
        .iter()
        .filter(|x| x["code"] == "network-without-ports")
        .collect();
    assert_eq!(hit.len(), 1, "{f:#?}");
    assert!(hit[0]["what"].as_str().unwrap().contains("storage network"));
    assert!(
        hit[0]["fix"]
            .as_str()
            .unwrap()
            .contains("profiles/compute.yaml"),
        "{}",
        hit[0]
    );
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 1);
    assert!(
        !site
            .out()
            .join("manifests/networks/20-vlanconfigs.yaml")
            .exists()
    );
}
