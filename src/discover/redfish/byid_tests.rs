//! Tests of `byid.rs`, kept beside it.

use super::*;
use serde_json::json;

fn path(d: &DerivedPath) -> &str {
    d.path.as_deref().unwrap_or_else(|| panic!("{d:?}"))
}

#[test]
fn a_bare_samsung_or_intel_part_number_is_a_candidate_an_oem_model_a_path() {
    let d = derive(
        &json!({"Protocol": "NVMe", "Manufacturer": "Samsung", "Model": "MZQL27T6HBLA-00A07", "SerialNumber": "S6CKNT0W700123"}),
        &Context::default(),
    );
    assert!(d.path.is_none(), "{d:?}");
    assert_eq!(
        d.candidate.as_deref(),
        Some("/dev/disk/by-id/nvme-SAMSUNG_MZQL27T6HBLA-00A07_S6CKNT0W700123")
    );
    assert!(
        d.doubt
            .as_deref()
            .unwrap()
            .contains("without the `SAMSUNG`"),
        "{d:?}"
    );
    let d = derive(
        &json!({"Protocol": "SATA", "Manufacturer": "INTEL", "Model": "SSDSC2KB038T8", "SerialNumber": "PHYF1234"}),
        &Context::default(),
    );
    assert_eq!(
        d.candidate.as_deref(),
        Some("/dev/disk/by-id/ata-INTEL_SSDSC2KB038T8_PHYF1234")
    );
    // The prefix given, or an OEM model of a Samsung drive: the OS's own string.
    for (maker, model) in [
        ("Samsung", "SAMSUNG MZQL27T6HBLA-00A07"),
        (
            "Samsung Electronics Co Ltd",
            "Dell Ent NVMe v2 AGN RI U.2 1.92TB",
        ),
        ("Micron", "Micron_7450_MTFDKBZ7T6TFR"),
    ] {
        let d = derive(
            &json!({"Protocol": "NVMe", "Manufacturer": maker, "Model": model, "SerialNumber": "S1"}),
            &Context::default(),
        );
        assert!(d.path.is_some(), "{maker} {model}: {d:?}");
    }
}

#[test]
fn the_protocol_comes_from_the_controller_when_it_supports_one() {
    let drive = json!({"Model": "SAMSUNG MZ7LH1T9HMLT-00005", "SerialNumber": "S455NY0M123456"});
    let one = json!({"StorageControllers": [{"SupportedDeviceProtocols": ["SATA"]}]});
    let d = derive(
        &drive,
        &Context {
            storage: Some(&one),
            volumes: Vec::new(),
        },
    );
    assert_eq!(
        path(&d),
        "/dev/disk/by-id/ata-SAMSUNG_MZ7LH1T9HMLT-00005_S455NY0M123456"
    );
    assert!(
        d.from
            .contains(&"Storage.StorageControllers.SupportedDeviceProtocols".to_string())
    );
    let two = json!({"StorageControllers": [{"SupportedDeviceProtocols": ["NVMe", "SATA"]}]});
    let d = derive(
        &drive,
        &Context {
            storage: Some(&two),
            volumes: Vec::new(),
        },
    );
    assert!(
        d.path.is_none() && d.doubt.as_deref().unwrap().contains("no Protocol"),
        "{d:?}"
    );
}

#[test]
fn nvme_from_model_and_serial() {
    let d = derive(
        &json!({"Protocol": "PCIe", "MediaType": "SSD", "Model": "Dell Ent NVMe CM6 RI 1.92TB", "SerialNumber": "61X0A002TCD8"}),
        &Context::default(),
    );
    assert_eq!(
        path(&d),
        "/dev/disk/by-id/nvme-Dell_Ent_NVMe_CM6_RI_1.92TB_61X0A002TCD8"
    );
    assert_eq!(
        d.also,
        ["/dev/disk/by-id/nvme-Dell_Ent_NVMe_CM6_RI_1.92TB_61X0A002TCD8_1"]
    );
    assert!(d.from.contains(&"Drive.MediaType".to_string()));
}

#[test]
fn trailing_padding_is_harmless_inner_padding_is_not() {
    let padded = derive(
        &json!({"Protocol": "NVMe", "Model": "Micron_7450_MTFDKBZ7T6TFR          ", "SerialNumber": "233242BE0C46    "}),
        &Context::default(),
    );
    assert_eq!(
        path(&padded),
        "/dev/disk/by-id/nvme-Micron_7450_MTFDKBZ7T6TFR_233242BE0C46"
    );
    for model in ["Dell  Ent", " Lead", "Tab\tin", "Slash/in", "Ünï"] {
        let d = derive(
            &json!({"Protocol": "NVMe", "Model": model, "SerialNumber": "S1"}),
            &Context::default(),
        );
        assert!(d.path.is_none() && d.doubt.is_some(), "{model}: {d:?}");
    }
}

#[test]
fn sata_collapses_blanks_and_wwn_only_for_naa5() {
    let d = derive(
        &json!({"Protocol": "SATA", "Model": "SAMSUNG  MZ7LH1T9HMLT-00005", "SerialNumber": "S455NY0M831393      ",
                "Identifiers": [{"DurableNameFormat": "NAA", "DurableName": "5002538E40A1B2C3"}]}),
        &Context::default(),
    );
    assert_eq!(
        path(&d),
        "/dev/disk/by-id/ata-SAMSUNG_MZ7LH1T9HMLT-00005_S455NY0M831393"
    );
    assert_eq!(d.also, ["/dev/disk/by-id/wwn-0x5002538e40a1b2c3"]);
    let hpe = derive(
        &json!({"Protocol": "SATA", "Model": "VK000960GXAWL", "SerialNumber": "21122DE9C12C",
                "Identifiers": [{"DurableNameFormat": "NAA", "DurableName": "31402EC014CD7DB0"}]}),
        &Context::default(),
    );
    assert!(hpe.also.is_empty(), "a controller-assigned NAA-3 is no WWN");
}

#[test]
fn never_guessed() {
    for drive in [
        json!({"Model": "SAMSUNG MZ7LH1T9HMLT-00005", "SerialNumber": "S455NY0M831393"}),
        json!({"Protocol": "NVMe", "Model": "NVMe 1000"}),
        json!({"Protocol": "SATA", "Model": "X", "SerialNumber": "To Be Filled By O.E.M."}),
        json!({"Protocol": "SATA", "Model": "X", "SerialNumber": "012345678901234567890123"}),
        json!({"Protocol": "SAS", "Model": "SAS 18000", "SerialNumber": "S1"}),
        json!({"Protocol": "FC", "Model": "X", "SerialNumber": "S1"}),
    ] {
        let d = derive(&drive, &Context::default());
        assert!(d.path.is_none(), "{drive}: {d:?}");
        assert!(
            d.doubt.as_deref().unwrap().contains("discover ssh"),
            "{d:?}"
        );
    }
}

#[test]
fn sas_from_the_logical_unit_naa() {
    let d = derive(
        &json!({"Protocol": "SAS", "Identifiers": [{"DurableNameFormat": "NAA", "DurableName": "5000C500A1B2C3D4"}]}),
        &Context::default(),
    );
    assert_eq!(path(&d), "/dev/disk/by-id/scsi-35000c500a1b2c3d4");
    assert_eq!(d.also, ["/dev/disk/by-id/wwn-0x5000c500a1b2c3d4"]);
}

#[test]
fn raid_volumes_and_controllers() {
    let drive =
        json!({"Protocol": "SATA", "Model": "VK000960GXAWL", "SerialNumber": "21122DE9C12C"});
    let naa = json!({"Name": "LD1", "RAIDType": "RAID0", "Identifiers": [{"DurableNameFormat": "NAA", "DurableName": "600508B1001C9F462DF9151C6F566A7A"}], "Links": {"Drives": [{}]}});
    let d = derive(
        &drive,
        &Context {
            storage: None,
            volumes: vec![&naa],
        },
    );
    assert_eq!(
        path(&d),
        "/dev/disk/by-id/scsi-3600508b1001c9f462df9151c6f566a7a"
    );
    let uuid = json!({"Name": "LD1", "RAIDType": "RAID0", "Identifiers": [{"DurableNameFormat": "UUID", "DurableName": "600508B1001C9F462DF9151C6F566A7A"}], "Links": {"Drives": [{}]}});
    let d = derive(
        &drive,
        &Context {
            storage: None,
            volumes: vec![&uuid],
        },
    );
    assert!(d.path.is_none());
    assert_eq!(
        d.candidate.as_deref(),
        Some("/dev/disk/by-id/scsi-3600508b1001c9f462df9151c6f566a7a")
    );
    let two = json!({"Name": "LD2", "RAIDType": "RAID1", "Links": {"Drives": [{}, {}]}});
    let d = derive(
        &drive,
        &Context {
            storage: None,
            volumes: vec![&two],
        },
    );
    assert!(d.doubt.unwrap().contains("one of 2 members"));
    let raw = json!({"VolumeType": "RawDevice", "RAIDType": null});
    let d = derive(
        &drive,
        &Context {
            storage: None,
            volumes: vec![&raw],
        },
    );
    assert_eq!(path(&d), "/dev/disk/by-id/ata-VK000960GXAWL_21122DE9C12C");
    let ctrl =
        json!({"StorageControllers": [{"Name": "M.2 RAID kit", "SupportedRAIDTypes": ["RAID1"]}]});
    let d = derive(
        &drive,
        &Context {
            storage: Some(&ctrl),
            volumes: vec![],
        },
    );
    assert!(d.doubt.unwrap().contains("M.2 RAID kit"));
    let hba = json!({"StorageControllers": [{"Name": "VROC", "SupportedRAIDTypes": []}]});
    let d = derive(
        &drive,
        &Context {
            storage: Some(&hba),
            volumes: vec![],
        },
    );
    assert!(d.path.is_some());
}
