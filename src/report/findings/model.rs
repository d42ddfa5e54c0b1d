//! The review as data: sections with a heading, sentences, tables and charts, in the order
//! they are read. Renderers (terminal text, HTML, Markdown) lay it out and add nothing.

/// The findings of one review.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Findings {
    /// The scenario (or dump) reviewed.
    pub(crate) scenario: String,
    pub(crate) passes: bool,
    /// "Generated … by rackplan … from …", when the run recorded its provenance. Reports
    /// that are kept (HTML, Markdown) show it; the terminal does not.
    pub(crate) provenance: Option<String>,
    pub(crate) sections: Vec<Section>,
}

/// One part of the review.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Section {
    /// A stable anchor: verdict, fix, dump, headroom, capacity, control-plane, rebuild,
    /// risk, warnings, assumptions.
    pub(crate) id: &'static str,
    pub(crate) heading: String,
    pub(crate) blocks: Vec<Block>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    /// A sentence (or a few), ending with its full stop.
    Text(String),
    Table(Table),
    /// The file name of a chart of [`crate::report::charts::plots`] shown here.
    Chart(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    pub(crate) head: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
    /// Screens show at most this many rows and say how many more there are; reports show
    /// every row.
    pub(crate) screen_rows: Option<usize>,
}

impl Section {
    pub(crate) fn new(id: &'static str, heading: impl Into<String>) -> Section {
        Section {
            id,
            heading: heading.into(),
            blocks: Vec::new(),
        }
    }

    pub(crate) fn text(&mut self, s: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Text(s.into()));
        self
    }

    pub(crate) fn table(&mut self, head: &[&str], rows: Vec<Vec<String>>) -> &mut Self {
        self.blocks.push(Block::Table(Table {
            head: head.iter().map(|h| (*h).to_string()).collect(),
            rows,
            screen_rows: None,
        }));
        self
    }

    /// A table of which screens show the first `n` rows.
    pub(crate) fn long_table(
        &mut self,
        head: &[&str],
        rows: Vec<Vec<String>>,
        n: usize,
    ) -> &mut Self {
        self.table(head, rows);
        if let Some(Block::Table(t)) = self.blocks.last_mut() {
            t.screen_rows = Some(n);
        }
        self
    }

    pub(crate) fn chart(&mut self, name: &'static str) -> &mut Self {
        self.blocks.push(Block::Chart(name));
        self
    }
}
