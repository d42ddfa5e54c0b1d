//! Everything check, plan and render read from a site folder, loaded in one step.

use super::allocations::Lock;
use crate::inventory::Inventory;
use crate::profile::Profiles;
use crate::site::LoadedSite;

/// Everything `check`, `plan` and `render` read.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub(crate) site: LoadedSite,
    pub(crate) profiles: Profiles,
    pub(crate) inventory: Inventory,
    pub(crate) lock: Lock,
    /// Acknowledgements of nodes.yaml past their last day, taken out of `inventory` when
    /// loaded: their findings count again, and `check` says so.
    pub(crate) expired: Vec<super::acknowledge::Expired>,
}

/// Why the inputs of check, plan and render could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Input(#[from] Box<crate::files::yaml::InputError>),
    /// A file the command needs does not exist; the message says what creates it.
    #[error("{0}")]
    Missing(String),
}

impl From<crate::files::yaml::InputError> for LoadError {
    fn from(e: crate::files::yaml::InputError) -> Self {
        LoadError::Input(Box::new(e))
    }
}

/// Load everything check, plan and render read from the site folder `dir`.
pub fn load_inputs(dir: &std::path::Path) -> Result<Inputs, LoadError> {
    let site = crate::site::load(dir)?;
    let profiles = Profiles::load_dir(&site.profiles_dir())?;
    let nodes_path = site.file("nodes.yaml");
    if !crate::files::yaml::input_exists(&nodes_path)? {
        return Err(LoadError::Missing(format!(
            "{} does not exist: run `rackplan discover redfish --site {}` (or write it by hand)",
            nodes_path.display(),
            dir.display()
        )));
    }
    let (mut inventory, nodes_src) = crate::inventory::store::load(&nodes_path)?;
    super::acknowledge::validate(&inventory, &nodes_src)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let expired = super::acknowledge::set_aside_expired(&mut inventory, now);
    let (lock, lock_src) = Lock::load(&site.file("allocations.yaml"))?;
    if let Some(src) = &lock_src {
        lock.validate_against(src, &site.site.management)?;
    }
    Ok(Inputs {
        site,
        profiles,
        inventory,
        lock,
        expired,
    })
}
