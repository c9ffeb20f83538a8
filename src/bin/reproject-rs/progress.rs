//! A progress bar on stderr that appears only for work lasting more than about a second, and
//! never when stderr is not a terminal or with `--quiet`.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before its bar is drawn.
const DELAY: Duration = Duration::from_secs(1);

/// Set once any bar has been drawn, so an error message can start on a clean line.
static DRAWN: AtomicBool = AtomicBool::new(false);

/// A counter of finished work items, drawn as a bar once the work has lasted [`DELAY`].
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    enabled: bool,
    shown: AtomicBool,
}

impl Progress {
    /// A bar over `total` items labelled `what`; `quiet` (or a stderr that is not a terminal)
    /// keeps it hidden.
    pub fn new(total: u64, what: &str, quiet: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template(
            "{msg} [{elapsed_precise}] {wide_bar:.cyan/blue} {pos}/{len} blocks, eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(what.to_string());
        Progress {
            bar,
            start: Instant::now(),
            enabled: !quiet && std::io::stderr().is_terminal(),
            shown: AtomicBool::new(false),
        }
    }

    /// Counts `n` finished items; draws the bar from now on if the work has lasted long
    /// enough.
    pub fn inc(&self, n: u64) {
        self.show_if_due();
        self.bar.inc(n);
    }

    /// Sets the number of finished items (for work counted elsewhere, e.g. by worker
    /// processes).
    pub fn set(&self, done: u64) {
        self.show_if_due();
        self.bar.set_position(done);
    }

    /// Sets the number of items (for work whose size is known only once it starts).
    pub fn set_length(&self, total: u64) {
        self.bar.set_length(total);
    }

    /// Draws the bar from now on if the work has lasted long enough.
    fn show_if_due(&self) {
        if self.enabled
            && !self.shown.load(Ordering::Relaxed)
            && self.start.elapsed() >= DELAY
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            DRAWN.store(true, Ordering::Relaxed);
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Clears the current terminal line if a bar may have been left on it.
pub fn clear_line() {
    if DRAWN.load(Ordering::Relaxed) && std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
}
