//! The CSV files under `docs/data/` (RFC 4180: a header, then rows; a
//! field holding a comma, a quote or a line break is quoted, as a `--cc`
//! spec with several keys is in `results.csv`). An empty field is a
//! missing value.

use std::fmt::Write as _;

/// A CSV file read whole: its header and its rows, every row as long as
/// the header.
#[derive(Clone, Debug, PartialEq)]
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    /// The position of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// Row `row`'s value of column `name`: `None` when the column is
    /// absent or the field empty.
    pub fn get(&self, row: usize, name: &str) -> Option<&str> {
        let c = self.column(name)?;
        let v = self.rows.get(row)?.get(c)?;
        (!v.is_empty()).then_some(v.as_str())
    }

    /// Reads `text`; `file` names it in errors, with the line.
    pub fn parse(file: &str, text: &str) -> Result<Csv, String> {
        let mut records = records(file, text)?.into_iter();
        let (_, header) = records
            .next()
            .ok_or_else(|| format!("{file}: empty (a CSV needs a header line)"))?;
        if let Some(dup) = header
            .iter()
            .enumerate()
            .find(|(i, h)| header[..*i].contains(h))
        {
            return Err(format!("{file}:1: column '{}' twice", dup.1));
        }
        let mut rows = Vec::new();
        for (line, r) in records {
            if r.len() != header.len() {
                return Err(format!(
                    "{file}:{line}: {} fields where the header has {}",
                    r.len(),
                    header.len()
                ));
            }
            rows.push(r);
        }
        Ok(Csv { header, rows })
    }

    /// The file's text: the header and each row, `\n` after each line.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for r in std::iter::once(&self.header).chain(&self.rows) {
            let fields: Vec<String> = r.iter().map(|f| field(f)).collect();
            let _ = writeln!(s, "{}", fields.join(","));
        }
        s
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The records of `text`, each with the line it starts on; blank lines
/// are skipped.
fn records(file: &str, text: &str) -> Result<Vec<(usize, Vec<String>)>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while chars.peek().is_some() {
        let start = line;
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut quoted_field = false;
        loop {
            match chars.next() {
                None => {
                    fields.push(std::mem::take(&mut cur));
                    break;
                }
                Some('"') if cur.is_empty() && !quoted_field => {
                    quoted_field = true;
                    loop {
                        match chars.next() {
                            None => {
                                return Err(format!("{file}:{start}: a quoted field is not closed"))
                            }
                            Some('"') if chars.peek() == Some(&'"') => {
                                chars.next();
                                cur.push('"');
                            }
                            Some('"') => break,
                            Some(c) => {
                                if c == '\n' {
                                    line += 1;
                                }
                                cur.push(c);
                            }
                        }
                    }
                    match chars.peek() {
                        None | Some(',') | Some('\n') | Some('\r') => {}
                        Some(c) => {
                            return Err(format!(
                                "{file}:{line}: '{c}' after a quoted field (expected a comma or the line's end)"
                            ))
                        }
                    }
                }
                Some(',') => {
                    fields.push(std::mem::take(&mut cur));
                    quoted_field = false;
                }
                Some('\r') if chars.peek() == Some(&'\n') => {}
                Some('\n') => {
                    fields.push(std::mem::take(&mut cur));
                    line += 1;
                    break;
                }
                Some(c) => cur.push(c),
            }
        }
        if !(fields.len() == 1 && fields[0].is_empty() && !quoted_field) {
            out.push((start, fields));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_keep_their_commas_and_quotes() {
        let c = Csv::parse(
            "t.csv",
            "flow1.cc,share\n\"ledbat:target=5ms,decrease_gain=10\",0.5\n\"a\"\"b\",\n",
        )
        .unwrap();
        assert_eq!(c.header, ["flow1.cc", "share"]);
        assert_eq!(
            c.rows,
            [
                vec![
                    "ledbat:target=5ms,decrease_gain=10".to_string(),
                    "0.5".into()
                ],
                vec!["a\"b".to_string(), String::new()],
            ]
        );
        assert_eq!(c.get(1, "share"), None);
        assert_eq!(c.get(0, "share"), Some("0.5"));
        assert_eq!(c.get(0, "nope"), None);
        assert_eq!(Csv::parse("t.csv", &c.to_text()).unwrap(), c);
    }

    #[test]
    fn malformed_files_name_the_line() {
        assert_eq!(
            Csv::parse("t.csv", "a,b\n1,2\n3\n").unwrap_err(),
            "t.csv:3: 1 fields where the header has 2"
        );
        assert_eq!(
            Csv::parse("t.csv", "a,b\n\"1,2\n").unwrap_err(),
            "t.csv:2: a quoted field is not closed"
        );
        assert_eq!(
            Csv::parse("t.csv", "a,a\n").unwrap_err(),
            "t.csv:1: column 'a' twice"
        );
        assert_eq!(
            Csv::parse("t.csv", "").unwrap_err(),
            "t.csv: empty (a CSV needs a header line)"
        );
        assert_eq!(
            Csv::parse("t.csv", "a\n\"x\"y\n").unwrap_err(),
            "t.csv:2: 'y' after a quoted field (expected a comma or the line's end)"
        );
    }
}
