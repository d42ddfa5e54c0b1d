//! The command lines `render` writes for the operator (the Deployment's container args, the
//! systemd unit's `ExecStart`) go through rackplan's own parser and are resolved as
//! `rackplan operator` resolves them, on the example site's committed render (which CI
//! holds to what `render` writes): a manifest can never carry a flag the binary refuses.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::Parser;
use serde_json::Value;

use super::args::{Cli, Command, OperatorArgs};

fn committed(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("iso-config/example/operator")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn objects(rel: &str) -> Vec<Value> {
    crate::simulate::scenario::objects(&committed(rel)).unwrap()
}

fn operator_args(argv: &[String]) -> OperatorArgs {
    let cli =
        Cli::try_parse_from(std::iter::once("rackplan".to_string()).chain(argv.iter().cloned()))
            .unwrap_or_else(|e| panic!("rackplan refuses {argv:?}:\n{e}"));
    match cli.command {
        Command::Operator(o) => o,
        other => panic!("{argv:?} is not `rackplan operator`: {other:?}"),
    }
}

/// `path` with the prefix `from` moved under `to`.
fn moved(path: &Path, from: &str, to: &Path) -> PathBuf {
    to.join(
        path.strip_prefix(from)
            .unwrap_or_else(|_| panic!("{} is not under {from}", path.display())),
    )
}

#[test]
fn the_deployment_runs_a_command_the_binary_accepts_on_the_mounted_config() {
    let docs = objects("50-operator-deployment.yaml");
    let deploy = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let pod = &deploy["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let argv: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let mut o = operator_args(&argv);
    // --listen answers on the pod's address, on the port the probes and the Service use.
    let listen: SocketAddr = o.listen.parse().unwrap();
    assert!(listen.ip().is_unspecified(), "{listen}");
    assert_eq!(
        u64::from(listen.port()),
        container["ports"][0]["containerPort"].as_u64().unwrap()
    );
    assert_eq!(container["ports"][0]["name"], "metrics");
    // The ConfigMap, laid out as the volume's items say, is what the flags point at.
    let config = &objects("40-operator-config.yaml")[0];
    let volume = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["configMap"]["name"] == config["metadata"]["name"])
        .unwrap();
    let mount = container["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == volume["name"])
        .unwrap();
    let root = mount["mountPath"].as_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for item in volume["configMap"]["items"].as_array().unwrap() {
        let to = tmp.path().join(item["path"].as_str().unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let key = item["key"].as_str().unwrap();
        std::fs::write(&to, config["data"][key].as_str().unwrap()).unwrap();
    }
    assert_eq!(
        config["data"].as_object().unwrap().len(),
        volume["configMap"]["items"].as_array().unwrap().len(),
        "every key of the ConfigMap is mounted"
    );
    o.catalogue = moved(&o.catalogue, root, tmp.path());
    o.scenario = moved(&o.scenario, root, tmp.path());
    let resolved = super::operator::resolve(&o).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(resolved.settings.catalogue.names(), "large, standard");
    assert_eq!(resolved.settings.namespace, deploy["metadata"]["namespace"]);
    assert!(resolved.lease.is_some(), "two replicas need the Lease");
}

#[test]
fn the_systemd_unit_runs_a_command_the_binary_accepts() {
    let unit = committed("systemd/rackplan-operator.service");
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap();
    let mut words = exec.split_whitespace();
    assert_eq!(words.next(), Some("/usr/local/bin/rackplan"));
    // %d is systemd's credentials directory; LoadCredential names what it holds.
    let argv: Vec<String> = words
        .map(|w| w.replace("%d", "/run/credentials/x"))
        .collect();
    let o = operator_args(&argv);
    assert_eq!(o.listen, "127.0.0.1:9464");
    let kubeconfig = o.kubeconfig.unwrap();
    let name = kubeconfig.file_name().unwrap().to_str().unwrap();
    assert!(
        unit.lines()
            .any(|l| l.starts_with(&format!("LoadCredential={name}:"))),
        "{name} is not loaded as a credential"
    );
}

#[test]
fn a_flag_the_binary_does_not_know_is_refused() {
    let argv = ["rackplan", "operator", "--catalog", "c", "--scenario", "s"];
    assert!(Cli::try_parse_from(argv).is_err());
}
