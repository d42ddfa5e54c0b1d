//! Test harness: a copy of the example site in a temporary directory, the real binary run
//! against it, and helpers to edit the site's files.

use std::path::{Path, PathBuf};
use std::process::Command;

use rackplan::inventory::{Inventory, store};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared reference data, beside the checkout (or where RACKPLAN_SHARED points).
pub fn shared() -> PathBuf {
    std::env::var_os("RACKPLAN_SHARED").map_or_else(|| repo().join("../shared"), PathBuf::from)
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// A scratch copy of the example site: `<tmp>/inventory/example`, `<tmp>/profiles` and
/// `<tmp>/simulations`.
pub struct Site {
    pub tmp: tempfile::TempDir,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Site {
    pub fn example() -> Site {
        let tmp = tempfile::tempdir().unwrap();
        copy_dir(
            &repo().join("inventory/example"),
            &tmp.path().join("inventory/example"),
        );
        copy_dir(&repo().join("profiles"), &tmp.path().join("profiles"));
        // The catalogue names a scenario beside the inventory.
        copy_dir(&repo().join("simulations"), &tmp.path().join("simulations"));
        Site { tmp }
    }

    pub fn dir(&self) -> PathBuf {
        self.tmp.path().join("inventory/example")
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir().join(name)
    }

    pub fn out(&self) -> PathBuf {
        self.tmp.path().join("iso-config/example")
    }

    /// Run `rackplan <args> --site <dir>`; `{site}` in args is replaced too.
    pub fn run(&self, args: &[&str]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rackplan"));
        cmd.current_dir(self.tmp.path()).env("NO_COLOR", "1");
        for a in args {
            cmd.arg(a.replace("{site}", &self.dir().display().to_string()));
        }
        let out = cmd.output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr)
                .replace(&self.tmp.path().display().to_string(), "<tmp>"),
        }
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap()
    }

    pub fn write(&self, name: &str, text: &str) {
        std::fs::write(self.file(name), text).unwrap();
    }

    /// Replace exactly one occurrence of `from` in a site file.
    pub fn replace(&self, name: &str, from: &str, to: &str) {
        let text = self.read(name);
        assert_eq!(
            text.matches(from).count(),
            1,
            "`{from}` must occur once in {name}"
        );
        self.write(name, &text.replacen(from, to, 1));
    }

    pub fn inventory(&self) -> Inventory {
        store::load(&self.file("nodes.yaml")).unwrap().0
    }

    pub fn edit_inventory(&self, f: impl FnOnce(&mut Inventory)) {
        let mut inv = self.inventory();
        f(&mut inv);
        store::save(&self.file("nodes.yaml"), &inv).unwrap();
    }
}

/// `rackplan --output json <args>`, for more arguments to be added before [`json_of`].
pub fn rackplan_json(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rackplan"));
    cmd.args(["--output", "json"]).args(args);
    cmd
}

/// Run a command that prints JSON: its exit code, the parsed stdout and its stderr.
/// Stdout that is not JSON fails the test, showing both streams.
pub fn json_of(cmd: &mut Command) -> (i32, serde_json::Value, String) {
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (out.status.code().unwrap(), v, stderr)
}

/// Ids of the example's nodes by hostname, from the committed lock.
pub fn id_of(site: &Site, hostname: &str) -> String {
    let (lock, _) = rackplan::plan::Lock::load(&site.file("allocations.yaml")).unwrap();
    lock.nodes
        .iter()
        .find(|a| a.hostname == hostname)
        .unwrap()
        .id
        .clone()
}

/// Diagnostics wrap long lines behind `│`; join them back for substring checks.
pub fn flat(s: &str) -> String {
    let mut out = String::new();
    for line in s.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("│ ") {
            out.push(' ');
            out.push_str(rest.trim());
        } else {
            out.push('\n');
            out.push_str(line);
        }
    }
    out
}

pub mod devtools;
pub mod kube;
pub mod netns;
pub mod replay;
pub mod sshd;
pub mod sushy;

/// Zip a folder as Harvester's UI delivers a support bundle: one top folder (`top`)
/// holding the folder's files, written to `dest`. Returns how many files went in.
pub fn zip_as_bundle(root: &std::path::Path, top: &str, dest: &std::path::Path) -> usize {
    use std::io::Write as _;
    let mut z = zip::ZipWriter::new(std::fs::File::create(dest).unwrap());
    let opts = zip::write::SimpleFileOptions::default();
    let mut stack = vec![root.to_path_buf()];
    let mut n = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                z.start_file(format!("{top}/{rel}"), opts).unwrap();
                z.write_all(&std::fs::read(&p).unwrap()).unwrap();
                n += 1;
            }
        }
    }
    z.finish().unwrap();
    n
}

/// `rackplan <args>` as a person sees it (no colour, 200 columns): exit code, stdout, stderr.
pub fn plain(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .env("NO_COLOR", "1")
        .env("COLUMNS", "200")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
