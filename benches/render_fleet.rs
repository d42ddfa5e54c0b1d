//! What users run to install a big site: `rackplan render` of a generated site of 1,000
//! nodes (the example site's 3 management nodes and 997 compute nodes like its first
//! compute node, each with its own serial, BMC, disks and MACs, in racks of 40), planned
//! first with `rackplan plan`. The binary is timed whole, as a user runs it: one
//! SHA-512-crypt and the installer files per node, the manifests, staging and renames.
//!
//! Target (issue 25; 2 cores, release build): under 3 s for 1,000 nodes.
//!
//! Run: `cargo bench --bench render_fleet`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const NODES: usize = 1000;
const TARGET_S: f64 = 3.0;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The example's node blocks (`  - id: ...` to the next), in file order.
fn node_blocks(nodes_yaml: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    for line in nodes_yaml.lines() {
        if line.starts_with("  - id: ") {
            blocks.push(String::new());
        }
        if let Some(b) = blocks.last_mut() {
            b.push_str(line);
            b.push('\n');
        }
    }
    blocks
}

/// Compute node `i` made from the example's `template`: every identity its own.
fn compute_node(template: &str, i: usize) -> String {
    let mut out = String::new();
    let mut mac = 0usize;
    let mut disk = 0usize;
    for line in template.lines() {
        let indent = line.len() - line.trim_start().len();
        let pad = &line[..indent];
        let t = line.trim_start();
        let new = if t.starts_with("- id: ") && indent == 2 {
            format!("{pad}- id: GEN{i:05}")
        } else if t.starts_with("serial: ") && indent == 4 {
            format!("{pad}serial: GEN{i:05}")
        } else if t.starts_with("address: https://") {
            format!("{pad}address: https://10.21.{}.{}", i / 200, i % 200 + 10)
        } else if t.starts_with("path: /dev/disk/by-id/") {
            disk += 1;
            format!("{line}-{i}")
        } else if t.starts_with("serial: '") {
            format!("{pad}serial: 'G{i:05}D{disk}'")
        } else if t.starts_with("mac: ") {
            mac += 1;
            let n = i * 16 + mac;
            format!(
                "{pad}mac: 02:00:00:{:02x}:{:02x}:{:02x}",
                n >> 16,
                (n >> 8) & 0xff,
                n & 0xff
            )
        } else if t.starts_with("rack: ") || t.starts_with("zone: ") {
            let key = &t[..4];
            format!("{pad}{key}: r{:02}", i / 40 + 1)
        } else {
            line.to_string()
        };
        out.push_str(&new);
        out.push('\n');
    }
    out
}

/// The example site grown to `NODES` nodes in `dir`.
fn write_site(dir: &Path) {
    let example = repo().join("inventory/example");
    let site = std::fs::read_to_string(example.join("site.yaml")).expect("example site.yaml");
    let site = site
        .replace(
            "profiles_dir: ../../profiles",
            &format!("profiles_dir: {}", repo().join("profiles").display()),
        )
        .replace(
            "scenario: ../../simulations/reference-factory.yaml",
            &format!(
                "scenario: {}",
                repo().join("simulations/reference-factory.yaml").display()
            ),
        )
        .replace("cidr: 10.10.0.0/24", "cidr: 10.10.0.0/20")
        .replace("end: 10.10.0.99", "end: 10.10.15.250")
        .replace("cidr: 172.16.0.0/24", "cidr: 172.16.0.0/16");
    std::fs::write(dir.join("site.yaml"), site).expect("write site.yaml");
    std::fs::create_dir_all(dir.join("secrets")).expect("secrets");
    for f in std::fs::read_dir(example.join("secrets")).expect("example secrets") {
        let f = f.expect("entry").path();
        std::fs::copy(&f, dir.join("secrets").join(f.file_name().expect("name")))
            .expect("copy secret");
    }
    let nodes = std::fs::read_to_string(example.join("nodes.yaml")).expect("example nodes");
    let blocks = node_blocks(&nodes);
    let compute = blocks
        .iter()
        .find(|b| b.contains("threads: 128"))
        .expect("a compute node");
    let mut out = String::from("nodes:\n");
    for b in blocks.iter().take(3) {
        out.push_str(b);
    }
    for i in 0..NODES - 3 {
        out.push_str(&compute_node(compute, i));
    }
    std::fs::write(dir.join("nodes.yaml"), out).expect("write nodes.yaml");
}

fn rackplan(args: &[&str]) -> f64 {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(args)
        .output()
        .expect("rackplan runs");
    let secs = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "rackplan {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    secs
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).expect("site dir");
    write_site(&site);
    let site_s = site.to_str().expect("utf-8 path");
    let plan_s = rackplan(&["-q", "plan", "--site", site_s]);
    let mut runs = Vec::new();
    let mut files = 0;
    for k in 0..3 {
        let out = dir.path().join(format!("out{k}"));
        runs.push(rackplan(&[
            "-q",
            "render",
            "--site",
            site_s,
            "--out",
            out.to_str().expect("utf-8 path"),
        ]));
        files = walk(&out);
    }
    runs.sort_by(f64::total_cmp);
    let secs = runs[1];
    let mut line = String::new();
    let _ = write!(
        line,
        "render of {NODES} nodes: {secs:.2} s (median of 3; plan {plan_s:.2} s), {files} files; target under {TARGET_S} s: {}",
        if secs < TARGET_S { "met" } else { "missed" }
    );
    println!("{line}");
}

/// Files under `dir`.
fn walk(dir: &Path) -> usize {
    let mut n = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                todo.push(p);
            } else {
                n += 1;
            }
        }
    }
    n
}
