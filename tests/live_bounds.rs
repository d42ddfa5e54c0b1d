//! Every reader of a running fleet's dump is bounded: a zip bomb stops at once with an
//! error naming the cap, what is skipped is named (never a silent gap behind a later
//! "no Node"), and a FIFO, a device or a folder like `/` is refused before it is read.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::shared;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// `rackplan --output json simulate --from-cluster <dump>`, killed (and failed) after 60 s.
fn from_cluster(dump: &Path) -> Run {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .env("NO_COLOR", "1")
        .args(["--output", "json", "simulate", "--from-cluster"])
        .arg(dump)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..600 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if child.try_wait().unwrap().is_none() {
        child.kill().unwrap();
        let _ = child.wait();
        panic!("{} was still being read after 60 s", dump.display());
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: started.elapsed(),
    }
}

fn sample() -> PathBuf {
    shared().join("reference/harvester/support-bundle-sample")
}

/// 50 entries of 200 MiB of zeros each (10 GiB unpacked) in a zip of about 10 MB: the first
/// entry is deflated once and copied raw 49 times.
fn zip_bomb(dest: &Path) {
    let one = dest.with_extension("one.zip");
    {
        let mut z = zip::ZipWriter::new(std::fs::File::create(&one).unwrap());
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .compression_level(Some(9));
        z.start_file("bundle/yamls/cluster/v1/nodes.yaml", opts)
            .unwrap();
        let zeros = vec![0u8; 1024 * 1024];
        for _ in 0..200 {
            z.write_all(&zeros).unwrap();
        }
        z.finish().unwrap();
    }
    let mut src = zip::ZipArchive::new(std::fs::File::open(&one).unwrap()).unwrap();
    let mut z = zip::ZipWriter::new(std::fs::File::create(dest).unwrap());
    for i in 0..50 {
        let e = src.by_index_raw(0).unwrap();
        z.raw_copy_file_rename(e, format!("bundle/yamls/namespaced/ns{i}/v1/pods.yaml"))
            .unwrap();
    }
    z.finish().unwrap();
    let len = std::fs::metadata(dest).unwrap().len();
    assert!(len < 16 * 1024 * 1024, "{len} bytes");
}

#[test]
fn a_zip_bomb_stops_at_once_with_an_error_naming_the_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let bomb = tmp.path().join("bomb.zip");
    zip_bomb(&bomb);
    let r = from_cluster(&bomb);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let err = crate::support::flat(&r.stderr);
    assert!(err.contains("bomb.zip"), "{err}");
    assert!(
        err.contains("past the limit of 4 GiB for one archive"),
        "{err}"
    );
    assert!(r.took < Duration::from_secs(10), "took {:?}", r.took);
}

/// The sample bundle zipped, with `extra` entries added as `(name, symlink target)`.
fn bundle_with_links(dest: &Path, links: &[(&str, &str)]) {
    crate::support::zip_as_bundle(&sample(), "bundle", dest);
    let mut z = zip::ZipWriter::new_append(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(dest)
            .unwrap(),
    )
    .unwrap();
    for (name, target) in links {
        z.add_symlink(
            format!("bundle/{name}"),
            *target,
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
    }
    z.finish().unwrap();
}

#[test]
fn a_symlinked_entry_in_a_bundle_is_named_in_the_notes() {
    let tmp = tempfile::tempdir().unwrap();
    let z = tmp.path().join("bundle.zip");
    bundle_with_links(
        &z,
        &[(
            "yamls/namespaced/default/kubevirt.io/v1/virtualmachines-extra.yaml",
            "/etc/passwd",
        )],
    );
    let r = from_cluster(&z);
    assert!(r.code == 0 || r.code == 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("virtualmachines-extra.yaml: a symbolic link; not followed"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_bundle_whose_nodes_were_skipped_says_so_not_only_no_node() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dump");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("other.yaml"), "kind: ConfigMap\napiVersion: v1\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(sample().join("yamls"), dir.join("nodes.yaml")).unwrap();
    let r = from_cluster(&dir);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let err = crate::support::flat(&r.stderr);
    assert!(err.contains("no Node object was read"), "{err}");
    assert!(
        err.contains("nodes.yaml: a symbolic link; not followed"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_a_device_and_the_root_folder_are_refused_before_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("dump.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for (path, words) in [
        (fifo.as_path(), "not a regular file or a folder"),
        (Path::new("/dev/zero"), "not a regular file or a folder"),
        (Path::new("/"), "the root of the filesystem is not a dump"),
    ] {
        let r = from_cluster(path);
        assert_eq!(r.code, 2, "{}: {}\n{}", path.display(), r.stdout, r.stderr);
        let err = crate::support::flat(&r.stderr);
        assert!(err.contains(words), "{}: {err}", path.display());
        assert!(
            r.took < Duration::from_secs(10),
            "{}: {:?}",
            path.display(),
            r.took
        );
    }
}
