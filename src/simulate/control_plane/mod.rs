//! Harvester's API server and etcd as a capacity limit: the objects a fleet keeps in etcd
//! and their size (`objects`), the writes of its steady state and of the storms rackplan
//! simulates (`writes`), what the management nodes serve (`serve`), and how many more
//! clusters of each shape fit before each limit, with what to change (`answer`,
//! `advice`). Every constant carries its source (`figures`).

mod advice;
mod answer;
mod figures;
mod fleet;
mod model;
mod objects;
mod serve;
mod state;
mod writes;

pub(crate) use answer::{answer, cap, warnings};
pub use figures::{Figure, Origin, figures};
pub use model::{
    Advice, Binding, ControlPlane, ControlPlaneStop, EtcdSize, LimitRow, Measured, Peak,
    ShapeGrowth, Until,
};
pub use objects::KindRow;
pub use serve::Capacity;
pub use writes::{SteadyPart, Storm};
