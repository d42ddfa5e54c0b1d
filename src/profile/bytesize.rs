//! Disk sizes as people write them: `480GB`, `3.84 TB`, `250GiB`, or plain bytes.
//!
//! Drive vendors sell decimal sizes (a "3.84 TB" NVMe holds 3.84e12 bytes, 3.49 TiB), so
//! profiles should use decimal units for drives; binary units are accepted for minima taken
//! from software (Harvester's 250 GiB install disk).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

/// A size that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SizeError {
    #[error("`{0}` is not a size (write e.g. `480GB` or `3.84TB`)")]
    NotASize(String),
    #[error("unknown size unit `{unit}` in `{text}` (use B, GB, TB, PB, GiB, TiB or PiB)")]
    UnknownUnit { unit: String, text: String },
}

impl ByteSize {
    pub(crate) fn parse(text: &str) -> Result<ByteSize, SizeError> {
        let t = text.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let n: f64 = num
            .parse()
            .map_err(|_| SizeError::NotASize(text.to_string()))?;
        let mult: f64 = match unit.trim() {
            "" | "B" => 1.0,
            "KB" | "kB" => 1e3,
            "MB" => 1e6,
            "GB" => 1e9,
            "TB" => 1e12,
            "KiB" => 1024.0,
            "MiB" => 1024f64.powi(2),
            "GiB" => 1024f64.powi(3),
            "TiB" => 1024f64.powi(4),
            "PB" => 1e15,
            "PiB" => 1024f64.powi(5),
            other => {
                return Err(SizeError::UnknownUnit {
                    unit: other.to_string(),
                    text: text.to_string(),
                });
            }
        };
        Ok(ByteSize((n * mult).round() as u64))
    }

    /// Human form in decimal units, as drive labels read.
    pub(crate) fn human(bytes: u64) -> String {
        let b = bytes as f64;
        if b >= 1e12 {
            format!("{:.2} TB", b / 1e12)
        } else if b >= 1e9 {
            format!("{:.0} GB", b / 1e9)
        } else {
            format!("{bytes} B")
        }
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&ByteSize::human(self.0))
    }
}

impl schemars::JsonSchema for ByteSize {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ByteSize".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "bytes, or a size with a unit: `3.84TB` (decimal, as drives are labelled), `512GiB` (binary)",
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "string", "pattern": "^\\s*([0-9]+(\\.[0-9]*)?|\\.[0-9]+)\\s*(B|[kK]B|[MGTP]B|[KMGTP]iB)?\\s*$"},
            ],
        })
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(ByteSize(n)),
            Raw::S(s) => ByteSize::parse(&s).map_err(serde::de::Error::custom),
        }
    }
}

impl ByteSize {
    /// The size as a drive label writes it, when that label reads back to exactly these
    /// bytes: `960GB`, `3.84TB`, `512GiB`. At most three decimals, decimal units first.
    pub fn label(self) -> Option<String> {
        const UNITS: [(&str, u64); 8] = [
            ("PB", 1_000_000_000_000_000),
            ("TB", 1_000_000_000_000),
            ("GB", 1_000_000_000),
            ("MB", 1_000_000),
            ("PiB", 1 << 50),
            ("TiB", 1 << 40),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
        ];
        for (unit, size) in UNITS {
            if self.0 < size {
                continue;
            }
            let (whole, rest) = (self.0 / size, self.0 % size);
            // The remainder in thousandths of the unit, when it is a whole number of them.
            let thousandths = u128::from(rest) * 1000;
            if thousandths % u128::from(size) != 0 {
                continue;
            }
            let frac = format!("{:03}", thousandths / u128::from(size));
            let frac = frac.trim_end_matches('0');
            let text = if frac.is_empty() {
                format!("{whole}{unit}")
            } else {
                format!("{whole}.{frac}{unit}")
            };
            if ByteSize::parse(&text).ok() == Some(self) {
                return Some(text);
            }
        }
        None
    }
}

/// Written as its label when one reads back exactly (profiles people edit say `960GB`),
/// else as bytes.
impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.label() {
            Some(text) => s.serialize_str(&text),
            None => s.serialize_u64(self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_back_to_the_same_bytes() {
        let cases = [
            (960_000_000_000, Some("960GB")),
            (3_840_000_000_000, Some("3.84TB")),
            (480_000_000_000, Some("480GB")),
            (512 * (1u64 << 30), Some("512GiB")),
            (1_500_000, Some("1.5MB")),
            (3_840_755_982_336, None),
            (1024, None),
            (0, None),
        ];
        for (bytes, want) in cases {
            let got = ByteSize(bytes).label();
            assert_eq!(got.as_deref(), want, "{bytes}");
            if let Some(text) = got {
                assert_eq!(ByteSize::parse(&text).unwrap(), ByteSize(bytes));
            }
            let yaml = crate::files::yaml::to_string(&ByteSize(bytes));
            let back: ByteSize = serde_saphyr::from_str(&yaml).unwrap();
            assert_eq!(back, ByteSize(bytes), "{yaml}");
        }
    }

    #[test]
    fn parses_decimal_and_binary_units() {
        assert_eq!(ByteSize::parse("3.84TB").unwrap().0, 3_840_000_000_000);
        assert_eq!(ByteSize::parse("480 GB").unwrap().0, 480_000_000_000);
        assert_eq!(ByteSize::parse("250GiB").unwrap().0, 250 * 1024u64.pow(3));
        assert_eq!(ByteSize::parse("1024").unwrap().0, 1024);
        assert!(
            ByteSize::parse("3.84 TX")
                .unwrap_err()
                .to_string()
                .contains("unknown size unit `TX`")
        );
        assert_eq!(
            ByteSize::parse("big"),
            Err(SizeError::NotASize("big".into()))
        );
        assert!(matches!(
            ByteSize::parse("2 XB"),
            Err(SizeError::UnknownUnit { unit, .. }) if unit == "XB"
        ));
    }
}
