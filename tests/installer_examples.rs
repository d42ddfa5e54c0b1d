//! The official Harvester example configs parse with our model of the installer's schema,
//! and survive a round trip: we read what the docs write.

use rackplan::render::installer::HarvesterConfig;

use crate::support::shared;

#[test]
fn official_examples_parse_and_round_trip() {
    let dir = shared().join("reference/harvester/examples");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let is_config = name.starts_with("config-reference")
            || name.starts_with("pxe-config")
            || name.starts_with("ipxe-examples-config")
            || name.starts_with("installer-testdata");
        if !is_config {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let (cfg, _): (HarvesterConfig, _) =
            rackplan::files::yaml::parse(&path, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(cfg.scheme_version, Some(1), "{name}");
        assert!(cfg.install.as_ref().unwrap().mode.is_some(), "{name}");
        let again = rackplan::files::yaml::to_string(&cfg);
        let (back, _): (HarvesterConfig, _) = rackplan::files::yaml::parse(&path, &again).unwrap();
        let mut expected = cfg.clone();
        // `default_route` is read (the docs write it) but never written: the installer ignores it.
        if let Some(n) = expected
            .install
            .as_mut()
            .and_then(|i| i.management_interface.as_mut())
        {
            n.default_route = None;
        }
        assert_eq!(back, expected, "{name} round trip");
        seen += 1;
    }
    assert_eq!(
        seen,
        7,
        "expected the seven example configs in {}",
        dir.display()
    );
}

#[test]
fn aliases_the_installer_accepts_are_read() {
    let path =
        shared().join("reference/harvester/examples/installer-testdata-harvester-config.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let (cfg, _): (HarvesterConfig, _) = rackplan::files::yaml::parse(&path, &text).unwrap();
    let os = cfg.os.unwrap();
    assert_eq!(
        os.sysctls.unwrap()["kernel.kptr_restrict"],
        "1",
        "`sysctl` is read as sysctls"
    );
    assert_eq!(
        cfg.install.unwrap().poweroff,
        Some(true),
        "`poweroff` is read"
    );
}

#[test]
fn a_misspelt_installer_key_is_rejected_with_a_suggestion() {
    let text =
        "scheme_version: 1\ninstall:\n  mode: create\n  managment_interface:\n    method: dhcp\n";
    let e =
        rackplan::files::yaml::parse::<HarvesterConfig>(std::path::Path::new("config.yaml"), text)
            .unwrap_err();
    assert_eq!(e.key, "install.managment_interface");
    assert!(
        e.hint
            .unwrap()
            .starts_with("did you mean `management_interface`?")
    );
}

#[test]
fn bond_option_numbers_are_read_as_the_installer_stringifies_them() {
    let text = "install:\n  management_interface:\n    bond_options:\n      mode: 802.3ad\n      miimon: 100\n";
    let (cfg, _): (HarvesterConfig, _) =
        rackplan::files::yaml::parse(std::path::Path::new("c.yaml"), text).unwrap();
    let b = cfg
        .install
        .unwrap()
        .management_interface
        .unwrap()
        .bond_options
        .unwrap();
    assert_eq!(b["miimon"], "100");
}
