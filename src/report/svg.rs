//! Small SVG charts, written by hand (no font or image libraries needed): round tick values
//! from a nice-numbers routine, whole-number axes where the quantity is whole, the answer
//! marked with a labelled vertical line, reference lines drawn only when the data reaches
//! them, and a log axis for probabilities with each point's interval.

use super::escape::svg as esc;
use std::fmt::Write as _;

/// How a series is drawn.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Points joined by a line: the x values are a sequence (counts, limits, months).
    Line,
    /// Points with their intervals and no line: the x values are separate cases.
    Points,
}

pub(crate) struct Series {
    pub(crate) name: String,
    pub(crate) points: Vec<(f64, f64)>,
    pub(crate) style: Style,
    /// Per point: (low, high) of its interval.
    pub(crate) intervals: Vec<(f64, f64)>,
    /// Per point: true when the value is an upper bound only (drawn as an open marker).
    pub(crate) upper_bound: Vec<bool>,
}

impl Series {
    pub(crate) fn line(name: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.to_string(),
            points,
            style: Style::Line,
            intervals: Vec::new(),
            upper_bound: Vec::new(),
        }
    }
}

pub(crate) struct Chart<'a> {
    pub(crate) title: &'a str,
    pub(crate) x_label: &'a str,
    pub(crate) y_label: &'a str,
    pub(crate) series: Vec<Series>,
    pub(crate) log_y: bool,
    /// Whole-number axes: ticks only at integers.
    pub(crate) x_integer: bool,
    pub(crate) y_integer: bool,
    /// Names for integer x values (months); ticks at those values only.
    pub(crate) x_names: Vec<(f64, String)>,
    /// Horizontal reference lines (value, label), drawn only when within the data's range.
    pub(crate) rules: Vec<(f64, String)>,
    /// Horizontal lines always drawn, the range widened to hold them (a zero line).
    pub(crate) fixed_rules: Vec<(f64, String)>,
    /// Vertical lines marking the answer (x, label).
    pub(crate) markers: Vec<(f64, String)>,
    /// Start the y axis at zero (linear axes), or fit it to the data.
    pub(crate) y_from_zero: bool,
    /// A line of text under the title (what is not plotted and why).
    pub(crate) note: Option<String>,
    /// Words under the note, wrapped (the rule behind a marked answer).
    pub(crate) caption: Option<String>,
}

impl<'a> Chart<'a> {
    pub(crate) fn new(title: &'a str, x_label: &'a str, y_label: &'a str) -> Chart<'a> {
        Chart {
            title,
            x_label,
            y_label,
            series: Vec::new(),
            log_y: false,
            x_integer: false,
            y_integer: false,
            x_names: Vec::new(),
            rules: Vec::new(),
            fixed_rules: Vec::new(),
            markers: Vec::new(),
            y_from_zero: true,
            note: None,
            caption: None,
        }
    }
}

const COLORS: [&str; 5] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];
const W: f64 = 720.0;
const H: f64 = 420.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 70.0;
const BOTTOM: f64 = 60.0;

/// Titles are plain text: Markdown code marks are dropped.
fn plain(s: &str) -> String {
    esc(&s.replace('`', ""))
}

/// The nice number nearest `x`: 1, 2, 5 or 10 times a power of ten.
pub(crate) fn nice_number(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return 1.0;
    }
    let exp = x.log10().floor();
    let f = x / 10f64.powf(exp);
    let nf = if f < 1.5 {
        1.0
    } else if f < 3.0 {
        2.0
    } else if f < 7.0 {
        5.0
    } else {
        10.0
    };
    nf * 10f64.powf(exp)
}

/// Round ticks covering [lo, hi]: about `n` of them, a step of 1, 2 or 5 times a power of
/// ten (at least 1 on a whole-number axis). Returns (axis low, axis high, step).
pub(crate) fn nice_ticks(lo: f64, hi: f64, n: usize, integer: bool) -> (f64, f64, f64) {
    let (lo, hi) = if hi - lo < 1e-12 {
        (
            lo - 0.5_f64.max(lo.abs() * 0.1),
            hi + 0.5_f64.max(hi.abs() * 0.1),
        )
    } else {
        (lo, hi)
    };
    let mut step = nice_number((hi - lo) / (n.max(2) - 1) as f64);
    if integer {
        step = step.max(1.0).round();
    }
    let a = (lo / step).floor() * step;
    let b = (hi / step).ceil() * step;
    (a, b, step)
}

/// A tick label: no more decimals than the step needs, thousands grouped.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let s = format!(
        "{:.*}",
        decimals,
        if v.abs() < step * 1e-6 { 0.0 } else { v }
    );
    if decimals == 0 && v.abs() >= 10_000.0 {
        let neg = s.starts_with('-');
        let digits = s.trim_start_matches('-');
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        return if neg { format!("-{out}") } else { out };
    }
    s
}

#[allow(clippy::too_many_lines)] // one chart, drawn back to front
pub(crate) fn render(c: &Chart<'_>) -> String {
    let ty = |y: f64| if c.log_y { y.max(1e-300).log10() } else { y };
    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for se in &c.series {
        for (i, &(x, y)) in se.points.iter().enumerate() {
            xs.push(x);
            ys.push(ty(y));
            if let Some(&(a, b)) = se.intervals.get(i) {
                ys.push(ty(a));
                ys.push(ty(b));
            }
        }
    }
    xs.extend(c.markers.iter().map(|m| m.0));
    xs.extend(c.x_names.iter().map(|m| m.0));
    ys.extend(c.fixed_rules.iter().map(|r| ty(r.0)));
    xs.retain(|v| v.is_finite());
    ys.retain(|v| v.is_finite());
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (mut dx0, mut dx1) = (min(&xs), max(&xs));
    if !dx0.is_finite() {
        (dx0, dx1) = (0.0, 1.0);
    }
    let (mut dy0, mut dy1) = (min(&ys), max(&ys));
    if !dy0.is_finite() {
        (dy0, dy1) = (0.0, 1.0);
    }
    if !c.log_y && c.y_from_zero {
        dy0 = dy0.min(0.0);
    }
    let (x0, x1, xstep) = if !c.x_names.is_empty() {
        (dx0 - 0.5, dx1 + 0.5, 1.0)
    } else if c.x_integer {
        // Whole-number x: the data's own ends with half a unit of margin.
        let step = nice_ticks(dx0, dx1, 8, true).2;
        (dx0 - 0.5, dx1 + 0.5, step)
    } else {
        nice_ticks(dx0, dx1, 7, false)
    };
    let (y0, y1, ystep) = if c.log_y {
        (dy0.floor(), dy1.ceil().max(dy0.floor() + 1.0), 1.0)
    } else {
        nice_ticks(dy0, dy1, 6, c.y_integer)
    };
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - (ty(y) - y0) / (y1 - y0) * (H - TOP - BOTTOM);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12" role="img">"#
    );
    let _ = writeln!(s, "<title>{}</title>", plain(c.title));
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="26" font-size="15" font-weight="bold" text-anchor="middle">{}</text>"#,
        W / 2.0,
        plain(c.title)
    );
    // The note, then the caption wrapped, in at most three lines above the plot.
    let mut under: Vec<String> = c.note.iter().cloned().collect();
    if let Some(cap) = &c.caption {
        // A number keeps its unit (`50 %`, `1.34 h`) on its line.
        let mut words: Vec<String> = Vec::new();
        for w in cap.split_whitespace() {
            let unit = w.chars().count() <= 3 && !w.chars().any(|c| c.is_ascii_digit());
            match words.last_mut() {
                Some(prev) if unit && prev.ends_with(|c: char| c.is_ascii_digit()) => {
                    prev.push(' ');
                    prev.push_str(w);
                }
                _ => words.push(w.to_string()),
            }
        }
        let mut line = String::new();
        for w in &words {
            if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > 128 {
                under.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(w);
        }
        if !line.is_empty() {
            under.push(line);
        }
    }
    for (i, n) in under.iter().take(3).enumerate() {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="{}" fill="#555" text-anchor="middle">{}</text>"##,
            W / 2.0,
            38 + 10 * i,
            if i == 0 && c.note.is_some() { 11 } else { 10 },
            plain(n)
        );
    }
    // Grid and y ticks.
    let mut k = 0;
    loop {
        let t = y0 + f64::from(k) * ystep;
        if t > y1 + ystep * 1e-9 || k > 60 {
            break;
        }
        let gy = H - BOTTOM - (t - y0) / (y1 - y0) * (H - TOP - BOTTOM);
        let label = if c.log_y {
            format!("10<tspan dy=\"-5\" font-size=\"9\">{t:.0}</tspan>")
        } else {
            tick_label(t, ystep)
        };
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{gy:.1}" x2="{}" y2="{gy:.1}" stroke="#e4e4e4"/><text x="{}" y="{:.1}" text-anchor="end">{label}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            gy + 4.0
        );
        k += 1;
    }
    // X ticks.
    let xticks: Vec<(f64, String)> = if c.x_names.is_empty() {
        let first = (x0 / xstep).ceil() * xstep;
        (0..200)
            .map(|i| first + f64::from(i) * xstep)
            .take_while(|t| *t <= x1 + 1e-9)
            .map(|t| (t, tick_label(t, xstep)))
            .collect()
    } else {
        // Names thinned so that labels do not overlap (about 60 px each).
        let every = ((c.x_names.len() as f64 * 60.0) / (W - LEFT - RIGHT))
            .ceil()
            .max(1.0) as usize;
        c.x_names
            .iter()
            .enumerate()
            .filter(|(i, _)| i % every == 0)
            .map(|(_, n)| n.clone())
            .collect()
    };
    for (t, label) in &xticks {
        let gx = px(*t);
        let _ = writeln!(
            s,
            r##"<line x1="{gx:.1}" y1="{}" x2="{gx:.1}" y2="{}" stroke="#000"/><text x="{gx:.1}" y="{}" text-anchor="middle">{}</text>"##,
            H - BOTTOM,
            H - BOTTOM + 5.0,
            H - BOTTOM + 20.0,
            esc(label)
        );
    }
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="black"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{0}" stroke="black"/>"#,
        H - BOTTOM,
        W - RIGHT
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 18.0,
        plain(c.x_label)
    );
    let mid = (TOP + H - BOTTOM) / 2.0;
    let _ = writeln!(
        s,
        r#"<text x="20" y="{mid}" text-anchor="middle" transform="rotate(-90 20 {mid})">{}</text>"#,
        plain(c.y_label)
    );
    // Reference lines, labelled at the right; labels pushed apart when close.
    // The legend's rows in the right margin are taken first.
    let mut label_ys: Vec<f64> = (0..c.series.len())
        .map(|i| TOP + 20.0 * i as f64 + 4.0)
        .collect();
    let in_range = |v: f64| {
        let t = ty(v);
        t >= y0 - 1e-9 && t <= y1 + 1e-9
    };
    let drawn: Vec<&(f64, String)> = c
        .fixed_rules
        .iter()
        .chain(c.rules.iter().filter(|r| in_range(r.0)))
        .collect();
    for (v, label) in drawn {
        let y = py(*v);
        let mut ly = y + 4.0;
        while label_ys.iter().any(|o| (o - ly).abs() < 14.0) {
            ly += 14.0;
        }
        label_ys.push(ly);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#777" stroke-dasharray="6 4"/><text x="{}" y="{ly:.1}" fill="#444">{}</text>"##,
            W - RIGHT,
            W - RIGHT + 6.0,
            esc(label)
        );
    }
    // The answer: vertical lines, labels above the plot, staggered when close.
    let mut marker_xs: Vec<(f64, f64)> = Vec::new();
    for (x, label) in &c.markers {
        let gx = px(*x);
        let mut ly = TOP - 8.0;
        while marker_xs
            .iter()
            .any(|(ox, oy)| (ox - gx).abs() < 7.0 * label.len() as f64 && (oy - ly).abs() < 1.0)
        {
            ly -= 13.0;
        }
        marker_xs.push((gx, ly));
        let _ = writeln!(
            s,
            r##"<line x1="{gx:.1}" y1="{TOP}" x2="{gx:.1}" y2="{}" stroke="#111" stroke-width="1.5"/><text x="{gx:.1}" y="{ly:.1}" text-anchor="middle" font-weight="bold">{}</text>"##,
            H - BOTTOM,
            esc(label)
        );
    }
    for (i, se) in c.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        if se.style == Style::Line && se.points.len() > 1 {
            let path: Vec<String> = se
                .points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
                path.join(" ")
            );
        }
        for (j, &(x, y)) in se.points.iter().enumerate() {
            if let Some(&(a, b)) = se.intervals.get(j) {
                let (gx, ya, yb) = (px(x), py(a), py(b));
                let _ = writeln!(
                    s,
                    r#"<path d="M{gx:.1},{ya:.1}V{yb:.1}M{:.1},{ya:.1}h12M{:.1},{yb:.1}h12" stroke="{color}" stroke-width="1.5" fill="none"/>"#,
                    gx - 6.0,
                    gx - 6.0
                );
            }
            let open = se.upper_bound.get(j).copied().unwrap_or(false);
            let fill = if open { "white" } else { color };
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="{}" fill="{fill}" stroke="{color}" stroke-width="1.5"/>"#,
                px(x),
                py(y),
                if se.style == Style::Points { 5 } else { 3 }
            );
        }
        let ly = TOP + 20.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            W - RIGHT + 10.0,
            W - RIGHT + 30.0,
            W - RIGHT + 35.0,
            ly + 4.0,
            esc(&se.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::float_cmp)] // the ticks are exact multiples
    fn ticks_are_round_and_cover_the_data() {
        assert_eq!(nice_ticks(0.0, 0.41, 6, false), (0.0, 0.5, 0.1));
        assert_eq!(nice_ticks(0.0, 97.0, 6, false), (0.0, 100.0, 20.0));
        assert_eq!(nice_ticks(3.0, 7.0, 6, true), (3.0, 7.0, 1.0));
        // A whole-number axis never steps by less than one.
        assert_eq!(nice_ticks(0.0, 2.0, 8, true).2, 1.0);
        let (a, b, s) = nice_ticks(13.7, 1234.0, 6, false);
        assert!(a <= 13.7 && b >= 1234.0 && s == 200.0, "{a} {b} {s}");
        assert_eq!(tick_label(0.30000000000000004, 0.1), "0.3");
        assert_eq!(tick_label(20000.0, 5000.0), "20,000");
    }

    fn labels(svg: &str) -> Vec<String> {
        svg.split("text-anchor=\"middle\">")
            .skip(1)
            .map(|t| t.split('<').next().unwrap_or("").to_string())
            .collect()
    }

    #[test]
    fn reference_lines_only_in_range_and_whole_number_axes() {
        let mut c = Chart::new("Rebuild `x`", "limit", "hours");
        c.series = vec![Series::line(
            "hours",
            vec![(1.0, 0.5), (2.0, 0.4), (3.0, 0.35)],
        )];
        c.x_integer = true;
        c.y_from_zero = false;
        c.rules = vec![(24.0, "24 h rebuild abort".into())];
        c.markers = vec![(2.0, "recommended 2".into())];
        let svg = render(&c);
        assert!(
            !svg.contains("24 h rebuild abort"),
            "24 h is far above 0.5 h"
        );
        assert!(svg.contains("recommended 2"));
        assert!(!svg.contains('`'), "titles are plain text");
        // x ticks are the whole limits only.
        let xs: Vec<String> = labels(&svg)
            .into_iter()
            .filter(|l| l.parse::<f64>().is_ok())
            .collect();
        assert_eq!(xs, ["1", "2", "3"]);
        // Hours that reach the abort line draw it.
        c.series = vec![Series::line("hours", vec![(1.0, 30.0), (2.0, 20.0)])];
        assert!(render(&c).contains("24 h rebuild abort"));
    }

    #[test]
    fn the_caption_wraps_without_parting_a_number_from_its_unit() {
        let mut c = Chart::new("t", "x", "y");
        c.series = vec![Series::line("hours", vec![(1.0, 3.0), (2.0, 2.0)])];
        let words = "at most 1.34 h and ".repeat(12) + "at most 50 % of any link";
        c.caption = Some(words);
        let svg = render(&c);
        for line in svg.lines().filter(|l| l.contains("font-size=\"10\"")) {
            let text = line.split('>').nth(1).unwrap_or("");
            assert!(!text.starts_with('%') && !text.starts_with("h "), "{text}");
            assert!(!text.ends_with(" 50") && !text.ends_with(" 1.34"), "{text}");
        }
        // The hours axis starts at zero unless told otherwise.
        assert!(
            svg.contains(">0.0</text>") || svg.contains(">0</text>"),
            "{svg}"
        );
    }
}
