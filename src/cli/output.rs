//! Writing command output: lines to stdout through one locked handle, with errors (a closed
//! pipe included) returned instead of panicking as `println!` would.

use std::io::Write;

/// Standard output for one command.
pub struct Out {
    inner: std::io::StdoutLock<'static>,
}

impl Out {
    pub fn new() -> Out {
        Out {
            inner: std::io::stdout().lock(),
        }
    }

    /// One line, flushed (so a reader of a pipe sees it at once).
    pub fn line(&mut self, text: impl AsRef<str>) -> std::io::Result<()> {
        self.inner.write_all(text.as_ref().as_bytes())?;
        self.inner.write_all(b"\n")?;
        self.inner.flush()
    }

    /// Text as it is, flushed.
    pub fn raw(&mut self, text: impl AsRef<str>) -> std::io::Result<()> {
        self.inner.write_all(text.as_ref().as_bytes())?;
        self.inner.flush()
    }
}
