//! `render`: the files written, one row per folder (a node's folder names its node), so the
//! list fits a terminal of 80 columns however long the node ids are; `--output json` lists
//! every file with its kind and mode.

use super::grid::table;
use crate::render::RenderOutcome;

pub(crate) fn render_table(r: &RenderOutcome) -> String {
    // Folders in the order their first file was written; each file with its mode when it
    // holds secrets.
    let mut folders: Vec<(String, Vec<String>, Option<String>)> = Vec::new();
    for f in &r.files {
        let (dir, name) = f
            .path
            .rsplit_once('/')
            .map_or((String::new(), f.path.as_str()), |(d, n)| {
                (format!("{d}/"), n)
            });
        let name = if f.secret {
            format!("{name} (0600)")
        } else {
            name.to_string()
        };
        match folders.iter_mut().find(|(d, _, _)| *d == dir) {
            Some((_, names, _)) => names.push(name),
            None => folders.push((dir, vec![name], f.node.clone())),
        }
    }
    let mut t = table(&["folder", "node", "files"]);
    for (dir, names, node) in folders {
        t.add_row(vec![
            if dir.is_empty() { "./".into() } else { dir },
            node.unwrap_or_else(|| "-".into()),
            names.join(", "),
        ]);
    }
    let mut out = format!("{t}\n{} file(s) in {}\n", r.files.len(), r.out_dir);
    for p in &r.removed {
        out.push_str(&format!("removed {p} (no longer generated)\n"));
    }
    if !r.acknowledged.is_empty() {
        out.push_str(&format!(
            "rendered in spite of {} finding(s) acknowledged in nodes.yaml: SUMMARY.md lists them, as `rackplan check` does\n",
            r.acknowledged.len()
        ));
    }
    out
}
