//! Where in the scenario file a problem is: errors name the file and the
//! line.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;

/// Where in the file a problem is.
pub(super) struct Source<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

impl Source<'_> {
    pub(super) fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    pub(super) fn error(&self, span: Range<usize>, message: impl std::fmt::Display) -> String {
        format!(
            "{}:{}: {message}",
            self.path.display(),
            self.line_of(span.start)
        )
    }

    pub(super) fn value<T>(
        &self,
        field: &Spanned<String>,
        what: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, String> {
        parse(field.get_ref()).map_err(|e| self.error(field.span(), format!("{what}: {e}")))
    }
}
