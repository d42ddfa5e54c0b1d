//! Golden VM images: one `harvesterhci.io/v1beta1` `VirtualMachineImage` per `images:` entry.
//!
//! Harvester downloads the URL into a Longhorn backing image and hands the checksum to it
//! unchanged; Longhorn accepts only a SHA-512 as 128 lowercase hex digits, so `site.yaml`
//! names the algorithm (`sha512:...`) and the manifest carries the bare digits.

use serde_json::{Value, json};

use crate::site::Image;

pub(crate) fn manifest(img: &Image) -> Value {
    let mut meta = json!({"name": img.name.0, "namespace": img.namespace()});
    if let Some(sc) = &img.storage_class {
        meta["annotations"] = json!({"harvesterhci.io/storageClassName": sc});
    }
    if let Some(os) = &img.os_type {
        meta["labels"] = json!({"harvesterhci.io/os-type": os});
    }
    let mut spec = json!({
        "displayName": img.display_name,
        "sourceType": "download",
        "url": img.url,
        "checksum": img.sha512().unwrap_or_default(),
    });
    if let Some(d) = &img.description {
        spec["description"] = json!(d);
    }
    json!({
        "apiVersion": "harvesterhci.io/v1beta1",
        "kind": "VirtualMachineImage",
        "metadata": meta,
        "spec": spec,
    })
}

/// `<namespace>/<name>`, as machine configs refer to an image.
pub(crate) fn reference(img: &Image) -> String {
    format!("{}/{}", img.namespace(), img.name)
}
