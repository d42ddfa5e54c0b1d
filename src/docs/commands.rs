//! The reference page of a command: its long help, as clap renders it at a fixed width,
//! and a worked example.

use std::fmt::Write as _;

/// Worked examples per command, shown under its help.
pub(crate) fn command_example(name: &str) -> &'static str {
    match name {
        "init" => {
            "rackplan init my-site\nrackplan discover redfish --site my-site\nrackplan init my-site --from my-site/nodes.yaml"
        }
        "discover" => {
            "rackplan discover redfish --site inventory/example\nrackplan discover ssh --site inventory/example --accept-new"
        }
        "check" => {
            "rackplan check --site inventory/example\nrackplan check --site inventory/example --severity error --node hv-c01"
        }
        "plan" => {
            "rackplan plan --site inventory/example --dry-run\nrackplan plan --site inventory/example"
        }
        "render" => {
            "rackplan render --site inventory/example\nkubectl apply -k iso-config/example/manifests/"
        }
        "simulate" => {
            "rackplan simulate simulations/reference-factory.yaml\nrackplan simulate simulations/reference-factory.yaml --rebuild-data 15TiB --plot plots/"
        }
        "admit" => {
            "printf 'team: paiement\\nshape: standard\\nduration: 72h\\n' | rackplan admit - simulations/reference-factory.yaml"
        }
        "operator" => {
            "kubectl apply -k iso-config/example/operator/\nrackplan operator --catalogue iso-config/example/catalogue --scenario simulations/reference-factory.yaml --kubeconfig rancher.yaml --harvester-kubeconfig harvester.yaml"
        }
        "portal" => {
            "rackplan portal --catalogue iso-config/example/catalogue --scenario simulations/reference-factory.yaml --kubeconfig rancher.yaml --harvester-kubeconfig harvester.yaml --listen 127.0.0.1:8080\nrackplan portal --catalogue iso-config/example/catalogue --scenario simulations/reference-factory.yaml --proxy-user-header X-Forwarded-User --proxy-groups-header X-Forwarded-Groups --impersonator-kubeconfig impersonator.yaml"
        }
        "status" => "rackplan status --site inventory/example --watch",
        "serve" => {
            "rackplan serve --site inventory/example --listen 10.10.0.5:8080 --artifacts /srv/harvester"
        }
        "boot" => {
            "rackplan boot --site inventory/example --node hv-c01\nrackplan boot --site inventory/example --node hv-c01 --yes"
        }
        "completions" => "rackplan completions bash > /etc/bash_completion.d/rackplan",
        "docs" => "rackplan docs --out docs\nrackplan docs --check",
        _ => "",
    }
}

/// The reference page of one command: its long help and an example.
pub(crate) fn command_page(cmd: &clap::Command, name: &str) -> String {
    let mut c = cmd
        .clone()
        .bin_name(format!("rackplan {name}"))
        .term_width(100);
    let help = c.render_long_help().to_string();
    let mut s = format!("# `rackplan {name}`\n\n```text\n{}\n```\n", help.trim_end());
    let ex = command_example(name);
    if !ex.is_empty() {
        let _ = write!(s, "\n## Example\n\n```sh\n{ex}\n```\n");
    }
    s
}
