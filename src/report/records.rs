//! Tables too wide for the terminal's box drawing. First without borders, columns two
//! spaces apart as kubectl prints them; where even that does not fit, one record per row,
//! each cell on a line of its own under its column's name as `kubectl describe` reads.
//! Neither passes the terminal's width (a single word longer than a line is the only thing
//! that can).

/// Rows as columns two spaces apart, each cell wrapped at its column's width; when a row
/// takes more than one line, rows are separated by a blank line.
pub(crate) fn borderless(header: &[String], rows: &[Vec<String>], widths: &[usize]) -> String {
    let cell_lines = |row: &[String]| -> Vec<Vec<String>> {
        widths
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                super::wrap::wrap_cell(row.get(i).map_or("", String::as_str), w)
                    .split('\n')
                    .map(str::to_string)
                    .collect()
            })
            .collect()
    };
    let body: Vec<Vec<Vec<String>>> = rows.iter().map(|r| cell_lines(r)).collect();
    let tall = body
        .iter()
        .any(|cells| cells.iter().any(|lines| lines.len() > 1));
    let mut out: Vec<String> = Vec::new();
    for (k, cells) in std::iter::once(cell_lines(header)).chain(body).enumerate() {
        if tall && k > 1 {
            out.push(String::new());
        }
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for j in 0..height {
            let mut line = String::new();
            for (i, lines) in cells.iter().enumerate() {
                let text = lines.get(j).map_or("", String::as_str);
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(text);
                line.push_str(&" ".repeat(widths[i].saturating_sub(text.chars().count())));
            }
            out.push(line.trim_end().to_string());
        }
    }
    out.join("\n")
}

/// Rows as records separated by a blank line; `width` is the terminal's.
pub(crate) fn records(header: &[String], rows: &[Vec<String>], width: usize) -> String {
    let label_width = header.iter().map(|h| h.chars().count()).max().unwrap_or(0);
    // Labels beside their values while that leaves half the line; above them otherwise.
    let beside = label_width + 2 <= width / 2;
    let value_width = if beside {
        width - label_width - 2
    } else {
        width.saturating_sub(2).max(1)
    };
    let mut out: Vec<String> = Vec::new();
    for (k, row) in rows.iter().enumerate() {
        if k > 0 {
            out.push(String::new());
        }
        for (i, name) in header.iter().enumerate() {
            let cell = row.get(i).map_or("", String::as_str);
            let wrapped = super::wrap::wrap_cell(cell, value_width);
            let mut lines = wrapped.split('\n');
            if beside {
                let pad = " ".repeat(label_width + 2);
                let first = lines.next().unwrap_or("");
                out.push(
                    format!("{name:<label_width$}  {first}")
                        .trim_end()
                        .to_string(),
                );
                out.extend(lines.map(|l| format!("{pad}{l}").trim_end().to_string()));
            } else {
                out.push(name.clone());
                out.extend(lines.map(|l| format!("  {l}").trim_end().to_string()));
            }
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borderless_columns_wrap_and_separate_tall_rows() {
        let header = vec!["scenario".to_string(), "slack cpu".to_string()];
        let rows = vec![
            vec!["rack r01".to_string(), "93.5 %".to_string()],
            vec![
                "node compute-04 (tightest node)".to_string(),
                "95.5 %".to_string(),
            ],
        ];
        let text = borderless(&header, &rows, &[15, 6]);
        assert_eq!(
            text,
            "scenario         slack\n\
             \x20                cpu\n\
             rack r01         93.5 %\n\
             \n\
             node compute-04  95.5 %\n\
             (tightest node)"
        );
    }

    #[test]
    fn each_row_is_a_record_within_the_width() {
        let header = vec!["node".to_string(), "how to fix".to_string()];
        let rows = vec![
            vec![
                "hv-001".to_string(),
                "cable the second storage port to the storage switch and run discover again"
                    .to_string(),
            ],
            vec!["hv-002".to_string(), String::new()],
        ];
        let text = records(&header, &rows, 40);
        assert_eq!(
            text,
            "node        hv-001\n\
             how to fix  cable the second storage\n\
             \x20           port to the storage switch\n\
             \x20           and run discover again\n\
             \n\
             node        hv-002\n\
             how to fix"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 40));
        // Too narrow for labels beside the values: above them.
        let narrow = records(&header, &rows, 20);
        assert!(narrow.starts_with("node\n  hv-001\nhow to fix\n  cable the second\n"));
        assert!(narrow.lines().all(|l| l.chars().count() <= 20), "{narrow}");
    }
}
