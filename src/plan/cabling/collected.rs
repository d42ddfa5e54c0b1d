//! Rows, their finding codes and the findings as the checks gather them, and how a switch
//! port is named in a finding.

use super::model::CablingRow;
use crate::inventory::Lldp;
use crate::inventory::text::shown;
use crate::plan::findings::Finding;

/// Rows, the finding codes of each row, and the findings, as they are gathered.
#[derive(Default)]
pub(super) struct Collected {
    pub(super) rows: Vec<CablingRow>,
    pub(super) codes: Vec<Vec<&'static str>>,
    pub(super) findings: Vec<Finding>,
}

impl Collected {
    /// `f` once, its code on each of `rows`.
    pub(super) fn flag(&mut self, rows: &[usize], f: Finding) {
        for &r in rows {
            if !self.codes[r].contains(&f.code) {
                self.codes[r].push(f.code);
            }
        }
        if !self.findings.contains(&f) {
            self.findings.push(f);
        }
    }
}

/// `switch port`, shown with marks for anything hidden or look-alike.
pub(super) fn at(switch: Option<&str>, port: Option<&str>) -> String {
    format!(
        "{} port {}",
        shown(switch.unwrap_or("?")),
        shown(port.unwrap_or("?"))
    )
}

pub(super) fn at_lldp(l: &Lldp) -> String {
    at(l.switch.as_deref(), l.port.as_deref())
}
