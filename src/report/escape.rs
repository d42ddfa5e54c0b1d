//! Escaping by output kind. Names come from BMCs, hosts, dumps and status servers, so
//! every renderer passes text through the one function of its sink:
//!
//! - [`html`]: text and attribute values in HTML;
//! - [`svg`]: the same for SVG, which is XML, where control characters are not allowed at all;
//! - [`markdown`]: inline Markdown (paragraphs, headings, table cells): raw HTML, comments,
//!   links and images cannot form, a cell cannot be split;
//! - [`terminal`]: text for a terminal: control characters, escape sequences and
//!   bidirectional overrides are shown as visible marks, never acted on.

/// A control character, DEL, a C1 control or a bidirectional override, as a visible mark:
/// C0 controls as their Unicode control pictures (`␛` for ESC), anything else as `‹U+XXXX›`.
fn visible(c: char, out: &mut String) {
    let u = u32::from(c);
    if u < 0x20 {
        out.push(char::from_u32(0x2400 + u).unwrap_or('?'));
    } else if u == 0x7f {
        out.push('␡');
    } else {
        out.push_str(&format!("‹U+{u:04X}›"));
    }
}

/// Characters a terminal or a reader could be fooled by.
fn is_hostile(c: char) -> bool {
    let u = u32::from(c);
    (c.is_control() && c != '\n' && c != '\t')
        || (0x202a..=0x202e).contains(&u)
        || (0x2066..=0x2069).contains(&u)
        || u == 0x200e
        || u == 0x200f
        || u == 0x061c
}

/// Text for a terminal: newlines and tabs kept; every other control character (ESC, CSI,
/// BEL, carriage return, backspace…) and every bidirectional override shown visibly.
pub(crate) fn terminal(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_hostile) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_hostile(c) {
            visible(c, &mut out);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Like [`terminal`], but colour (SGR) sequences, `ESC [ digits ; m`, pass: for stderr when
/// rackplan itself colours its diagnostics. Every other sequence is shown visibly.
pub(crate) fn terminal_styled(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_hostile) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}' {
            let body = &rest[1..];
            if let Some(tail) = body.strip_prefix('[') {
                let n = tail
                    .find(|ch: char| !(ch.is_ascii_digit() || ch == ';'))
                    .unwrap_or(tail.len());
                if tail[n..].starts_with('m') {
                    out.push_str(&rest[..n + 3]);
                    rest = &rest[n + 3..];
                    continue;
                }
            }
        }
        if is_hostile(c) {
            visible(c, &mut out);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// Text or an attribute value in HTML.
pub(crate) fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if is_hostile(c) => visible(c, &mut out),
            c => out.push(c),
        }
    }
    out
}

/// Text or an attribute value in SVG (XML 1.0 forbids most control characters, even
/// escaped, so they are shown as marks as in HTML).
pub(crate) fn svg(s: &str) -> String {
    html(s)
}

/// Inline Markdown (a paragraph, a heading or a table cell). `<`, `>` and `&` become
/// entities, so no raw HTML, comment or autolink can form; `[`, `]` and `\` are escaped, so
/// no link or image can; `|` is escaped and a newline becomes a space, so a table cell stays
/// one cell and a paragraph one paragraph. Backtick code marks are kept: what they enclose
/// renders literally.
pub(crate) fn markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' => out.push_str("\\\\"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            c if is_hostile(c) => visible(c, &mut out),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &[&str] = &[
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "[click](javascript:alert(1))",
        "![x](javascript:alert(1))",
        "<!-- unclosed",
        "<javascript:alert(1)>",
        "a|b",
        "line\nbreak",
        "\u{1b}]0;owned\u{7}\u{1b}[2J",
        "\u{9b}31m",
        "abc\u{202e}gpj.exe",
        "\"' onmouseover=x",
    ];

    #[test]
    fn html_and_svg_never_carry_markup_or_controls() {
        for h in HOSTILE {
            for e in [html(h), svg(h)] {
                assert!(
                    !e.contains('<') && !e.contains('>') && !e.contains('"'),
                    "{e}"
                );
                assert!(!e.contains('\''), "{e}");
                assert!(!e.chars().any(|c| c.is_control() && c != '\n'), "{e:?}");
            }
        }
        assert_eq!(html("a & b"), "a &amp; b");
    }

    #[test]
    fn markdown_cannot_form_html_links_or_new_cells() {
        for h in HOSTILE {
            let e = markdown(h);
            assert!(!e.contains('<') && !e.contains('>'), "{e}");
            assert!(!e.contains('\n'), "{e:?}");
            // Every bracket and bar is escaped: no link, image or extra cell.
            let b = e.as_bytes();
            for (i, &c) in b.iter().enumerate() {
                if matches!(c, b'[' | b']' | b'|') {
                    assert!(i > 0 && b[i - 1] == b'\\', "unescaped {} in {e}", c as char);
                }
            }
            assert!(!e.chars().any(char::is_control), "{e:?}");
        }
        assert_eq!(markdown("node-01 `code`"), "node-01 `code`");
    }

    #[test]
    fn a_terminal_sees_marks_not_sequences() {
        assert_eq!(terminal("plain\ttext\n"), "plain\ttext\n");
        let t = terminal("\u{1b}]0;owned\u{7}\u{1b}[2Jx\rY\u{8}");
        assert!(!t.chars().any(char::is_control), "{t:?}");
        assert_eq!(t, "␛]0;owned␇␛[2Jx␍Y␈");
        assert_eq!(terminal("\u{9b}31m"), "‹U+009B›31m");
        assert_eq!(terminal("abc\u{202e}gpj"), "abc‹U+202E›gpj");
    }

    #[test]
    fn styled_stderr_keeps_colour_and_nothing_else() {
        let red = "\u{1b}[31merror\u{1b}[0m";
        assert_eq!(terminal_styled(red), red);
        assert_eq!(
            terminal_styled("\u{1b}[31mx\u{1b}[2J\u{1b}]0;t\u{7}"),
            "\u{1b}[31mx␛[2J␛]0;t␇"
        );
        assert_eq!(terminal_styled("\u{1b}["), "␛[");
    }
}
