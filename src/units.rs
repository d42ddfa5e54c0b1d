//! Byte units, written once.

/// Bytes in a GiB and in a TiB.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
pub const TIB: f64 = 1024.0 * GIB;
