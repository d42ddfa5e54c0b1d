//! Role profiles (`profiles/*.yaml`) and holding a node against one.
//!
//! A profile states minima (cores, memory, disks) and which NIC ports serve which network.
//! Matching is pure: [`select_ports`] and [`select_disks`] say which ports and disks a node
//! would use, and `plan::check` turns the gaps into findings.

mod bytesize;
mod select;
pub use crate::vocab::{NetworkKind, Role};
pub(crate) use bytesize::{ByteSize, SizeError};
pub(crate) use select::{PortChoice, select_disks, select_ports};
mod model;

pub use model::GpuSpec;
pub use model::Profile;
pub(crate) use model::{CpuSpec, DataDisks, DiskSpec, MemorySpec, NetworkSpec, Profiles};
