//! `render`: the table of files written.

use super::grid::table;
use crate::render::RenderOutcome;

pub(crate) fn render_table(r: &RenderOutcome) -> String {
    let mut t = table(&["file", "kind", "node", "mode"]);
    for f in &r.files {
        t.add_row(vec![
            f.path.clone(),
            f.kind.to_string(),
            f.node.clone().unwrap_or_default(),
            if f.secret { "0600" } else { "0644" }.to_string(),
        ]);
    }
    let mut out = format!("{t}\n{} file(s) in {}\n", r.files.len(), r.out_dir);
    for p in &r.removed {
        out.push_str(&format!("removed {p} (no longer generated)\n"));
    }
    out
}
