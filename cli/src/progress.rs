//! Progress bars for transfers: bytes, rate and ETA on a terminal, nothing otherwise (a
//! bar redrawn into a pipe or a log file is noise; the JSON summary line says it all).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A byte-counting bar on stderr, hidden when stderr is not a terminal.
pub fn transfer_bar(total: u64, label: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template(
        "{msg} [{bar:32.cyan/blue}] {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(label.to_owned());
    bar
}

/// Prints a line above the bar (or plainly when the bar is hidden).
pub fn say(bar: &ProgressBar, line: &str) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}
