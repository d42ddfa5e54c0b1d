//! The capacity and failure simulator, in the order a study flows: the scenario is read
//! (`scenario`), its fleet resolved (`fleet`), workloads placed like the real schedulers
//! (`place`), failures re-placed, rebuilt and weighed (`failure`), and the questions a
//! reviewer asks answered from them (`questions`), the control plane's own limits among
//! them (`control_plane`). `study` is the one front door; `report` holds the answers as
//! data.

pub mod control_plane;
pub mod delivery;
pub mod failure;
pub mod fleet;
pub mod place;
pub mod questions;
pub(crate) mod report;
pub mod scenario;
pub(crate) mod study;

pub(crate) use report::{Report, Stopped};
pub use study::{ScenarioInput, Study, StudyError, StudyInput};
