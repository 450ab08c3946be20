//! The template of a column's cell (docs/lbe-lab.md, "Tables in docs/
//! from data"): text, `{COL}`, `{A*B}`, `{COL:N}`, `{LO..HI}` and
//! `{seed.COL}`; its
//! one parser, for the description's check (`spec.rs`) and the rendering
//! (`render.rs`).

/// A piece of a column's template.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Text(String),
    /// `{A}` or `{A*B}` (columns of `NAME.csv`, multiplied), `{A:N}` with
    /// N decimals.
    Data {
        factors: Vec<String>,
        decimals: Option<usize>,
    },
    /// `{LO..HI}` (`{LO..HI:N}`): two columns of `NAME.csv` as a range,
    /// `LO–HI`, or one number when both show the same.
    Range {
        lo: String,
        hi: String,
        decimals: Option<usize>,
    },
    /// `{seed.COL}`: a column of `NAME.seed.csv`, verbatim.
    Seed(String),
}

/// The pieces of template `t`.
pub fn placeholders(t: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Text(rest[..open].to_string()));
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("'{{' without its '}}' in '{t}'"))?;
        let inner = after[..close].trim();
        if inner.is_empty() {
            return Err(format!("an empty '{{}}' in '{t}'"));
        }
        if let Some(col) = inner.strip_prefix("seed.") {
            parts.push(Part::Seed(col.to_string()));
        } else {
            let (expr, decimals) = match inner.rsplit_once(':') {
                Some((e, d)) => (
                    e,
                    Some(d.trim().parse::<usize>().map_err(|_| {
                        format!("'{{{inner}}}': decimals after ':' must be a whole number")
                    })?),
                ),
                None => (inner, None),
            };
            if let Some((lo, hi)) = expr.split_once("..") {
                let (lo, hi) = (lo.trim(), hi.trim());
                if [lo, hi]
                    .iter()
                    .any(|c| c.is_empty() || c.contains('*') || c.contains(".."))
                {
                    return Err(format!(
                        "'{{{inner}}}': a range is two columns, '{{LO..HI}}'"
                    ));
                }
                parts.push(Part::Range {
                    lo: lo.to_string(),
                    hi: hi.to_string(),
                    decimals,
                });
                rest = &after[close + 1..];
                continue;
            }
            let factors: Vec<String> = expr.split('*').map(|f| f.trim().to_string()).collect();
            if factors.iter().any(String::is_empty) {
                return Err(format!("'{{{inner}}}': an empty factor"));
            }
            parts.push(Part::Data { factors, decimals });
        }
        rest = &after[close + 1..];
    }
    if rest.contains('}') {
        return Err(format!("'}}' without its '{{' in '{t}'"));
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest.to_string()));
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_split_into_text_data_and_seed_parts() {
        assert_eq!(
            placeholders("{a*b:2} / {seed.x} %").unwrap(),
            [
                Part::Data {
                    factors: vec!["a".into(), "b".into()],
                    decimals: Some(2)
                },
                Part::Text(" / ".into()),
                Part::Seed("x".into()),
                Part::Text(" %".into()),
            ]
        );
        assert_eq!(
            placeholders("{a:x}").unwrap_err(),
            "'{a:x}': decimals after ':' must be a whole number"
        );
        assert_eq!(
            placeholders("a}").unwrap_err(),
            "'}' without its '{' in 'a}'"
        );
        assert_eq!(placeholders("{ }").unwrap_err(), "an empty '{}' in '{ }'");
        assert_eq!(
            placeholders("{a**b}").unwrap_err(),
            "'{a**b}': an empty factor"
        );
        assert_eq!(
            placeholders("{u.min@full..u.max@full:3} x").unwrap(),
            [
                Part::Range {
                    lo: "u.min@full".into(),
                    hi: "u.max@full".into(),
                    decimals: Some(3)
                },
                Part::Text(" x".into()),
            ]
        );
        for bad in ["{a..}", "{..b}", "{a*b..c}", "{a..b..c}"] {
            assert_eq!(
                placeholders(bad).unwrap_err(),
                format!("'{bad}': a range is two columns, '{{LO..HI}}'")
            );
        }
    }
}
