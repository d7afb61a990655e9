//! SVG line plots of cumulative data delivered over time (plotters, SVG backend: no fonts
//! or native libraries needed, and the file diffs as text in the repository).

use std::path::Path;

use plotters::prelude::*;

/// One line: a label and (seconds, MiB) points in time order.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Legend text.
    pub label: String,
    /// (x = seconds, y = cumulative MiB).
    pub points: Vec<(f64, f64)>,
}

/// Colours in curve order (bbr, cubic, legacy by default): distinguishable in print.
const COLOURS: [RGBColor; 5] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
];

/// Most points drawn per curve: a 64 MiB transfer has ~49 000 deliveries, and a line
/// through 1000 of them looks the same in an 800-pixel plot at a fiftieth of the file size.
const MAX_POINTS: usize = 1000;

/// Why a plot could not be drawn (plotters' errors are generic over the backend; we keep
/// their text).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PlotError(String);

fn err(e: impl std::fmt::Display) -> PlotError {
    PlotError(e.to_string())
}

/// Draws `curves` into an SVG at `path`.
pub fn plot_cumulative(path: &Path, title: &str, curves: &[Curve]) -> Result<(), PlotError> {
    let x_max = curves
        .iter()
        .filter_map(|c| c.points.last().map(|p| p.0))
        .fold(1.0f64, f64::max)
        * 1.02;
    let y_max = curves
        .iter()
        .filter_map(|c| c.points.last().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.05;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("seconds since the first data packet")
        .y_desc("MiB delivered")
        .draw()
        .map_err(err)?;
    for (i, curve) in curves.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let step = (curve.points.len() / MAX_POINTS).max(1);
        let mut points: Vec<(f64, f64)> = std::iter::once((0.0, 0.0))
            .chain(curve.points.iter().step_by(step).copied())
            .collect();
        if let Some(&last) = curve.points.last() {
            points.push(last);
        }
        chart
            .draw_series(LineSeries::new(points, colour.stroke_width(2)))
            .map_err(err)?
            .label(curve.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_an_svg_with_one_path_per_curve_and_its_legend() {
        let path =
            std::env::temp_dir().join(format!("rustox-plot-test-{}.svg", std::process::id()));
        let curves = vec![
            Curve {
                label: "fast".into(),
                points: (1..=50)
                    .map(|i| (f64::from(i), f64::from(i) * 2.0))
                    .collect(),
            },
            Curve {
                label: "slow".into(),
                points: (1..=50)
                    .map(|i| (f64::from(i), f64::from(i) * 0.5))
                    .collect(),
            },
        ];
        plot_cumulative(&path, "test", &curves).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(svg.starts_with("<svg"));
        assert!(
            svg.contains("fast") && svg.contains("slow"),
            "legend labels"
        );
        assert!(svg.matches("<polyline").count() >= 2);
    }
}
