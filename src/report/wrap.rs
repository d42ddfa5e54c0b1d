//! Words that stay whole when text wraps: a number keeps its unit (`93.5 %`), a cell wraps
//! only between words. Shared by the boxed grid, its narrow layouts and prose.

/// The unbreakable pieces of a line: words, with a number and the unit after it (`93.5 %`,
/// `512 GiB`, `0.54 h`) kept together.
pub(super) fn tokens(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in line.split_whitespace() {
        let unit = w.chars().count() <= 5
            && !w.chars().any(|c| c.is_ascii_digit())
            && (w.chars().all(|c| !c.is_alphanumeric())
                || w.chars().all(|c| c.is_alphabetic() || c == '/'));
        let after_number = out
            .last()
            .is_some_and(|p| p.chars().last().is_some_and(|c| c.is_ascii_digit()));
        if unit && after_number && w != "x" {
            let last = out.last_mut().expect("checked");
            last.push(' ');
            last.push_str(w);
        } else {
            out.push(w.to_string());
        }
    }
    out
}

/// Greedy word wrap of one cell to `width` (a word longer than that stays whole).
pub(super) fn wrap_cell(text: &str, width: usize) -> String {
    let mut lines = Vec::new();
    for para in text.split('\n') {
        let mut cur = String::new();
        for w in tokens(para) {
            let w = w.as_str();
            if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
                lines.push(std::mem::take(&mut cur));
            }
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(w);
        }
        lines.push(cur);
    }
    lines.join("\n")
}
