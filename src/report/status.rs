//! `status`: the install state of every node as a table, with counts.

use crate::bootstrap::status::Status;

pub(crate) fn text(s: &Status) -> String {
    let mut t = super::table(&["hostname", "node", "state", "last event", "at"]);
    for n in &s.nodes {
        t.add_row(vec![
            n.hostname.clone(),
            n.node.clone(),
            n.state.clone(),
            n.last_event.clone().unwrap_or_else(|| "-".into()),
            n.at.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    let from = match (&s.url, &s.file) {
        (Some(url), _) => format!("at {url}"),
        (None, Some(file)) => format!("as recorded in {file}"),
        (None, None) => String::new(),
    };
    let mut out = format!(
        "site {} {from}\n{t}\n{} installed, {} installing, {} waiting, {} failed\n",
        s.site,
        s.count("installed"),
        s.count("installing"),
        s.count("waiting"),
        s.count("failed")
    );
    for n in &s.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::status::NodeState;

    fn node(h: &str, state: &str, last: Option<(&str, &str)>) -> NodeState {
        NodeState {
            hostname: h.into(),
            node: format!("SN-{h}"),
            state: state.into(),
            last_event: last.map(|l| l.0.into()),
            at: last.map(|l| l.1.into()),
        }
    }

    #[test]
    fn the_table_from_a_file_and_from_a_server() {
        crate::report::set_plain();
        let mut s = Status {
            url: None,
            file: Some("lab/install-state.yaml".into()),
            site: "lab".into(),
            nodes: vec![
                node(
                    "hv-c01",
                    "installed",
                    Some(("SUCCEEDED", "2025-06-01T12:20:00Z")),
                ),
                node(
                    "hv-c02",
                    "waiting",
                    Some(("TOKEN_ISSUED", "2025-06-01T12:01:00Z")),
                ),
                node("hv-c03", "waiting", None),
            ],
            notes: Vec::new(),
        };
        insta::assert_snapshot!("from_file", text(&s));
        s.url = Some("http://10.0.0.5/pxe".into());
        s.file = None;
        s.nodes.truncate(1);
        s.notes
            .push("no install recorded yet: lab/install-state.yaml does not exist".into());
        insta::assert_snapshot!("from_server", text(&s));
    }
}
