//! Bootstrap: `serve` (iPXE by MAC, one-time config tokens, traversal refused, webhooks),
//! `boot` per vendor through the replay BMC server, and the full loop render -> serve ->
//! boot (sushy-emulator's fake driver) -> webhook status.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::replay::{BmcSpec, Fleet};
use crate::support::sushy::{free_port, mockup};
use crate::support::{Site, id_of, json_of, rackplan_json};

/// A raw HTTP/1.1 exchange; the path is sent exactly as given.
pub(crate) fn http(port: u16, method: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    let text = String::from_utf8_lossy(&buf).into_owned();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (code, body)
}

/// POST a webhook with a `X-Rackplan-Webhook-Key` header (or none).
pub(crate) fn webhook(port: u16, path: &str, key: Option<&str>) -> u16 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let header = key.map_or(String::new(), |k| {
        format!("X-Rackplan-Webhook-Key: {k}\r\n")
    });
    write!(s, "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{header}Content-Length: 0\r\n\r\n").unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    String::from_utf8_lossy(&buf)
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// The webhook key rendered into a node's config.
pub(crate) fn key_of(site: &Site, hostname: &str) -> String {
    let inputs = rackplan::plan::load_inputs(&site.dir()).unwrap();
    rackplan::render::webhook_keys(&inputs).unwrap()[hostname].clone()
}

/// GET a JSON document, which must come with a 200.
pub(crate) fn get_json(port: u16, path: &str) -> Value {
    let (code, body) = http(port, "GET", path);
    assert_eq!(code, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
}

struct Serve {
    child: Child,
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Serve {
    fn start(site: &Site, artifacts: Option<&std::path::Path>) -> Serve {
        Serve::start_at(site, artifacts, "")
    }

    /// Serve with `--base-url http://127.0.0.1:<port><path>`.
    fn start_at(site: &Site, artifacts: Option<&std::path::Path>, path: &str) -> Serve {
        let port = free_port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rackplan"));
        cmd.args(["serve", "--site"]).arg(site.dir()).args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--base-url",
            &format!("http://127.0.0.1:{port}{path}"),
        ]);
        if let Some(a) = artifacts {
            cmd.arg("--artifacts").arg(a);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(first.contains(&format!("127.0.0.1:{port}")), "{first}");
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                l.lock().unwrap().push(line);
            }
        });
        Serve { child, port, log }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn mac_of(site: &Site, hostname: &str) -> String {
    let id = id_of(site, hostname);
    site.inventory()
        .nodes
        .into_iter()
        .find(|n| n.id == id)
        .unwrap()
        .nics[0]
        .mac
        .clone()
}

#[test]
fn serve_hands_each_node_its_own_config_once() {
    let site = Site::example();
    let art = tempfile::tempdir().unwrap();
    std::fs::write(
        art.path().join("harvester-v1.6.1-vmlinuz-amd64"),
        b"kernel bytes",
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", art.path().join("escape")).unwrap();
    let s = Serve::start(&site, Some(art.path()));
    let mac = mac_of(&site, "hv-c01");
    let (code, script) = http(s.port, "GET", &format!("/ipxe?mac={}", mac.to_uppercase()));
    assert_eq!(code, 200);
    assert!(script.starts_with("#!ipxe"), "{script}");
    let url = script
        .split_whitespace()
        .find_map(|w| w.strip_prefix("harvester.install.config_url="))
        .unwrap()
        .to_string();
    assert!(
        url.starts_with(&format!(
            "http://127.0.0.1:{}/nodes/hv-c01/config.yaml?token=",
            s.port
        )),
        "{url}"
    );
    let path = url.split_once(&s.port.to_string()).unwrap().1.to_string();
    let (code, cfg) = http(s.port, "GET", &path);
    assert_eq!(code, 200);
    let (parsed, _): (rackplan::render::installer::HarvesterConfig, _) =
        rackplan::files::yaml::parse(std::path::Path::new("config.yaml"), &cfg).unwrap();
    assert_eq!(parsed.os.unwrap().hostname.as_deref(), Some("hv-c01"));
    assert_eq!(http(s.port, "GET", &path).0, 403, "one time only");
    let token = path.rsplit('=').next().unwrap().to_string();
    assert_eq!(
        http(
            s.port,
            "GET",
            &format!("/nodes/hv-c02/config.yaml?token={token}")
        )
        .0,
        403,
        "not another node's"
    );
    assert_eq!(http(s.port, "GET", "/nodes/hv-c01/config.yaml").0, 403);
    // A second script for another node carries a different token that opens only its config.
    let (_, other) = http(
        s.port,
        "GET",
        &format!("/ipxe?mac={}", mac_of(&site, "hv-c02")),
    );
    let other_url = other
        .split_whitespace()
        .find_map(|w| w.strip_prefix("harvester.install.config_url="))
        .unwrap();
    assert!(other_url.contains("/nodes/hv-c02/") && !other_url.contains(&token));
    // Unknown MAC: a script that says so and stops.
    let (code, unknown) = http(s.port, "GET", "/ipxe?mac=02:00:00:00:00:99");
    assert_eq!(code, 200);
    assert!(
        unknown.contains("is not in the inventory") && unknown.contains("shell"),
        "{unknown}"
    );
    // Artefacts, and no way out of their folder.
    assert_eq!(
        http(s.port, "GET", "/harvester-v1.6.1-vmlinuz-amd64"),
        (200, "kernel bytes".to_string())
    );
    for bad in [
        "/../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/escape",
        "/x/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2fetc%2fpasswd",
    ] {
        let (code, body) = http(s.port, "GET", bad);
        assert!(code == 400 || code == 404, "{bad}: {code}");
        assert!(!body.contains("root:"), "{bad} leaked");
    }
    // Non-secret files are served; rendered secrets only through tokens.
    assert_eq!(
        http(s.port, "GET", "/manifests/day0/40-longhorn-settings.yaml").0,
        200
    );
    // Webhooks: only with the node's own key, which its config carries.
    let key = parsed_key(&cfg);
    assert_eq!(key, key_of(&site, "hv-c01"));
    assert_eq!(webhook(s.port, "/webhook/hv-c01/STARTED", None), 401);
    assert_eq!(
        webhook(s.port, "/webhook/hv-c01/STARTED", Some("0123")),
        401
    );
    assert_eq!(
        webhook(
            s.port,
            "/webhook/hv-c01/STARTED",
            Some(&key_of(&site, "hv-c02"))
        ),
        401,
        "another node's key"
    );
    assert_eq!(
        get_json(s.port, "/status")["nodes"]["hv-c01"]["state"],
        "waiting"
    );
    assert_eq!(webhook(s.port, "/webhook/hv-c01/STARTED", Some(&key)), 204);
    let v = get_json(s.port, "/status");
    assert_eq!(v["nodes"]["hv-c01"]["state"], "installing");
    assert_eq!(
        webhook(s.port, "/webhook/hv-c01/SUCCEEDED", Some(&key)),
        204
    );
    let v = get_json(s.port, "/status");
    assert_eq!(v["nodes"]["hv-c01"]["state"], "installed");
    assert_eq!(v["nodes"]["hv-c02"]["state"], "waiting");
    // The server logs after it answers: wait for the lines (bounded), not a fixed time.
    let id = id_of(&site, "hv-c01");
    let wanted = [
        format!("hv-c01 ({id})"),
        "refused (path traversal)".to_string(),
        "refused: no webhook key".to_string(),
    ];
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        let log = s.log.lock().unwrap().join("\n");
        if wanted.iter().all(|w| log.contains(w.as_str())) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let log = s.log.lock().unwrap().join("\n");
    assert!(log.contains(&format!("hv-c01 ({id})")), "{log}");
    assert!(!log.contains(&token), "tokens never reach the log");
    assert!(log.contains("refused (path traversal)"), "{log}");
    assert!(log.contains("refused: no webhook key"), "{log}");
    assert!(!log.contains(&key), "webhook keys never reach the log");
    assert!(
        log.contains("127.0.0.1:"),
        "the client address is logged: {log}"
    );
    // Installed: no new token, a script that boots the disk.
    let (code, again) = http(s.port, "GET", &format!("/ipxe?mac={mac}"));
    assert_eq!(code, 200);
    assert!(!again.contains("token="), "{again}");
    assert!(again.contains("exit"), "{again}");
}

fn parsed_key(cfg: &str) -> String {
    let (parsed, _): (rackplan::render::installer::HarvesterConfig, _) =
        rackplan::files::yaml::parse(std::path::Path::new("config.yaml"), cfg).unwrap();
    parsed.install.unwrap().webhooks.unwrap()[0]
        .headers
        .as_ref()
        .unwrap()["X-Rackplan-Webhook-Key"][0]
        .clone()
}

/// The banner names the address, the line to chain from iPXE, and every boot artefact
/// that would 404 (no --artifacts here).
#[test]
fn serve_banner_gives_the_chain_line_and_warns_of_missing_artefacts() {
    let site = Site::example();
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["serve", "--site"])
        .arg(site.dir())
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--base-url",
            &format!("http://127.0.0.1:{port}/pxe"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let mut banner = String::new();
    for _ in 0..8 {
        let mut l = String::new();
        r.read_line(&mut l).unwrap();
        banner.push_str(&l);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        banner.contains(&format!("listening on http://127.0.0.1:{port}")),
        "{banner}"
    );
    assert!(
        banner.contains(&format!(
            "chain http://127.0.0.1:{port}/pxe/ipxe?mac=${{net0/mac}}"
        )),
        "{banner}"
    );
    assert!(
        banner.contains("install state: ")
            && banner.contains("install-state.yaml (0 installed nodes restored"),
        "{banner}"
    );
    for a in ["vmlinuz-amd64", "initrd-amd64", "rootfs-amd64.squashfs"] {
        assert!(
            banner
                .lines()
                .any(|l| l.starts_with("warning:") && l.contains(a)),
            "{a}: {banner}"
        );
    }
}

#[test]
fn serve_answers_under_the_path_of_its_base_url() {
    let site = Site::example();
    let s = Serve::start_at(&site, None, "/harvester/v1.6.1");
    let base = format!("http://127.0.0.1:{}/harvester/v1.6.1", s.port);
    let mac = mac_of(&site, "hv-c01");
    // The URLs a node is handed are all under the base path, and resolve here. A request
    // that misses the base path is logged and answered with the path it would have.
    let (code, body) = http(s.port, "GET", &format!("/ipxe?mac={mac}"));
    assert_eq!(code, 404);
    assert!(body.contains("try /harvester/v1.6.1/ipxe"), "{body}");
    assert_eq!(http(s.port, "GET", "/status").0, 404);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !s
        .log
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains("/status") && l.contains("try /harvester/v1.6.1/status"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            s.log.lock().unwrap()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (code, script) = http(s.port, "GET", &format!("/harvester/v1.6.1/ipxe?mac={mac}"));
    assert_eq!(code, 200, "{script}");
    let url = script
        .split_whitespace()
        .find_map(|w| w.strip_prefix("harvester.install.config_url="))
        .unwrap();
    let path = url
        .strip_prefix(&format!("http://127.0.0.1:{}", s.port))
        .unwrap_or_else(|| panic!("{url} is not on {base}"));
    assert!(path.starts_with("/harvester/v1.6.1/nodes/hv-c01/config.yaml?token="));
    let (code, cfg) = http(s.port, "GET", path);
    assert_eq!(code, 200, "{cfg}");
    let (parsed, _): (rackplan::render::installer::HarvesterConfig, _) =
        rackplan::files::yaml::parse(std::path::Path::new("config.yaml"), &cfg).unwrap();
    let hook = parsed.install.unwrap().webhooks.unwrap()[0].url.clone();
    assert_eq!(hook, format!("{base}/webhook/hv-c01/STARTED"));
    let hook_path = hook
        .strip_prefix(&format!("http://127.0.0.1:{}", s.port))
        .unwrap();
    assert_eq!(webhook(s.port, hook_path, Some(&parsed_key(&cfg))), 204);
    let v = get_json(s.port, "/harvester/v1.6.1/status");
    assert_eq!(v["nodes"]["hv-c01"]["state"], "installing");
    // `rackplan status` reads the same, as a table and, polled, as JSON lines.
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["status", "--site"])
        .arg(site.dir())
        .args(["--url", &base])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("hv-c01"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        row.contains("installing") && row.contains("STARTED"),
        "{row}"
    );
    assert!(
        text.contains("0 installed, 1 installing, 14 waiting, 0 failed"),
        "{text}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["--output", "json", "status", "--site"])
        .arg(site.dir())
        .args([
            "--url",
            &base,
            "--watch",
            "--interval",
            "0.2",
            "--count",
            "2",
        ])
        .output()
        .unwrap();
    let polls: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(polls.len(), 2);
    assert_eq!(polls[1]["nodes"].as_array().unwrap().len(), 15);
    // Nothing listening: the error says what to check.
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["status", "--site"])
        .arg(site.dir())
        .args(["--url", &format!("http://127.0.0.1:{}", free_port())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = crate::support::flat(&String::from_utf8_lossy(&out.stderr));
    assert!(e.contains("is `rackplan serve` running there?"), "{e}");
    assert_eq!(
        http(
            s.port,
            "GET",
            "/harvester/v1.6.1/manifests/day0/40-longhorn-settings.yaml"
        )
        .0,
        200
    );
}

fn point_bmc(site: &Site, hostname: &str, url: &str) {
    let id = id_of(site, hostname);
    site.edit_inventory(|inv| {
        inv.nodes
            .iter_mut()
            .find(|n| n.id == id)
            .unwrap()
            .bmc
            .as_mut()
            .unwrap()
            .address = url.to_string();
    });
}

fn boot(site: &Site, args: &[&str]) -> (i32, Value) {
    let (code, v, _) = json_of(
        rackplan_json(&["boot", "--site"])
            .arg(site.dir())
            .args(args),
    );
    (code, v)
}

#[test]
fn boot_requests_per_vendor_through_the_replay_server() {
    let site = Site::example();
    std::fs::remove_file(site.file("bmcs.yaml")).unwrap();
    let mut supermicro = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00"));
    supermicro.patches.push((
        "/redfish/v1/Systems/System.Embedded.1".into(),
        "/Manufacturer".into(),
        serde_json::json!("Supermicro"),
    ));
    let fleet = Fleet::start(vec![
        BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00")),
        BmcSpec::new(&mockup("hpe-proliant-xl675d-gen10plus-ilo5-2.70")),
        BmcSpec::new(&mockup("lenovo-thinksystem-sr670v2-xcc")),
        supermicro,
    ]);
    let hosts = ["hv-c01", "hv-c02", "hv-c03", "hv-c04"];
    for (h, b) in hosts.iter().zip(&fleet.bmcs) {
        point_bmc(&site, h, &b.url());
    }
    let iso = "http://10.10.0.5/harvester/v1.6.1/harvester-v1.6.1-amd64.iso";
    // Dry run: nothing but GETs reach the BMCs.
    let mut args: Vec<&str> = hosts.iter().flat_map(|h| ["--node", *h]).collect();
    let (code, v) = boot(&site, &args);
    assert_eq!(code, 0, "{v:#}");
    crate::output_schemas::assert_valid("boot", &v);
    assert_eq!(v["dry_run"], true);
    for b in &fleet.bmcs {
        assert!(
            b.stats
                .log
                .lock()
                .unwrap()
                .iter()
                .all(|l| l.starts_with("GET ")),
            "dry run sent something"
        );
    }
    // The gate: not rendered yet, so nothing is booted and nothing but GETs is sent.
    args.extend(["--yes", "--restart-running", "--wait", "5"]);
    let (code, v) = boot(&site, &args);
    assert_eq!(code, 3, "{v:#}");
    crate::output_schemas::assert_valid("boot", &v);
    for n in v["nodes"].as_array().unwrap() {
        assert!(
            n["error"]
                .as_str()
                .unwrap()
                .contains("no rendered install config"),
            "{n}"
        );
    }
    for b in &fleet.bmcs {
        assert!(
            b.stats
                .log
                .lock()
                .unwrap()
                .iter()
                .all(|l| l.starts_with("GET ")),
            "the gate sent something"
        );
    }
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, v) = boot(&site, &args);
    assert_eq!(code, 0, "{v:#}");
    let writes = |i: usize| -> Vec<String> {
        fleet.bmcs[i]
            .stats
            .log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| !l.starts_with("GET "))
            .cloned()
            .collect()
    };
    let boot_patch = r#"{"Boot":{"BootSourceOverrideEnabled":"Once","BootSourceOverrideMode":"UEFI","BootSourceOverrideTarget":"Cd"}}"#;
    // (method, path, body): bodies compared as JSON values, key order aside.
    let norm = |l: &str| -> (String, String, Value) {
        let parts: Vec<&str> = l.splitn(3, ' ').collect();
        let body = parts.get(2).map_or(Value::Null, |b| {
            serde_json::from_str(b).unwrap_or(Value::String((*b).to_string()))
        });
        (parts[0].to_string(), parts[1].to_string(), body)
    };
    let image = format!(r#"{{"Image":"{iso}","Inserted":true,"WriteProtected":true}}"#);
    let expect = [
        vec![
            format!("POST /redfish/v1/Systems/System.Embedded.1/VirtualMedia/1/Actions/VirtualMedia.InsertMedia {image}"),
            format!("PATCH /redfish/v1/Systems/System.Embedded.1 {boot_patch}"),
            r#"POST /redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset {"ResetType":"ForceRestart"}"#.to_string(),
        ],
        vec![
            format!("POST /redfish/v1/Managers/1/VirtualMedia/2/Actions/VirtualMedia.InsertMedia/ {image}"),
            format!("PATCH /redfish/v1/Systems/1 {boot_patch}"),
            r#"POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset/ {"ResetType":"ForceRestart"}"#.to_string(),
        ],
        vec![
            format!("PATCH /redfish/v1/Systems/1/VirtualMedia/EXT1 {image}"),
            format!("PATCH /redfish/v1/Systems/1 {boot_patch}"),
            r#"POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset {"ResetType":"ForceRestart"}"#.to_string(),
        ],
        vec![
            format!(r#"POST /redfish/v1/Systems/System.Embedded.1/VirtualMedia/1/Actions/VirtualMedia.InsertMedia {{"Image":"{iso}"}}"#),
            format!("PATCH /redfish/v1/Systems/System.Embedded.1 {boot_patch}"),
            r#"POST /redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset {"ResetType":"ForceRestart"}"#.to_string(),
        ],
    ];
    for (i, want) in expect.iter().enumerate() {
        let got: Vec<(String, String, Value)> = writes(i).iter().map(|l| norm(l)).collect();
        let want: Vec<(String, String, Value)> = want.iter().map(|l| norm(l)).collect();
        assert_eq!(got, want, "{}", hosts[i]);
    }
}

#[test]
fn the_boot_gate_holds_until_forced_and_a_running_host_is_left_alone() {
    let site = Site::example();
    std::fs::remove_file(site.file("bmcs.yaml")).unwrap();
    let fleet = Fleet::start(vec![BmcSpec::new(&mockup(
        "dell-poweredge-r750-idrac9-6.00",
    ))]);
    point_bmc(&site, "hv-c01", &fleet.bmcs[0].url());
    let writes = || {
        fleet.bmcs[0]
            .stats
            .log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| !l.starts_with("GET "))
            .count()
    };
    // Not rendered: --force boots it anyway, and says so; the host is on, and without
    // --restart-running it is not restarted.
    let (code, v) = boot(
        &site,
        &["--node", "hv-c01", "--yes", "--force", "--wait", "5"],
    );
    assert_eq!(code, 3, "{v:#}");
    let n = &v["nodes"][0];
    assert!(
        n["forced_past"][0]
            .as_str()
            .unwrap()
            .contains("no rendered install config"),
        "{n}"
    );
    assert!(
        n["error"].as_str().unwrap().contains("--restart-running"),
        "{n}"
    );
    assert_eq!(writes(), 0, "a running host was left alone");
    let (code, v) = boot(
        &site,
        &[
            "--node",
            "hv-c01",
            "--yes",
            "--force",
            "--restart-running",
            "--wait",
            "5",
        ],
    );
    assert_eq!(code, 0, "{v:#}");
    assert!(writes() >= 3);
}

#[test]
fn a_failing_bmc_touches_no_other_node() {
    let site = Site::example();
    std::fs::remove_file(site.file("bmcs.yaml")).unwrap();
    let mut broken = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00"));
    broken.fault = crate::support::replay::Fault::Status(500);
    broken.fault_path = Some("/Systems/System.Embedded.1/Actions".into());
    let fleet = Fleet::start(vec![
        broken,
        BmcSpec::new(&mockup("lenovo-thinksystem-sr670v2-xcc")),
    ]);
    point_bmc(&site, "hv-c01", &fleet.bmcs[0].url());
    point_bmc(&site, "hv-c02", &fleet.bmcs[1].url());
    assert_eq!(site.run(&["render", "--site", "{site}"]).code, 0);
    let (code, v) = boot(
        &site,
        &[
            "--node",
            "hv-c01",
            "--node",
            "hv-c02",
            "--yes",
            "--restart-running",
            "--wait",
            "5",
        ],
    );
    assert_eq!(code, 3);
    let nodes = v["nodes"].as_array().unwrap();
    let ok: Vec<&Value> = nodes.iter().filter(|n| n["ok"] == true).collect();
    assert_eq!(ok.len(), 1);
    assert_eq!(ok[0]["node"], "hv-c02");
}

#[test]
fn full_loop_render_serve_boot_webhooks() {
    let emu_port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let uuid = "27946b59-9e44-4fa7-8e91-f3527a1ef094";
    std::fs::create_dir_all(dir.path().join("state")).unwrap();
    let conf = dir.path().join("emulator.conf");
    std::fs::write(
        &conf,
        format!(
            "SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'\nSUSHY_EMULATOR_LISTEN_PORT = {emu_port}\nSUSHY_EMULATOR_FAKE_DRIVER = True\n\
             SUSHY_EMULATOR_STATE_DIR = '{}'\nSUSHY_EMULATOR_FAKE_SYSTEMS = [{{'uuid': '{uuid}', 'name': 'node-1', 'power_state': 'Off', 'external_notifier': False, 'nics': [{{'mac': '00:5c:52:31:3a:9c', 'ip': '127.0.0.10'}}]}}]\n",
            dir.path().join("state").display()
        ),
    )
    .unwrap();
    let emulator = crate::support::sushy::sushy_static().with_file_name("sushy-emulator");
    struct Emu(Child);
    impl Drop for Emu {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _emu = Emu(Command::new(emulator)
        .arg("--config")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap());
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", emu_port)).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let site = Site::example();
    std::fs::remove_file(site.file("bmcs.yaml")).unwrap();
    point_bmc(&site, "hv-m01", &format!("http://127.0.0.1:{emu_port}"));
    let art = tempfile::tempdir().unwrap();
    std::fs::write(art.path().join("harvester-test.iso"), vec![0u8; 64 * 1024]).unwrap();
    let s = Serve::start(&site, Some(art.path()));
    let iso = format!("http://127.0.0.1:{}/harvester-test.iso", s.port);
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, v) = boot(
        &site,
        &["--node", "hv-m01", "--yes", "--iso", &iso, "--wait", "40"],
    );
    {
        assert_eq!(code, 0, "{v:#}");
        let sys = get_json(emu_port, &format!("/redfish/v1/Systems/{uuid}"));
        assert_eq!(sys["PowerState"], "On");
        assert_eq!(sys["Boot"]["BootSourceOverrideTarget"], "Cd");
        let cd = get_json(
            emu_port,
            &format!("/redfish/v1/Systems/{uuid}/VirtualMedia/Cd"),
        );
        assert_eq!(cd["Inserted"], true, "{cd:#}");
        assert_eq!(cd["Image"], iso);
        assert!(
            s.log
                .lock()
                .unwrap()
                .iter()
                .any(|l| l.contains("GET /harvester-test.iso -> 200")),
            "the BMC fetched the ISO from serve"
        );
        // The installer's webhooks, as it would send them, show up in the status.
        let key = key_of(&site, "hv-m01");
        assert_eq!(webhook(s.port, "/webhook/hv-m01/STARTED", Some(&key)), 204);
        assert_eq!(
            webhook(s.port, "/webhook/hv-m01/SUCCEEDED", Some(&key)),
            204
        );
        let st = get_json(s.port, "/status");
        assert_eq!(st["nodes"]["hv-m01"]["state"], "installed");
        // Eject and restore.
        let (code, v) = boot(&site, &["--node", "hv-m01", "--yes", "--eject"]);
        assert_eq!(code, 0, "{v:#}");
        let cd = get_json(
            emu_port,
            &format!("/redfish/v1/Systems/{uuid}/VirtualMedia/Cd"),
        );
        assert_eq!(cd["Inserted"], false, "{cd:#}");
    }
}

#[test]
fn serve_listens_where_the_site_says() {
    let site = Site::example();
    let port = free_port();
    let text = site.read("site.yaml");
    site.write(
        "site.yaml",
        &format!("{text}\nserve:\n  listen: \"127.0.0.1:{port}\"\n"),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["serve", "--site"])
        .arg(site.dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // Routes live under the path of harvester.pxe_base_url, where nodes are sent.
    let up = http(port, "GET", "/harvester/v1.6.1/status").0;
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        first.contains(&format!("http://127.0.0.1:{port}")),
        "{first}"
    );
    assert_eq!(up, 200);
}

/// `boot --bios`: the attribute `check` names is planned as one PATCH of the Bios
/// settings resource with the apply time the BMC offers, nothing but GETs without `--yes`,
/// then written and read back as pending; a read-only attribute is refused, never sent.
/// The Dell R750 (iDRAC 7.10) capture through the replay BMC, with virtualization off.
#[test]
fn boot_bios_writes_the_attribute_check_names_and_reads_it_back() {
    let site = Site::example();
    std::fs::remove_file(site.file("bmcs.yaml")).unwrap();
    let mut dell = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-7.10-bluefield3"));
    dell.patches.push((
        "/redfish/v1/Systems/System.Embedded.1/Bios".into(),
        "/Attributes/ProcVirtualization".into(),
        serde_json::json!("Disabled"),
    ));
    let fleet = Fleet::start(vec![dell]);
    point_bmc(&site, "hv-c01", &fleet.bmcs[0].url());
    let id = id_of(&site, "hv-c01");
    // What discovery recorded: virtualization off (ProcVirtualization, Enabled turns it on),
    // and an older record that offers a value for HPE's read-only SecureBootStatus.
    site.edit_inventory(|inv| {
        let mut v = serde_json::to_value(&*inv).unwrap();
        for n in v["nodes"].as_array_mut().unwrap() {
            if n["id"] == id.as_str() {
                n["bios"] = serde_json::json!({
                    "registry_read": true,
                    "virtualization": {"state": "off", "attribute": "ProcVirtualization", "value": "Disabled", "set_to": "Enabled"},
                    "boot_mode": {"state": "uefi", "attribute": "BootMode", "value": "Uefi", "set_to": "Uefi"},
                    "secure_boot": {"state": "off", "attribute": "SecureBootStatus", "value": "Disabled", "set_to": "Enabled"}
                });
            }
        }
        *inv = serde_json::from_value(v).unwrap();
    });
    let compute = site.tmp.path().join("profiles/compute.yaml");
    let text = std::fs::read_to_string(&compute).unwrap();
    std::fs::write(&compute, format!("{text}bios: {{secure_boot: true}}\n")).unwrap();

    let (code, v) = boot(&site, &["--bios", "--node", "hv-c01"]);
    assert_eq!(code, 0, "{v:#}");
    crate::output_schemas::assert_valid("boot", &v);
    let plan = &v["nodes"][0]["plan"];
    assert_eq!(plan["steps"].as_array().unwrap().len(), 1, "{v:#}");
    let step = &plan["steps"][0];
    assert_eq!(step["method"], "PATCH");
    assert_eq!(
        step["path"],
        "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"
    );
    assert_eq!(
        step["body"],
        serde_json::json!({"Attributes": {"ProcVirtualization": "Enabled"}, "@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}})
    );
    let notes: Vec<&str> = plan["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("refused: SecureBootStatus")),
        "{notes:?}"
    );
    assert!(
        notes.contains(&"ProcVirtualization (virtualization): Disabled -> Enabled"),
        "{notes:?}"
    );
    let log = || fleet.bmcs[0].stats.log.lock().unwrap().clone();
    assert!(
        log()
            .iter()
            .all(|l| l.starts_with("GET ") || l.starts_with("POST ") || l.starts_with("DELETE ")),
        "{:?}",
        log()
    );

    let (code, v) = boot(&site, &["--bios", "--node", "hv-c01", "--yes"]);
    assert_eq!(code, 0, "{v:#}");
    let patches: Vec<String> = log()
        .into_iter()
        .filter(|l| l.starts_with("PATCH "))
        .collect();
    assert_eq!(patches.len(), 1, "{patches:?}");
    assert!(
        !patches[0].contains("SecureBoot"),
        "a read-only attribute is never sent"
    );
    let done: Vec<&str> = v["nodes"][0]["done"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(
        done.contains(&"ProcVirtualization: pending \"Enabled\" (current \"Disabled\"), applied at the next reset"),
        "{done:?}"
    );
}
