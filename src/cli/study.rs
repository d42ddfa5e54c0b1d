//! The study `simulate` and `admit` open, with the scenario from a file or standard input
//! and a spinner while a dump is read.

use std::path::Path;

use super::error::Error;
use super::term;
use crate::simulate::scenario::RebuildWhatIf;
use crate::simulate::{ScenarioInput, Study, StudyInput};

/// The study `simulate` and `admit` open: the scenario from a file or standard input.
pub(crate) fn open_study(
    scenario: Option<&Path>,
    site: Option<&Path>,
    dump: Option<&Path>,
    rebuild_what_if: Option<RebuildWhatIf>,
) -> Result<Study, Error> {
    let stdin;
    let scenario = match scenario {
        Some(f) if f == Path::new("-") => {
            stdin = term::read_stdin("the scenario")?;
            ScenarioInput::Text {
                name: Path::new("<stdin>"),
                text: &stdin,
            }
        }
        Some(f) => ScenarioInput::File(f),
        None => ScenarioInput::None,
    };
    let progress = dump.map(|d| term::spinner(&format!("reading {}", d.display())));
    let study = Study::open(&StudyInput {
        scenario,
        site,
        dump,
        rebuild_what_if,
    });
    drop(progress);
    Ok(study?)
}

/// What the site's catalogue says for the delivery model: the image its machines boot
/// from (`catalogue.image`, else the site's first image), the user-data it renders for
/// them, and the shapes it offers. The site is the one `--site` or the scenario names; a
/// dump's fleet has none (its images are read from the dump).
pub(crate) fn read_site_catalogue(
    study: &mut Study,
    site: Option<&Path>,
    dump: Option<&Path>,
) -> Result<(), Error> {
    use base64::Engine as _;
    if dump.is_some() {
        return Ok(());
    }
    let dir = site.map(Path::to_path_buf).or_else(|| {
        study
            .scenario
            .fleet
            .site
            .as_ref()
            .map(|s| study.dir.join(s))
    });
    let Some(dir) = dir else {
        return Ok(());
    };
    let loaded = crate::site::load(&dir)?;
    let s = &loaded.site;
    let c = s.catalogue.as_ref();
    let image = match c.and_then(|c| c.image.as_deref()) {
        Some(n) => s.images.iter().find(|i| i.name.0 == n),
        None => s.images.first(),
    };
    let Some(image) = image else {
        return Ok(());
    };
    // The user-data of the first shape the catalogue renders (every machine config of a
    // catalogue carries the same).
    let user_data = c.and_then(|c| {
        study.shapes.iter().find_map(|(name, pools)| {
            let docs =
                crate::render::catalogue::shape_docs(s, &loaded.compliance, c, "", name, pools)
                    .ok()?;
            let b64 = docs.iter().find(|d| d["kind"] == "HarvesterConfig")?["userData"]
                .as_str()?
                .to_string();
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
            String::from_utf8(bytes).ok()
        })
    });
    study.delivery_site = Some(crate::simulate::delivery::SiteCatalogue {
        name: image.name.0.clone(),
        kind: Some(match image.kind {
            crate::site::ImageKind::Prepared => crate::simulate::delivery::ImageKind::Prepared,
            crate::site::ImageKind::Generic => crate::simulate::delivery::ImageKind::Generic,
        }),
        user_data,
        shapes: c.and_then(|c| c.shapes.clone()),
    });
    Ok(())
}
