//! Kubernetes quantities (`125m`, `2730Mi`, `32849604Ki`, `4Gi`, `1.5`, `1k`) and the
//! support bundle's numbers (floats with exponents, the string `"null"`).

use super::tree::Json;

/// A string value, with the support bundle's `"null"` (and empty) read as absent.
pub(crate) fn text<J: Json>(v: &J) -> Option<&str> {
    v.get_str().filter(|s| !s.is_empty() && *s != "null")
}

fn split(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')
        })
        .unwrap_or(s.len());
    // `e` is also a decimal suffix (exa); "1e3" is a number, "1E" would be exa.
    let (num, unit) = s.split_at(end);
    let n: f64 = num.parse().ok()?;
    n.is_finite().then_some((n, unit))
}

/// The largest byte quantity read (8 EiB, past any disk or memory): beyond it a value is
/// unreadable, never an infinity or a NaN in a percentage.
pub(crate) const MAX_BYTES: f64 = 9.223_372_036_854_776e18;
/// The largest CPU quantity read, in millicores (a million cores).
pub(crate) const MAX_MILLICORES: f64 = 1e9;

/// A byte quantity (`4Gi`, `32849604Ki`, `21474836480`, `3.94085056512e+11`, `500M`).
pub(crate) fn bytes<J: Json>(v: &J) -> Option<f64> {
    raw_bytes(v).filter(|b| b.is_finite() && (0.0..=MAX_BYTES).contains(b))
}

/// A CPU quantity in millicores (`125m`, `8`, `1.5`, `2436302373n`).
pub(crate) fn millicores<J: Json>(v: &J) -> Option<f64> {
    raw_millicores(v).filter(|m| m.is_finite() && (0.0..=MAX_MILLICORES).contains(m))
}

fn raw_bytes<J: Json>(v: &J) -> Option<f64> {
    if let Some(n) = v.get_f64() {
        return (n >= 0.0).then_some(n);
    }
    let (n, unit) = split(text(v)?)?;
    let mult = match unit {
        "" => 1.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        _ => return None,
    };
    let b = n * mult;
    (b >= 0.0).then_some(b)
}

fn raw_millicores<J: Json>(v: &J) -> Option<f64> {
    if let Some(n) = v.get_f64() {
        return (n >= 0.0).then_some(n * 1000.0);
    }
    let (n, unit) = split(text(v)?)?;
    let m = match unit {
        "" => n * 1000.0,
        "m" => n,
        "u" => n / 1000.0,
        "n" => n / 1e6,
        "k" => n * 1e6,
        _ => return None,
    };
    (m >= 0.0).then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities_as_kubernetes_and_the_bundle_write_them() {
        assert_eq!(bytes(&json!("4Gi")), Some(4.0 * 1024f64.powi(3)));
        assert_eq!(bytes(&json!("2730Mi")), Some(2730.0 * 1024f64.powi(2)));
        assert_eq!(bytes(&json!("32849604Ki")), Some(32_849_604.0 * 1024.0));
        assert_eq!(bytes(&json!("21474836480")), Some(21_474_836_480.0));
        assert_eq!(bytes(&json!(3.94085056512e+11)), Some(394_085_056_512.0));
        assert_eq!(bytes(&json!("3.94085056512e+11")), Some(394_085_056_512.0));
        assert_eq!(bytes(&json!("500M")), Some(5e8));
        assert_eq!(bytes(&json!("null")), None);
        assert_eq!(bytes(&json!("12Zi")), None);
        // Past any real machine: unreadable, never an infinity.
        assert_eq!(millicores(&json!(1e308)), None);
        assert_eq!(millicores(&json!("1e308")), None);
        assert_eq!(bytes(&json!("1e308Pi")), None);
        assert_eq!(bytes(&json!(1e300)), None);
        assert_eq!(millicores(&json!("128")), Some(128_000.0));
        assert_eq!(bytes(&json!(-1)), None);
        assert_eq!(millicores(&json!("125m")), Some(125.0));
        assert_eq!(millicores(&json!("8")), Some(8000.0));
        assert_eq!(millicores(&json!(2)), Some(2000.0));
        assert_eq!(millicores(&json!("1.5")), Some(1500.0));
        assert_eq!(millicores(&json!("2436302373n")), Some(2436.302373));
        assert_eq!(millicores(&json!("")), None);
        assert_eq!(text(&json!("null")), None);
        assert_eq!(text(&json!("x")), Some("x"));
    }
}
