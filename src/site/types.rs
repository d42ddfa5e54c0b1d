//! Small value types that validate themselves while the file is parsed, so a bad value is
//! reported at its own line and key: VLAN ids, MTUs, cluster network names, DNS labels.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! checked_u16 {
    ($name:ident, $lo:expr, $hi:expr, $what:expr) => {
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "integer",
                    "minimum": $lo,
                    "maximum": $hi,
                    "description": concat!($what, ", ", stringify!($lo), "..", stringify!($hi)),
                })
            }
        }

        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u16);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = i64::deserialize(d)?;
                if ($lo..=$hi).contains(&v) {
                    Ok($name(v as u16))
                } else {
                    Err(serde::de::Error::custom(format!(
                        "{} {} is out of range: it must be {}..{}",
                        $what, v, $lo, $hi
                    )))
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_u16(self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

checked_u16!(Vlan, 1, 4094, "VLAN id");
checked_u16!(Mtu, 576, 9000, "MTU");

impl Default for Mtu {
    fn default() -> Self {
        Mtu(9000)
    }
}

/// True for an RFC 1123 label: lowercase alphanumerics and `-`, alphanumeric at both ends.
pub(crate) fn is_dns_label(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A Harvester cluster network name: a DNS label of at most 12 characters, because the
/// bridge `<name>-br` must fit Linux's 15-character interface names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct ClusterNetworkName(pub(crate) String);

impl<'de> Deserialize<'de> for ClusterNetworkName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if !is_dns_label(&s, 12) {
            return Err(serde::de::Error::custom(format!(
                "cluster network name `{s}` is invalid: Harvester needs at most 12 characters \
                 (lowercase letters, digits, `-`), because `<name>-br` must fit a 15-character \
                 interface name"
            )));
        }
        if s == "mgmt" {
            return Err(serde::de::Error::custom(
                "`mgmt` is Harvester's built-in management network; choose another name",
            ));
        }
        Ok(ClusterNetworkName(s))
    }
}

impl schemars::JsonSchema for ClusterNetworkName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ClusterNetworkName".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$",
            "not": {"const": "mgmt"},
            "description": "Harvester cluster network: at most 12 lowercase letters, digits and `-` (`<name>-br` must fit 15 characters); not `mgmt`",
        })
    }
}

impl fmt::Display for ClusterNetworkName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A DNS-1123 label (63 characters at most): tenant names, namespaces, hostname prefixes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct DnsLabel(pub(crate) String);

impl<'de> Deserialize<'de> for DnsLabel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if !is_dns_label(&s, 63) {
            return Err(serde::de::Error::custom(format!(
                "`{s}` is not a valid name: use at most 63 lowercase letters, digits and `-`, \
                 starting and ending with a letter or digit"
            )));
        }
        Ok(DnsLabel(s))
    }
}

impl schemars::JsonSchema for DnsLabel {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DnsLabel".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
            "description": "DNS-1123 label: at most 63 lowercase letters, digits and `-`, starting and ending with a letter or digit",
        })
    }
}

impl fmt::Display for DnsLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert!(is_dns_label("vm-workload", 12));
        assert!(!is_dns_label("vm-workload-x", 12));
        assert!(!is_dns_label("Paiement", 63));
        assert!(!is_dns_label("-a", 63));
    }
}
