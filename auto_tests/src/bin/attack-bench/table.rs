//! The table: medians over a row's runs, its share of the unattacked baseline, the drop
//! reasons at the victim and each run's notes.

use crate::rows::{Row, Sample};

/// Drop reasons shown per row, largest first.
const TOP_DROP_REASONS: usize = 4;

/// The median of `values` (the mean of the middle two for an even count); `None` if empty.
fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.into_iter().collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => v.get(n / 2).copied(),
        _ => Some((v.get(n / 2 - 1)? + v.get(n / 2)?) / 2.0),
    }
}

impl Row {
    fn median_goodput(&self) -> Option<f64> {
        median(self.runs.iter().filter_map(|s| s.goodput_mbit))
    }

    fn all_byte_exact(&self) -> bool {
        !self.runs.is_empty() && self.runs.iter().all(|s| s.byte_exact)
    }

    /// The run whose goodput is the median (the lower middle for an even count); without
    /// any goodput, the last run.
    fn median_run(&self) -> Option<&Sample> {
        let mut with: Vec<&Sample> = self
            .runs
            .iter()
            .filter(|s| s.goodput_mbit.is_some())
            .collect();
        with.sort_by(|a, b| {
            a.goodput_mbit
                .unwrap_or(0.0)
                .total_cmp(&b.goodput_mbit.unwrap_or(0.0))
        });
        match with.len() {
            0 => self.runs.last(),
            n => with.get((n - 1) / 2).copied(),
        }
    }
}

pub fn print_table(rows: &[Row]) {
    let baseline = rows
        .iter()
        .find(|r| r.attack == "none")
        .filter(|r| r.all_byte_exact())
        .and_then(Row::median_goodput);
    let opt = |v: Option<f64>, prec: usize| v.map_or("-".into(), |x| format!("{x:.prec$}"));
    let max_f = |it: &mut dyn Iterator<Item = f64>| it.reduce(f64::max);
    println!();
    println!(
        "{:<17} {:>8} {:>9} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>10} {:>7} {:>13} {:>7}",
        "attack",
        "rate/s",
        "achieved",
        "cpu %",
        "wait %",
        "s-wait %",
        "rss MiB",
        "k-drops",
        "friends",
        "byte-exact",
        "Mbit/s",
        "min–max",
        "share %"
    );
    for r in rows {
        let goodput = r.median_goodput();
        let share = match (goodput, baseline) {
            (Some(g), Some(b)) if b > 0.0 && r.all_byte_exact() => Some(g / b * 100.0),
            _ => None,
        };
        let goodputs: Vec<f64> = r.runs.iter().filter_map(|s| s.goodput_mbit).collect();
        let range = match (
            goodputs.iter().copied().reduce(f64::min),
            goodputs.iter().copied().reduce(f64::max),
        ) {
            (Some(lo), Some(hi)) => format!("{lo:.1}–{hi:.1}"),
            _ => "-".into(),
        };
        let exact = r.runs.iter().filter(|s| s.byte_exact).count();
        println!(
            "{:<17} {:>8} {:>9} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>10} {:>7} {:>13} {:>7}",
            r.attack,
            r.offered,
            opt(median(r.runs.iter().filter_map(|s| s.achieved)), 0),
            opt(median(r.runs.iter().filter_map(|s| s.cpu_percent)), 1),
            opt(
                median(r.runs.iter().filter_map(|s| s.victim_wait_percent)),
                1
            ),
            opt(
                median(r.runs.iter().filter_map(|s| s.sender_wait_percent)),
                1
            ),
            opt(max_f(&mut r.runs.iter().filter_map(|s| s.peak_rss_mib)), 1),
            r.runs
                .iter()
                .filter_map(|s| s.kernel_drops)
                .max()
                .map_or("-".into(), |d| d.to_string()),
            r.runs.iter().map(|s| s.friends_added).max().unwrap_or(0),
            match exact {
                _ if r.all_byte_exact() => "yes".to_owned(),
                0 => "no".to_owned(),
                k => format!("{k}/{}", r.runs.len()),
            },
            opt(goodput, 1),
            range,
            opt(share, 1),
        );
    }
    println!();
    println!("top drop reasons at the victim (RUSTOX_TRACE_STATS, whole row, median run):");
    for r in rows {
        let top: Vec<String> = r
            .median_run()
            .map(|s| {
                s.drops
                    .iter()
                    .take(TOP_DROP_REASONS)
                    .map(|(name, n)| format!("{name} {n}"))
                    .collect()
            })
            .unwrap_or_default();
        println!(
            "{:<17} {:>8}  {}",
            r.attack,
            r.offered,
            if top.is_empty() {
                "-".to_owned()
            } else {
                top.join(", ")
            }
        );
    }
    // Each distinct note once per row, with the runs it came from.
    let mut notes: Vec<(&str, &str, &str, Vec<usize>)> = Vec::new();
    for r in rows {
        for (i, s) in r.runs.iter().enumerate() {
            for n in &s.notes {
                match notes
                    .iter_mut()
                    .find(|(a, o, t, _)| *a == r.attack && *o == r.offered && *t == n.as_str())
                {
                    Some((_, _, _, runs)) => runs.push(i + 1),
                    None => notes.push((&r.attack, &r.offered, n, vec![i + 1])),
                }
            }
        }
    }
    if !notes.is_empty() {
        println!();
        for (attack, rate, note, runs) in notes {
            let runs: Vec<String> = runs.iter().map(usize::to_string).collect();
            println!("{attack} @ {rate} (run {}): {note}", runs.join(","));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median([3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median([4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median([]), None);
    }
}
