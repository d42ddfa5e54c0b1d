//! Loading `site.yaml`: parsed (unknown keys rejected), then its values checked against
//! each other.

use std::path::{Path, PathBuf};

use super::model::Site;
use super::validate::validate;
use crate::files::yaml::{self, InputError, Source};

/// A loaded site: the parsed file, its text (for located errors) and its directory.
#[derive(Debug, Clone)]
pub struct LoadedSite {
    pub(crate) site: Site,
    pub(crate) source: Source,
    pub(crate) dir: PathBuf,
    /// `compliance:` with the files it names read and checked.
    pub(crate) compliance: super::compliance::Resolved,
}

impl LoadedSite {
    pub(crate) fn profiles_dir(&self) -> PathBuf {
        self.dir.join(&self.site.profiles_dir)
    }

    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Load `<dir>/site.yaml` and check it.
pub(crate) fn load(dir: &Path) -> Result<LoadedSite, InputError> {
    let path = dir.join("site.yaml");
    let (site, source): (Site, Source) = yaml::load(&path)?;
    validate(&site, &source)?;
    let compliance = super::compliance::resolve(site.compliance.as_ref(), &source, dir)?;
    Ok(LoadedSite {
        site,
        source,
        dir: dir.to_path_buf(),
        compliance,
    })
}
