//! Discovery: node records from BMCs (`redfish`) and from hosts (`ssh`), merged into the
//! inventory by `inventory::store`.

pub(crate) mod lldp;
pub mod redfish;
pub(crate) mod ssh;
