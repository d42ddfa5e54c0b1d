//! Byte units, written once.

/// Bytes in a GiB and in a TiB.
pub(crate) const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
pub(crate) const TIB: f64 = 1024.0 * GIB;
