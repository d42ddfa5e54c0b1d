//! The API server's and etcd's own figures, from their `/metrics` pages as Prometheus text
//! (`kubectl get --raw /metrics > apiserver.metrics`, and etcd's metrics port, on RKE2
//! `curl 127.0.0.1:2381/metrics > etcd.metrics` on a management node) saved beside a dump:
//! the database size and quota, the latency of writes, the WAL fsync latency and the
//! object counts the API server keeps. Everything read is untrusted text: a line that
//! cannot be read is skipped, files are read up to a cap, and only the series named here
//! are kept.
//!
//! Quantiles follow Prometheus' `histogram_quantile`: linear inside the bucket that holds
//! the rank, and the highest finite bound when the rank falls in the `+Inf` bucket.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

/// Largest metrics file read (an API server's page is a few MB to a few tens).
const MAX_FILE: u64 = 64 * 1024 * 1024;
/// Most metrics files read from one dump folder.
const MAX_FILES: usize = 16;

/// One sample of the text format: a series (name and labels) and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Sample {
    /// The value of label `k`, or `""` when the series has none.
    pub fn label(&self, k: &str) -> &str {
        self.labels
            .iter()
            .find(|(n, _)| n == k)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// The samples of Prometheus text whose name `keep` accepts; comment lines and lines that
/// cannot be read are skipped.
pub fn parse(text: &str, keep: impl Fn(&str) -> bool) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| line(l.trim(), &keep))
        .collect()
}

fn line(l: &str, keep: &impl Fn(&str) -> bool) -> Option<Sample> {
    let name_end = l.find(|c: char| c == '{' || c.is_whitespace())?;
    let name = &l[..name_end];
    if name.is_empty() || !keep(name) {
        return None;
    }
    let mut rest = &l[name_end..];
    let mut labels = Vec::new();
    if let Some(r) = rest.strip_prefix('{') {
        let (ls, after) = label_set(r)?;
        labels = ls;
        rest = after;
    }
    let value = rest.split_whitespace().next()?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    Some(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// `a="x",b="y\"z"}` -> the labels and what follows the closing brace.
fn label_set(mut r: &str) -> Option<(Vec<(String, String)>, &str)> {
    let mut out = Vec::new();
    loop {
        r = r.trim_start_matches([',', ' ']);
        if let Some(after) = r.strip_prefix('}') {
            return Some((out, after));
        }
        let eq = r.find('=')?;
        let key = r[..eq].trim().to_string();
        r = r[eq + 1..].strip_prefix('"')?;
        let mut value = String::new();
        let mut chars = r.char_indices();
        let end = loop {
            let (i, c) = chars.next()?;
            match c {
                '"' => break i,
                '\\' => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                c => value.push(c),
            }
        };
        out.push((key, value));
        r = &r[end + 1..];
    }
}

/// A cumulative histogram: each bucket's upper bound with its count, in bound order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Histogram {
    pub buckets: Vec<(f64, f64)>,
}

impl Histogram {
    /// The `<name>_bucket` series that `pick` accepts, summed bound by bound; `None` when
    /// there is none.
    pub fn of(samples: &[Sample], name: &str, pick: impl Fn(&Sample) -> bool) -> Option<Histogram> {
        let bucket = format!("{name}_bucket");
        let mut by_le: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
        for s in samples.iter().filter(|s| s.name == bucket && pick(s)) {
            let le = match s.label("le") {
                "+Inf" => f64::INFINITY,
                v => match v.parse::<f64>() {
                    Ok(x) => x,
                    Err(_) => continue,
                },
            };
            let e = by_le.entry(le.to_bits()).or_insert((le, 0.0));
            e.1 += s.value;
        }
        let mut buckets: Vec<(f64, f64)> = by_le.into_values().collect();
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        (!buckets.is_empty()).then_some(Histogram { buckets })
    }

    /// Observations counted (the `+Inf` bucket).
    pub fn count(&self) -> f64 {
        self.buckets.last().map_or(0.0, |b| b.1)
    }

    /// What was observed since `earlier` (the same series read before).
    #[must_use]
    pub fn minus(&self, earlier: &Histogram) -> Histogram {
        Histogram {
            buckets: self
                .buckets
                .iter()
                .map(|&(le, n)| {
                    let before = earlier
                        .buckets
                        .iter()
                        .find(|b| b.0.to_bits() == le.to_bits())
                        .map_or(0.0, |b| b.1);
                    (le, (n - before).max(0.0))
                })
                .collect(),
        }
    }

    /// The `q` quantile, seconds (or whatever the histogram counts); `None` with no
    /// observation.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total <= 0.0 || !q.is_finite() {
            return None;
        }
        let rank = q.clamp(0.0, 1.0) * total;
        let mut lower = (0.0, 0.0);
        for &(le, n) in &self.buckets {
            if n >= rank {
                if !le.is_finite() {
                    return Some(lower.0);
                }
                let inside = n - lower.1;
                let frac = if inside > 0.0 {
                    (rank - lower.1) / inside
                } else {
                    1.0
                };
                return Some(lower.0 + (le - lower.0) * frac);
            }
            lower = (le, n);
        }
        Some(lower.0)
    }
}

/// What a dump's metrics say about its control plane.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct ControlPlaneMetrics {
    /// The files read.
    pub files: Vec<String>,
    /// etcd's database file (`etcd_mvcc_db_total_size_in_bytes`), the largest member's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_total_bytes: Option<f64>,
    /// Logically in use (`etcd_mvcc_db_total_size_in_use_in_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_in_use_bytes: Option<f64>,
    /// `etcd_server_quota_backend_bytes`: the quota etcd runs with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_bytes: Option<f64>,
    /// p99 of the API server's writes (`apiserver_request_duration_seconds`, verbs POST,
    /// PUT, PATCH and DELETE, since it started), seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_p99_s: Option<f64>,
    /// Writes that histogram counts.
    pub writes_counted: f64,
    /// p99 of etcd's WAL fsync (`etcd_disk_wal_fsync_duration_seconds`), seconds, the
    /// slowest member's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wal_fsync_p99_s: Option<f64>,
    /// Objects per resource as the API server counts them (`apiserver_storage_objects`,
    /// `etcd_object_counts` before Kubernetes 1.22).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub stored_objects: BTreeMap<String, f64>,
}

const KEPT: &[&str] = &[
    "apiserver_request_duration_seconds_bucket",
    "etcd_mvcc_db_total_size_in_bytes",
    "etcd_debugging_mvcc_db_total_size_in_bytes",
    "etcd_mvcc_db_total_size_in_use_in_bytes",
    "etcd_server_quota_backend_bytes",
    "etcd_disk_wal_fsync_duration_seconds_bucket",
    "apiserver_storage_objects",
    "etcd_object_counts",
];

const WRITES: [&str; 4] = ["POST", "PUT", "PATCH", "DELETE"];

/// The figures of one or more metrics pages (file name, text).
pub fn summarise(pages: &[(String, String)]) -> ControlPlaneMetrics {
    let mut m = ControlPlaneMetrics::default();
    let most = |slot: &mut Option<f64>, v: f64| {
        if v.is_finite() && v >= 0.0 {
            *slot = Some(slot.map_or(v, |s: f64| s.max(v)));
        }
    };
    let mut writes = Histogram::default();
    for (file, text) in pages {
        let samples = parse(text, |n| KEPT.contains(&n));
        if samples.is_empty() {
            continue;
        }
        m.files.push(file.clone());
        for s in &samples {
            match s.name.as_str() {
                "etcd_mvcc_db_total_size_in_bytes"
                | "etcd_debugging_mvcc_db_total_size_in_bytes" => {
                    most(&mut m.db_total_bytes, s.value);
                }
                "etcd_mvcc_db_total_size_in_use_in_bytes" => most(&mut m.db_in_use_bytes, s.value),
                "etcd_server_quota_backend_bytes" => most(&mut m.quota_bytes, s.value),
                "apiserver_storage_objects" | "etcd_object_counts" => {
                    let r = s.label("resource");
                    if !r.is_empty() && s.value.is_finite() && s.value >= 0.0 {
                        let e = m.stored_objects.entry(r.to_string()).or_insert(0.0);
                        *e = e.max(s.value);
                    }
                }
                _ => {}
            }
        }
        if let Some(h) = Histogram::of(&samples, "apiserver_request_duration_seconds", |s| {
            WRITES.contains(&s.label("verb"))
        }) {
            writes = add(&writes, &h);
        }
        if let Some(h) = Histogram::of(&samples, "etcd_disk_wal_fsync_duration_seconds", |_| true)
            && let Some(p) = h.quantile(0.99)
        {
            most(&mut m.wal_fsync_p99_s, p);
        }
    }
    m.writes_counted = writes.count();
    m.write_p99_s = writes.quantile(0.99);
    m
}

/// Two histograms of the same buckets added (the API servers of several files).
fn add(a: &Histogram, b: &Histogram) -> Histogram {
    if a.buckets.is_empty() {
        return b.clone();
    }
    Histogram {
        buckets: a
            .buckets
            .iter()
            .map(|&(le, n)| {
                let more = b
                    .buckets
                    .iter()
                    .find(|x| x.0.to_bits() == le.to_bits())
                    .map_or(0.0, |x| x.1);
                (le, n + more)
            })
            .collect(),
    }
}

/// Whether a file name is a saved metrics page.
fn is_metrics(name: &str) -> bool {
    Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("metrics") || e.eq_ignore_ascii_case("prom"))
}

/// The metrics pages at the top of a dump folder (`*.metrics`, `*.prom`), each read up to
/// the cap; what is skipped is named in `notes`. `None` when the folder holds none.
pub(crate) fn read_dir(dir: &Path, notes: &mut Vec<String>) -> Option<ControlPlaneMetrics> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| is_metrics(&n.to_string_lossy()))
                && std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
        })
        .collect();
    files.sort();
    if files.len() > MAX_FILES {
        notes.push(format!(
            "{}: more than {MAX_FILES} metrics files; the first {MAX_FILES} by name were read",
            dir.display()
        ));
        files.truncate(MAX_FILES);
    }
    let mut pages = Vec::new();
    for f in files {
        use std::io::Read as _;
        let shown = f.display().to_string();
        let Ok(file) = std::fs::File::open(&f) else {
            notes.push(format!("{shown}: cannot be opened; skipped"));
            continue;
        };
        let mut bytes = Vec::new();
        if file.take(MAX_FILE + 1).read_to_end(&mut bytes).is_err() {
            notes.push(format!("{shown}: cannot be read; skipped"));
            continue;
        }
        if bytes.len() as u64 > MAX_FILE {
            notes.push(format!(
                "{shown}: larger than {} MiB; skipped",
                MAX_FILE / 1024 / 1024
            ));
            continue;
        }
        match String::from_utf8(bytes) {
            Ok(text) => pages.push((shown, text)),
            Err(_) => notes.push(format!("{shown}: not UTF-8 text; skipped")),
        }
    }
    if pages.is_empty() {
        return None;
    }
    let m = summarise(&pages);
    if m.files.is_empty() {
        notes.push(format!(
            "{}: its metrics files hold none of the API server's or etcd's series rackplan reads",
            dir.display()
        ));
        return None;
    }
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"# HELP apiserver_request_duration_seconds [STABLE] Response latency
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{component="apiserver",resource="pods",verb="POST",le="0.05"} 90
apiserver_request_duration_seconds_bucket{component="apiserver",resource="pods",verb="POST",le="0.1"} 98
apiserver_request_duration_seconds_bucket{component="apiserver",resource="pods",verb="POST",le="1"} 100
apiserver_request_duration_seconds_bucket{component="apiserver",resource="pods",verb="POST",le="+Inf"} 100
apiserver_request_duration_seconds_bucket{component="apiserver",resource="pods",verb="GET",le="0.05"} 0
apiserver_request_duration_seconds_bucket{component="apiserver",resource="pods",verb="GET",le="0.1"} 0
apiserver_request_duration_seconds_bucket{component="apiserver",resource="pods",verb="GET",le="1"} 0
apiserver_request_duration_seconds_bucket{component="apiserver",resource="pods",verb="GET",le="+Inf"} 500
etcd_object_counts{resource="pods"} 1234
etcd_mvcc_db_total_size_in_bytes 3.039232e+06
etcd_server_quota_backend_bytes 8.589934592e+09
weird{a="x\"y",b="line\nnext"} 1 1700000000
not a sample line
"#;

    #[test]
    fn the_text_format_is_read_with_its_escapes_and_bad_lines_skipped() {
        let s = parse(PAGE, |n| n == "weird" || n == "etcd_object_counts");
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].label("resource"), "pods");
        assert_eq!(s[1].label("a"), "x\"y");
        assert_eq!(s[1].label("b"), "line\nnext");
        assert!((s[1].value - 1.0).abs() < f64::EPSILON);
    }

    #[test]
    fn quantiles_interpolate_inside_a_bucket_as_prometheus_does() {
        let s = parse(PAGE, |_| true);
        let h = Histogram::of(&s, "apiserver_request_duration_seconds", |x| {
            x.label("verb") == "POST"
        })
        .unwrap();
        assert!((h.count() - 100.0).abs() < 1e-9);
        // 99th of 100: the 99th observation, in the (0.1, 1] bucket holding 2.
        let p99 = h.quantile(0.99).unwrap();
        assert!((p99 - 0.55).abs() < 1e-9, "{p99}");
        // 50th: inside the first bucket, from 0.
        assert!((h.quantile(0.5).unwrap() - 0.05 * 50.0 / 90.0).abs() < 1e-9);
        // Every GET in +Inf: the highest finite bound.
        let g = Histogram::of(&s, "apiserver_request_duration_seconds", |x| {
            x.label("verb") == "GET"
        })
        .unwrap();
        assert!((g.quantile(0.99).unwrap() - 1.0).abs() < 1e-9);
        let none = h.minus(&h);
        assert_eq!(none.quantile(0.99), None);
    }

    #[test]
    fn a_page_is_summarised_into_the_control_plane_figures() {
        let m = summarise(&[("apiserver.metrics".into(), PAGE.into())]);
        assert_eq!(m.db_total_bytes, Some(3_039_232.0));
        assert_eq!(m.quota_bytes, Some(8_589_934_592.0));
        assert_eq!(m.stored_objects.get("pods"), Some(&1234.0));
        // Only the writes: the GETs in +Inf do not move the p99.
        assert!((m.write_p99_s.unwrap() - 0.55).abs() < 1e-9);
        assert!((m.writes_counted - 100.0).abs() < 1e-9);
        assert_eq!(m.wal_fsync_p99_s, None);
    }
}
