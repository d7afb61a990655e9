//! Markdown output.

use rustox_auto_tests::emulator::LatenessSummary;

use crate::runs::LinkFigures;

/// `x` with `digits` decimals, or a dash.
pub fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("–".into(), |v| format!("{v:.digits$}"))
}

/// Release or input lateness as `p50 / p99 / max (count ≥ 1 ms)`, µs.
pub fn lateness(l: &LatenessSummary) -> String {
    format!(
        "{} / {} / {} ({})",
        opt(l.p50_us, 0),
        opt(l.p99_us, 0),
        opt(l.max_us, 0),
        l.over_1ms
    )
}

/// The machine's idle CPU share during a run and its load average after it.
pub fn idle_and_load(l: &LinkFigures) -> String {
    format!("{} / {}", percent(l.cpu_idle), opt(l.load1, 1))
}

/// A fraction as a whole percentage, or a dash.
pub fn percent(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{:.0} %", v * 100.0))
}

/// A Markdown table with padded columns.
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|s| (*s).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn print(&self) {
        let width = |i: usize| {
            std::iter::once(&self.header)
                .chain(&self.rows)
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.header.len()).map(width).collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = widths
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let c = cells.get(i).map_or("", String::as_str);
                    format!("{c}{}", " ".repeat(w - c.chars().count()))
                })
                .collect();
            println!("| {} |", padded.join(" | "));
        };
        line(&self.header);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        println!("|-{}-|", rule.join("-|-"));
        for r in &self.rows {
            line(r);
        }
    }
}
