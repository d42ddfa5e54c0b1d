//! Small SVG line charts, written by hand (no font or image libraries needed).

use std::fmt::Write as _;

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

pub struct Chart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub series: Vec<Series>,
    pub log_y: bool,
    /// A horizontal reference line (value, label).
    pub rule: Option<(f64, &'a str)>,
}

const COLORS: [&str; 5] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn nice(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1000.0 || v.abs() < 0.01 {
        format!("{v:.1e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

pub fn render(c: &Chart<'_>) -> String {
    let (w, h) = (720.0, 420.0);
    let (left, right, top, bottom) = (80.0, 160.0, 50.0, 60.0);
    let pts: Vec<(f64, f64)> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .collect();
    let ty = |y: f64| if c.log_y { y.max(1e-300).log10() } else { y };
    let (mut x0, mut x1) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| {
        (a.0.min(p.0), a.1.max(p.0))
    });
    let mut ys: Vec<f64> = pts
        .iter()
        .map(|p| ty(p.1))
        .filter(|v| v.is_finite())
        .collect();
    if let Some((r, _)) = c.rule {
        ys.push(ty(r));
    }
    let (mut y0, mut y1) = ys.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, v| {
        (a.0.min(*v), a.1.max(*v))
    });
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if !y0.is_finite() {
        (y0, y1) = (0.0, 1.0);
    }
    if !c.log_y {
        y0 = y0.min(0.0);
    }
    if (x1 - x0).abs() < 1e-12 {
        x1 = x0 + 1.0;
    }
    if (y1 - y0).abs() < 1e-12 {
        y1 = y0 + 1.0;
    }
    let px = |x: f64| left + (x - x0) / (x1 - x0) * (w - left - right);
    let py = |y: f64| h - bottom - (ty(y) - y0) / (y1 - y0) * (h - top - bottom);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="28" font-size="16" text-anchor="middle">{}</text>"#,
        w / 2.0,
        esc(c.title)
    );
    let _ = writeln!(
        s,
        r#"<line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#,
        h - bottom,
        w - right,
        h - bottom
    );
    let _ = writeln!(
        s,
        r#"<line x1="{left}" y1="{top}" x2="{left}" y2="{}" stroke="black"/>"#,
        h - bottom
    );
    for i in 0..=5 {
        let f = f64::from(i) / 5.0;
        let xv = x0 + f * (x1 - x0);
        let yv_t = y0 + f * (y1 - y0);
        let yv = if c.log_y { 10f64.powf(yv_t) } else { yv_t };
        let (gx, gy) = (px(xv), h - bottom - f * (h - top - bottom));
        let _ = writeln!(
            s,
            r##"<line x1="{gx}" y1="{}" x2="{gx}" y2="{}" stroke="#000"/><text x="{gx}" y="{}" text-anchor="middle">{}</text>"##,
            h - bottom,
            h - bottom + 5.0,
            h - bottom + 20.0,
            nice(xv)
        );
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{gy}" x2="{}" y2="{gy}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            w - right,
            left - 6.0,
            gy + 4.0,
            nice(yv)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (left + w - right) / 2.0,
        h - 18.0,
        esc(c.x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="20" y="{}" text-anchor="middle" transform="rotate(-90 20 {})">{}</text>"#,
        (top + h - bottom) / 2.0,
        (top + h - bottom) / 2.0,
        esc(c.y_label)
    );
    if let Some((r, label)) = c.rule {
        let y = py(r);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{y}" x2="{}" y2="{y}" stroke="#888" stroke-dasharray="6 4"/><text x="{}" y="{}" fill="#555">{}</text>"##,
            w - right,
            w - right + 6.0,
            y + 4.0,
            esc(label)
        );
    }
    for (i, se) in c.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
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
        for &(x, y) in &se.points {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#,
                px(x),
                py(y)
            );
        }
        let ly = top + 20.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            w - right + 10.0,
            w - right + 30.0,
            w - right + 35.0,
            ly + 4.0,
            esc(&se.name)
        );
    }
    s.push_str("</svg>\n");
    s
}
