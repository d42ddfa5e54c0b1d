//! Everything that touches files: `yaml` is the only YAML reader and writer (located
//! errors, strict types, quoting Go's parsers read back the same), `fsio` the only file
//! writer (atomic, modes kept), `secrets` the only place secret values live.

pub(crate) mod fsio;
pub(crate) mod input_error;
pub(crate) mod provenance;
pub mod secrets;
pub mod sitelock;
pub mod yaml;
