//! Errors and warnings. Every message is one line and names the file (and,
//! where the input is at fault, the line in that file).

use std::fmt;
use std::path::{Path, PathBuf};

/// Something that stops a file from being read or analysed.
#[derive(Debug)]
pub enum Error {
    /// The file could not be opened (missing, unreadable, a directory...).
    Open {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Reading failed part-way (I/O error, not a format problem).
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file holds nothing but (possibly) whitespace.
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The file is not a qlog file, or a record in it is malformed.
    /// `line` is the 1-based line number in the file.
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line in the file.
        line: u64,
        /// What is wrong there, one line.
        message: String,
    },
    /// A bad argument (unit, window, option) given by the caller.
    Invalid(String),
    /// Writing an output (plot, report) failed.
    Output {
        /// The file that could not be written.
        path: PathBuf,
        /// Why, one line.
        message: String,
    },
}

impl Error {
    pub(crate) fn malformed(path: &Path, line: u64, message: impl Into<String>) -> Self {
        Error::Malformed {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// The file the error is about, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::Open { path, .. }
            | Error::Read { path, .. }
            | Error::Empty { path }
            | Error::Malformed { path, .. }
            | Error::Output { path, .. } => Some(path),
            Error::Invalid(_) => None,
        }
    }

    /// The 1-based line in the file the error is about, if known.
    pub fn line(&self) -> Option<u64> {
        match self {
            Error::Malformed { line, .. } => Some(*line),
            Error::Empty { .. } => Some(1),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Open { path, source } => {
                write!(
                    f,
                    "{}: cannot open: {}",
                    path.display(),
                    one_line(&source.to_string())
                )
            }
            Error::Read { path, source } => {
                write!(
                    f,
                    "{}: read error: {}",
                    path.display(),
                    one_line(&source.to_string())
                )
            }
            Error::Empty { path } => write!(f, "{}:1: empty file, not a qlog", path.display()),
            Error::Malformed {
                path,
                line,
                message,
            } => {
                write!(f, "{}:{}: {}", path.display(), line, one_line(message))
            }
            Error::Invalid(message) => write!(f, "{}", one_line(message)),
            Error::Output { path, message } => {
                write!(f, "{}: cannot write: {}", path.display(), one_line(message))
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Open { source, .. } | Error::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Something odd but survivable (a truncated last record, a file without a
/// wall-clock reference time...). The analysis goes on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Warning {
    /// The file the warning is about.
    pub path: PathBuf,
    /// 1-based line in the file, when the warning is about one.
    pub line: Option<u64>,
    /// What was odd, one line.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(
                f,
                "{}:{}: warning: {}",
                self.path.display(),
                line,
                self.message
            ),
            None => write!(f, "{}: warning: {}", self.path.display(), self.message),
        }
    }
}

/// Collapse a message onto one line (serde messages may quote input text).
fn one_line(s: &str) -> String {
    if s.contains(['\n', '\r']) {
        s.split(['\n', '\r'])
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        s.to_string()
    }
}

/// This crate's results: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;
